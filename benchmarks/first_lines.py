"""How soon both lines show after Start, on the window's defaults: from Start to each lane's first drawn point.

    python benchmarks/first_lines.py [--reps 3]

The real window (offscreen), its default model and lanes (cpu and cpu1, taking turns on a 2-core machine). The
lanes are started and imported first, as a window that has been open a few seconds has them; each repetition
presses Start, times until the plot's redraw holds a point of each lane (warm-up or not: that is when a class
sees the line), then stops. The first start of a window also makes its data and traces the model; later starts
find them ready. Prints each start's two times, then the median time to the second line.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-bench-"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    app.setApplicationName("Crossover benchmark")
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(offer_recovery=False)
    window.resize(1600, 1000)
    window.show()

    def spin(done, timeout: float) -> None:
        end, loop = time.monotonic() + timeout, QEventLoop()
        while not done() and time.monotonic() < end:
            QTimer.singleShot(10, loop.quit)
            loop.exec()

    spin(lambda: bool(window.side.lanes_panel.selected_specs()), 60)
    spin(lambda: bool(window.controller.pool.lanes()) and all(lane.up for lane in window.controller.pool.lanes()), 120)
    spin(lambda: False, 2.0)
    seconds: list[float] = []
    try:
        for rep in range(args.reps):
            start = time.monotonic()
            window.desk.start_run()
            seen: dict[str, float] = {}

            def both() -> bool:
                for lane, n in window.compare.plot.points_drawn(warmup=True).items():
                    if n and lane not in seen:
                        seen[lane] = time.monotonic() - start
                return len(seen) >= 2

            spin(both, 120)
            order = sorted(seen.items(), key=lambda item: item[1])
            print(f"start {rep + 1}: " + ", ".join(f"{lane} drawn after {s:.2f} s" for lane, s in order))
            if len(order) == 2:
                seconds.append(order[1][1])
            window.desk.stop()
            spin(lambda: not window.controller.running, 30)
            spin(lambda: False, 1.0)
    finally:
        window.close()
    print(f"first_lines_second_lane_s={statistics.median(seconds):.2f}" if seconds else "no start drew both lines")
    return 0 if seconds else 1


if __name__ == "__main__":
    sys.exit(main())
