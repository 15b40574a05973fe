"""Peak memory of `main.py analyze` on a 200 MB sweep CSV (the issue measured 5.0 GB before it streamed).

Generates a sweep file of the documented columns (10 lanes, widths 16-16,384, smooth cost models
with 3% noise, re-measured widths included), runs `analyze --json` on it in a child process, and
prints the child's peak resident memory last (target < 1 GB). With --files 2 it analyzes the file and a
copy of it together (lanes named LABEL/LANE, as for sweeps of several machines).
Run: .venv/bin/python benchmarks/analyze_memory.py [--mb 200] [--files 2]
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from crossover_lab.core.files.sweeps.rows import COLUMNS

ROOT = Path(__file__).resolve().parent.parent


def generate(path: Path, megabytes: float, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    lanes = [(f"lane{i}", 0.05 * (i + 1), 50.0 * (i + 1) ** 2) for i in range(10)]  # overhead ms, GFLOP/s
    target = megabytes * 1e6
    rows = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(COLUMNS) + "\n")
        while fh.tell() < target:
            widths = rng.integers(16, 16385, 20_000)
            for lane, overhead, gflops in lanes:
                flops = 6.0 * 784 * widths * 128
                ms = (overhead + flops / (gflops * 1e6)) * np.exp(rng.normal(0, 0.03, widths.size))
                for w, f, m in zip(widths, flops, ms):
                    fh.write(f"{lane},CPU (synthetic),{w},{w * 795},{int(f)},128,{m:.6g},{m * 0.95:.6g},"
                             f"{m * 1.05:.6g},60,{m * 0.01:.6g},1,tensorflow,{128000 / m:.6g},{f / m / 1e6:.6g},"
                             f",,0.5,completed,False,1,host,False,base,20260101-000000-0000,\n")
                rows += widths.size
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--files", type=int, default=1, help="analyze this many copies of the file together")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big-sweep.csv"
        t0 = time.monotonic()
        rows = generate(path, args.mb)
        size = path.stat().st_size / 1e6
        print(f"generated {path.name}: {size:.0f} MB, {rows:,} rows in {time.monotonic() - t0:.1f} s")
        t0 = time.monotonic()
        paths = [path] + [Path(folder) / f"copy{i}.csv" for i in range(1, args.files)]
        for copy in paths[1:]:
            shutil.copyfile(path, copy)
        out = subprocess.run([sys.executable, str(ROOT / "main.py"), "analyze", *map(str, paths), "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        took = time.monotonic() - t0
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
        print(f"analyze of {len(paths)} file(s) exit {out.returncode} in {took:.1f} s; {out.stderr.strip()[:300]}")
        print(f"analyze_peak_mb={peak_mb:.0f}")


if __name__ == "__main__":
    main()
