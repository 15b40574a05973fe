"""How long the window takes to appear, from the process's start (imports included): `main.py --screenshot`,
run N times in a row, each printing "window shown X s". A speed, so a benchmark and not a test (the suite
checks that the window appears and that it never waits for the lanes' probes, tests/gui/test_app.py).
Prints each time, the median, and the machine's load beside them: a figure from a loaded machine says so.
Each run keeps its compiled modules (PYTHONDONTWRITEBYTECODE cleared), as `make run` launches the window.
Run: .venv/bin/python benchmarks/window_start.py [--runs 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shown_once(home: str, picture: Path) -> float:
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "--screenshot", str(picture), "--after", "0.2"],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "CROSSOVER_HOME": home, "QT_QPA_PLATFORM": "offscreen",
                              "PYTHONDONTWRITEBYTECODE": ""})
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return float(out.stderr.split("window shown ")[1].split(" s")[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times = []
    with tempfile.TemporaryDirectory() as home:
        for i in range(args.runs):
            load = os.getloadavg()[0]
            times.append(shown_once(home, Path(home) / f"w{i}.png"))
            print(f"run {i + 1}: window shown {times[-1]:.2f} s after the process started (load {load:.2f} "
                  f"on {os.cpu_count()} cores)")
    print(f"median {statistics.median(times):.2f} s over {len(times)} runs (the first pays a cold disk cache)")


if __name__ == "__main__":
    main()
