"""What a default sweep costs here, and how repeatable its cost model is.

Runs the default 6-point, 2-lane sweep twice in one process (lanes reused) and prints the wall
time of the first (target < 120 s on the 2-core dev machine) and, per lane, the ratio of the
fitted fixed overhead between the two sweeps (target 0.8-1.25).
Run: .venv/bin/python benchmarks/sweep_cost.py [--lanes cpu,cpu1]
"""
from __future__ import annotations

import argparse
import math
import time

from crossover_lab.core.analysis.crossings import analyze_points
from crossover_lab.core.config import RunConfig, parse_lanes
from crossover_lab.core.engine.pool import LanePool
from crossover_lab.core.study.sweep import SweepSpec, log_widths, run_sweeps
from crossover_lab.core.files.sweeps.rows import group_rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="cpu,cpu1")
    args = parser.parse_args()
    lanes = parse_lanes(args.lanes)
    spec = SweepSpec(widths=log_widths(16, 4096, 6), layers=2, base=RunConfig())
    pool = LanePool()
    walls, fits = [], []
    try:
        for _ in range(2):
            t0 = time.monotonic()
            (result,) = run_sweeps(pool, lanes, [spec])
            walls.append(time.monotonic() - t0)
            fits.append(analyze_points(next(iter(group_rows(result.rows).values()), [])).lanes)
    finally:
        pool.close()
    print(f"widths {spec.widths}, {spec.layers} layers, lanes {args.lanes}; walls {walls[0]:.1f} s, {walls[1]:.1f} s "
          f"(each with its closest point measured twice)")
    ratios = {}
    for lane, first in fits[0].items():
        a, b = first.fit, fits[1][lane].fit if lane in fits[1] else None
        if a is None or b is None:
            print(f"{lane}: no cost model in both sweeps")
            continue
        print(f"{lane}: overhead {a.overhead_ms:.3f} → {b.overhead_ms:.3f} ms, {a.gflops:.0f} → {b.gflops:.0f} GFLOP/s")
        ratios[lane] = b.overhead_ms / a.overhead_ms if a.overhead_ms else math.nan
    print("overhead_ratio_repeat=" + ",".join(f"{lane}:{r:.2f}" for lane, r in ratios.items()))
    print(f"sweep_wall_s={walls[0]:.1f}")


if __name__ == "__main__":
    main()
