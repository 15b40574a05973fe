"""How late is the window's event loop during a run? A 20 ms precise QTimer's lateness, p99.

    python benchmarks/event_loop_lag.py [--lanes cpu,cpu1] [--widths 512] [--samples 60000] [--epochs 2]

The run is what a demo does: lanes side by side, drawn live. Lateness = (time between two
timeouts) - 20 ms, sampled from the Start until the run has finished; the lanes' first run (the
framework import) is done beforehand so the figure is about drawing, not start-up. Target p99 < 50 ms.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-bench-"))

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec, parse_lanes, parse_widths

INTERVAL_MS = 20


def run_and_wait(window, config: RunConfig, specs: list) -> None:
    loop = QEventLoop()
    window.controller.run_finished.connect(loop.quit)
    window.controller.run_failed.connect(loop.quit)
    window.controller.start_run(config, specs, Schedule.SIDE_BY_SIDE)
    loop.exec()
    window.controller.run_finished.disconnect(loop.quit)
    window.controller.run_failed.disconnect(loop.quit)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", default="cpu,cpu1")
    parser.add_argument("--widths", default="512")
    parser.add_argument("--samples", type=int, default=60000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    specs = list(parse_lanes(args.lanes))
    config = RunConfig(ModelSpec(parse_widths(args.widths)),
                       TrainSpec(batch_size=128, epochs=args.epochs, data="synthetic", samples=args.samples))
    warmup = RunConfig(config.model, TrainSpec(batch_size=128, epochs=1, data="synthetic", samples=2000))
    app = QApplication([])
    app.setApplicationName("Crossover benchmark")
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False, discover_fn=lambda pool, stop: [])
    window.resize(1440, 900)
    window.show()
    try:
        run_and_wait(window, warmup, specs)
        ticks: list[float] = []
        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.setInterval(INTERVAL_MS)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        timer.start()
        run_and_wait(window, config, specs)
        timer.stop()
        result = window.controller.runs[-1]
    finally:
        window.close()
    lateness = np.diff(ticks) * 1000.0 - INTERVAL_MS
    batches = sum(len(lane.records) for lane in result.lanes.values())
    print(f"model {config.model.label()}, lanes {args.lanes} side by side, {batches} batches drawn live "
          f"over {ticks[-1] - ticks[0]:.1f} s; {lateness.size} ticks of a {INTERVAL_MS} ms timer")
    print(f"lateness ms: median {np.median(lateness):.2f}, p90 {np.percentile(lateness, 90):.2f}, "
          f"p99 {np.percentile(lateness, 99):.2f}, max {lateness.max():.2f}")
    print(f"event_loop_lag_p99_ms={np.percentile(lateness, 99):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
