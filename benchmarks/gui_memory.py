"""Does the window leak? The GUI process's resident memory after 1 run and after 20 more.

    python benchmarks/gui_memory.py [--runs 20] [--lanes cpu,cpu1] [--widths 64] [--samples 4000]

Each run is drawn live, lands in the history, the map and the autosave folder, as in use. The
growth counts the GUI process only (lanes are other processes); it includes the history the
user keeps on purpose (every record of every run), which is reported apart. Target < 50 MB.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-bench-"))

import psutil
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec, parse_lanes, parse_widths

RECORD_BYTES = 500  # a BatchTiming kept in the history, as unpickled from a lane (measured with tracemalloc)


def run_and_wait(app: QApplication, window, config: RunConfig, specs: list) -> None:
    loop = QEventLoop()
    window.controller.run_finished.connect(loop.quit)
    window.controller.run_failed.connect(loop.quit)
    window.controller.start_run(config, specs, Schedule.SIDE_BY_SIDE)
    loop.exec()
    window.controller.run_finished.disconnect(loop.quit)
    window.controller.run_failed.disconnect(loop.quit)
    for _ in range(3):  # let deleteLater() and the summary's last timer tick happen
        app.processEvents()


def rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--lanes", default="cpu,cpu1")
    parser.add_argument("--widths", default="64")
    parser.add_argument("--samples", type=int, default=4000)
    args = parser.parse_args()
    specs = list(parse_lanes(args.lanes))
    base = TrainSpec(batch_size=64, epochs=1, data="synthetic", samples=args.samples)
    app = QApplication([])
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False, discover_fn=lambda pool, stop: [])
    window.resize(1440, 900)
    window.show()
    try:
        widths = parse_widths(args.widths)
        run_and_wait(app, window, RunConfig(ModelSpec(widths), base), specs)
        start = rss_mb()
        for i in range(args.runs):
            # Different sizes, as a user exploring with the slider: the map grows too.
            config = RunConfig(ModelSpec(tuple(w * (1 + i % 4) for w in widths)), base)
            run_and_wait(app, window, config, specs)
            if (i + 1) % 5 == 0:
                print(f"after {i + 1 + 1} runs: {rss_mb():.1f} MB", flush=True)
        end = rss_mb()
        records = sum(len(lane.records) for run in window.controller.runs for lane in run.lanes.values())
        failed = [run.run_id for run in window.controller.runs
                  if any(lane.status != "completed" for lane in run.lanes.values())]
    finally:
        window.close()
    if failed:
        print(f"warning: {len(failed)} runs did not complete on every lane")
    kept = records * RECORD_BYTES / 2**20
    print(f"{args.runs} runs after the first, lanes {args.lanes}: RSS {start:.1f} MB -> {end:.1f} MB; "
          f"the history holds {records} records (about {kept:.1f} MB, kept on purpose)")
    print(f"gui_memory_growth_mb={end - start:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
