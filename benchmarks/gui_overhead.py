"""Does the window slow training down? The same run headless and in the window (offscreen), alternated.

    python benchmarks/gui_overhead.py [--rounds 5] [--lanes cpu,cpu1] [--widths 256] [--samples 60000]

Runs are one lane after another (exact figures), each lane's first run in a pool is a warm-up
and not counted. Per lane and mode, the median of the runs' median ms per batch; the ratio is
window / headless per lane, and the figure printed last is the largest of them (target <= 1.10).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-bench-"))

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec, parse_lanes, parse_widths
from crossover_lab.core.engine.pool import LanePool, run_comparison
from crossover_lab.core.results import RunResult

SPREAD_WARNING = 0.10  # (max - min) / median of a lane's runs above this: warn, as pyperf does


def medians(result: RunResult) -> dict[str, float]:
    out = {}
    for name, lane in result.lanes.items():
        if lane.summary is None or lane.status != "completed":
            raise SystemExit(f"{name} did not complete: {lane.failure or lane.status}")
        out[name] = lane.summary.median_ms
    return out


def run_in_window(window, config: RunConfig, specs: list) -> RunResult:
    """Start the run as the Start button does and wait in a Qt event loop, as the app's main loop would."""
    loop = QEventLoop()
    window.controller.run_finished.connect(loop.quit)
    window.controller.run_failed.connect(loop.quit)
    window.controller.start_run(config, specs, Schedule.SEQUENTIAL)
    loop.exec()
    window.controller.run_finished.disconnect(loop.quit)
    window.controller.run_failed.disconnect(loop.quit)
    return window.controller.runs[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lanes", default="cpu,cpu1")
    parser.add_argument("--widths", default="256")
    parser.add_argument("--samples", type=int, default=60000)
    args = parser.parse_args()
    specs = list(parse_lanes(args.lanes))
    config = RunConfig(ModelSpec(parse_widths(args.widths)),
                       TrainSpec(batch_size=128, epochs=1, data="synthetic", samples=args.samples))
    app = QApplication([])
    app.setApplicationName("Crossover benchmark")
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False, discover_fn=lambda pool, stop: [])
    window.resize(1440, 900)
    window.show()
    pool = LanePool()
    samples: dict[str, dict[str, list[float]]] = {"headless": {}, "window": {}}
    try:
        medians(run_comparison(pool, specs, config, schedule=Schedule.SEQUENTIAL))  # warm-ups
        medians(run_in_window(window, config, specs))
        for i in range(args.rounds):
            for mode in ("headless", "window") if i % 2 == 0 else ("window", "headless"):
                result = (run_comparison(pool, specs, config, schedule=Schedule.SEQUENTIAL) if mode == "headless"
                          else run_in_window(window, config, specs))
                for lane, ms in medians(result).items():
                    samples[mode].setdefault(lane, []).append(ms)
    finally:
        pool.close()
        window.close()
    ratios, unstable = [], []
    print(f"model {config.model.label()}, batch 128, {args.samples} samples, lanes {args.lanes}, "
          f"{args.rounds} rounds, one lane after another")
    for lane in samples["headless"]:
        headless = statistics.median(samples["headless"][lane])
        in_window = statistics.median(samples["window"][lane])
        ratios.append(in_window / headless)
        runs = {mode: ", ".join(f"{ms:.3f}" for ms in samples[mode][lane]) for mode in samples}
        print(f"{lane}: headless {headless:.3f} ms/batch [{runs['headless']}], "
              f"window {in_window:.3f} ms/batch [{runs['window']}], ratio {ratios[-1]:.3f}")
        for mode, median in (("headless", headless), ("window", in_window)):
            spread = (max(samples[mode][lane]) - min(samples[mode][lane])) / median
            if spread > SPREAD_WARNING:
                unstable.append(f"{lane} {mode} runs spread {100 * spread:.0f}%")
    if unstable:
        print("warning: this result may be unstable (" + "; ".join(unstable) + "): the run-to-run noise "
              "is as large as the effect measured; close other programs or raise --rounds")
    print(f"gui_overhead_ratio={max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
