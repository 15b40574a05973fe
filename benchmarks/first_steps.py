"""The first demo's waits, as a lecturer meets them: launch → opening card and window shown, Start → each lane's
first batch drawn, and a width typed mid-run → both lanes' point at it on the map.

    python benchmarks/first_steps.py [--reps 2] [--width 1024] [--start shown|ready]

Each repetition is a fresh process (a fresh CROSSOVER_HOME: no compiled cache, no remembered state), the real window
offscreen at 1600×1000 on its defaults (cpu and cpu1 taking turns on a machine without a GPU; synthetic data where
MNIST is not on disk). "Shown" counts from the process's start (its imports included). With --start shown, Start is
pressed as soon as the window is shown: the lanes, pre-started while the window opens, may still be loading
TensorFlow, and the summary says so. With --start ready, as a lecturer who speaks a moment first: once every lane
has loaded its framework (the seconds from launch are printed too). A point is the map's (provisional while it measures: 10 steady batches a lane). Prints each figure
and the load beside it; a figure from a busy machine says so.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def once(width: int, start: str) -> dict[str, float]:
    """One fresh process's figures, measured inside it (this file run with --inside)."""
    home = tempfile.mkdtemp(prefix="crossover-first-steps-")
    out = subprocess.run([sys.executable, __file__, "--inside", "--width", str(width), "--start", start],
                         capture_output=True,
                         text=True, timeout=600, env={**os.environ, "CROSSOVER_HOME": home,
                                                      "QT_QPA_PLATFORM": "offscreen",
                                                      "PYTHONDONTWRITEBYTECODE": ""})
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def inside(width: int, start_at: str) -> int:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    # as main.py shows it: before the plots' library loads; the process's age by the boot clock, as main.py says it
    from crossover_lab.gui.app import opening_card, seconds_since_process_start as age

    card = opening_card()
    card_s = age()
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(offer_recovery=False)
    window.resize(1600, 1000)
    window.show()
    card.close()
    app.processEvents()
    figures = {"card_s": card_s, "shown_s": age()}

    def spin(done, timeout: float) -> bool:
        end, loop = time.monotonic() + timeout, QEventLoop()
        while not done() and time.monotonic() < end:
            QTimer.singleShot(10, loop.quit)
            loop.exec()
        return done()

    spin(lambda: bool(window.side.lanes_panel.selected_specs()), 60)
    if start_at == "ready":
        lanes = [window.controller.pool.get(spec) for spec in window.side.lanes_panel.selected_specs()]
        def up() -> bool:  # an idle lane's "up" is read from what it sent: read it, as a run's thread would
            for lane in lanes:
                if not lane.up:
                    lane.poll(0.0)
            return all(lane.up for lane in lanes)

        if not spin(up, 180):
            raise SystemExit("the lanes did not come up within 180 s")
        figures["ready_s"] = age()
    start = time.monotonic()
    window.desk.start_when_ready()  # F5 as soon as there are lanes to start
    seen: dict[str, float] = {}

    def drawn() -> bool:
        for lane, n in window.compare.plot.points_drawn(warmup=True).items():
            if n and lane not in seen:
                seen[lane] = time.monotonic() - start
        return len(seen) >= 2

    spin(drawn, 180)
    for i, (lane, s) in enumerate(sorted(seen.items(), key=lambda item: item[1])):
        figures[f"start_to_lane{i + 1}_s"] = s
    typed = time.monotonic()
    window.side.model_panel.widths.spins[0].setValue(width)

    def pointed() -> bool:
        return {p.lane for p in window.compare.map.map_points() if p.point.width == width} >= {"cpu", "cpu1"}

    if spin(pointed, 180):
        figures["typed_to_point_s"] = time.monotonic() - typed
    window.desk.stop()
    spin(lambda: not window.controller.running, 30)
    window.close()
    print(json.dumps(figures))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--start", choices=("shown", "ready"), default="shown",
                        help="press Start as the window is shown, or once every lane has loaded its framework")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        return inside(args.width, args.start)
    for rep in range(args.reps):
        load = os.getloadavg()[0]
        f = once(args.width, args.start)
        ready = f" lanes ready {f['ready_s']:.1f} s after launch, then" if "ready_s" in f else ""
        print(f"run {rep + 1} (load {load:.1f} at its start): opening card {f['card_s']:.2f} s, window shown "
              f"{f['shown_s']:.2f} s after launch;{ready} Start → first lane drawn {f.get('start_to_lane1_s', float('nan')):.1f} s, second "
              f"{f.get('start_to_lane2_s', float('nan')):.1f} s; width {args.width} typed → both lanes' point "
              f"{f.get('typed_to_point_s', float('nan')):.1f} s", flush=True)
    print(f"load at the end {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
