"""What measuring the closest point twice costs a sweep, and what it changes in the answer.

Runs the same sweep with the recheck on and off (core/study/sweep.py rechecks), alternating which goes first,
in one process with the lanes reused, and prints per pair the wall times, their ratio (on / off), each sweep's
verdict by the one rule, and the run-to-run scatter the recheck found; the load average before each pair.
Run: .venv/bin/python benchmarks/recheck_cost.py [--lanes cpu,cpu1] [--pairs 2] [--seconds-per-point 1]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import time

from crossover_lab.core.config import RunConfig, parse_lanes
from crossover_lab.core.engine.pool import LanePool
from crossover_lab.core.study.sweep import SweepResult, SweepSpec, log_widths, run_sweeps
from crossover_lab.core.words.sweep import describe_pair
from crossover_lab.core.words.verdict import scatter


def timed(pool: LanePool, lanes, spec: SweepSpec) -> tuple[float, SweepResult]:
    t0 = time.monotonic()
    (result,) = run_sweeps(pool, lanes, [spec])
    return time.monotonic() - t0, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="cpu,cpu1")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--seconds-per-point", type=float, default=1.0)
    args = parser.parse_args()
    lanes = parse_lanes(args.lanes)
    a, b = lanes[0].name, lanes[1].name
    on = SweepSpec(widths=log_widths(16, 4096, 6), layers=args.layers, base=RunConfig(),
                   seconds_per_point=args.seconds_per_point, calibrate=False)
    off = dataclasses.replace(on, recheck=False)
    pool = LanePool()
    ratios = []
    try:
        pool.ready(lanes, data_of=on.points()[0])
        for pair in range(args.pairs):
            print(f"pair {pair + 1}: load average {os.getloadavg()[0]:.2f}", flush=True)
            order = [("on", on), ("off", off)] if pair % 2 else [("off", off), ("on", on)]
            walls = {}
            for name, spec in order:
                wall, result = timed(pool, lanes, spec)
                walls[name] = wall
                twice = [r for r in result.rows if r.runs > 1]
                found = ", ".join(f"{r.lane} at {r.width} {scatter(r.between_runs)}" for r in twice) or "–"
                print(f"  recheck {name:>3}: {wall:5.1f} s; runs scattered: {found}")
                print(f"    {describe_pair([r.point() for r in result.rows], a, b)}", flush=True)
            ratios.append(walls["on"] / walls["off"])
            print(f"  wall on/off = {ratios[-1]:.2f}", flush=True)
    finally:
        pool.close()
    print(f"widths {on.widths}, {on.layers} layer(s), {on.seconds_per_point:g} s per point, lanes {args.lanes}")
    print("recheck_wall_ratio=" + ",".join(f"{r:.2f}" for r in ratios))


if __name__ == "__main__":
    main()
