"""How long a run waits for its lane: a fresh lane (process start + framework import) against a reused one.

Prints the time from asking for a run to its first steady (non-warm-up) batch, for each.
Run: .venv/bin/python benchmarks/lane_startup.py [--lane cpu] [--reps 3]
"""
from __future__ import annotations

import argparse
import statistics
import time


from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.records import BatchTiming
from crossover_lab.core.engine.pool import LanePool, run_comparison

CONFIG = RunConfig(ModelSpec((128,)), TrainSpec(batch_size=128, samples=2560, data="synthetic"))


def time_to_first_steady(pool: LanePool, spec: LaneSpec) -> float:
    t0 = time.monotonic()
    first: list[float] = []

    def on_event(event: object) -> None:
        if isinstance(event, BatchTiming) and not event.warmup and not first:
            first.append(time.monotonic() - t0)

    result = run_comparison(pool, [spec], CONFIG, on_event=on_event)
    status = result.lanes[spec.name].status
    if not first:
        raise SystemExit(f"{spec.name}: no steady batch ({status}: {result.lanes[spec.name].failure})")
    return first[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lane", default="cpu")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    spec = LaneSpec.parse(args.lane)
    fresh, reused = [], []
    for _ in range(args.reps):
        pool = LanePool()
        try:
            fresh.append(time_to_first_steady(pool, spec))
            reused.append(time_to_first_steady(pool, spec))
        finally:
            pool.close()
    print(f"lane {spec.name}, model 784-128-10, batch 128; median of {args.reps}")
    print(f"fresh_lane_s={statistics.median(fresh):.2f}")
    print(f"reused_lane_s={statistics.median(reused):.3f}")


if __name__ == "__main__":
    main()
