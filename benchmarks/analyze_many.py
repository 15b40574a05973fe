"""Time and output of `main.py analyze` on many sweep files (issue 56 item 9: 10 files took 7.7 s, 40 files 68 s and
1.5 MB of text, 80 files 4 min 22 s and 6 MB, every lane pair judged, bootstrapped and said in prose).

Builds N files from docs/results/cpu-2026-12-03/sweep.csv (two lanes, five widths) in a temporary folder, each
without its sidecar (so each is a machine of its own, its lanes FILE/cpu and FILE/cpu1), its times scaled by a few
percent per file so that some lane leads, and runs `analyze` on them in a child process, as a user would: text,
then --json. Prints, per N, the seconds, the bytes written and the seconds per file (target for 40 files: under
20 s and 100 KB of text).
Run: .venv/bin/python benchmarks/analyze_many.py [--files 10,40,80]
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "docs" / "results" / "cpu-2026-12-03" / "sweep.csv"
TIMES = ("median_ms", "p10_ms", "p90_ms", "mad_ms", "mean_wall_ms")


def build(folder: Path, n: int) -> list[str]:
    """N copies of the docs' sweep, file i's times scaled by 1 + 0.2·(i·7 mod N)/N (no two alike, none in order)."""
    with open(SOURCE, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    paths = []
    for i in range(n):
        scale = 1 + 0.2 * ((i * 7) % n) / n
        path = folder / f"sweep{i:03d}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fields)
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, **{k: f"{float(row[k]) * scale:.6g}" for k in TIMES if row[k]}})
        paths.append(str(path))
    return paths


def analyze(paths: list[str], *extra: str) -> tuple[float, int, int]:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "analyze", *paths, *extra],
                         capture_output=True, timeout=3600)
    return time.monotonic() - t0, len(out.stdout), out.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", default="10,40,80", help="comma-separated counts of files")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for n in (int(x) for x in args.files.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            paths = build(Path(folder), n)
            took, size, code = analyze(paths)
            took_json, size_json, code_json = analyze(paths, "--json")
        print(f"{n:3d} files ({2 * n} lanes, {n * (2 * n - 1):,} pairs): text {took:5.1f} s {size / 1e3:7.1f} KB "
              f"(exit {code}), json {took_json:5.1f} s {size_json / 1e3:7.1f} KB (exit {code_json}); "
              f"{took / n:.3f} s per file")


if __name__ == "__main__":
    main()
