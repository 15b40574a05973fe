"""Does the open loop (predict --arrival-rate, core/lane/arrivals.py) queue as queueing theory says it must?

On one real lane: first its calls are timed one at a time (a closed loop, no queue): their times S. Then
requests arrive by a Poisson schedule at two rates below saturation (utilisation ρ = λ·E[S] of 0.3 and 0.6),
and the mean wait each request had before its call began is compared with what the M/G/1 queue predicts from
those service times (Pollaczek–Khinchine: W = λ·E[S²] / 2(1 − ρ)). The measured mean's interval comes from
BLOCKS consecutive blocks of requests (their means; waits in a queue are correlated, so the requests' own count
would overstate certainty): the prediction "agrees within the noise" when it lies inside mean ± t·SE. Last, a
rate 2.5 times what the lane can answer must be reported as not held, not as a huge p99.

Each figure is printed beside the 1-minute load average. The prediction is also given from the service times the
load run measured itself (its calls, same model, same process), since a busy machine moves service times
between runs.
Run: .venv/bin/python benchmarks/load_queueing.py [--lane cpu1] [--width 512] [--batch 32] [--requests 1500]
"""
from __future__ import annotations

import argparse
import os
import statistics

import numpy as np

BLOCKS = 10
T_975 = {9: 2.262}  # Student's t, 97.5% point, for BLOCKS − 1 degrees of freedom


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lane", default="cpu1")
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=32, help="samples per request (and per closed-loop call)")
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--calls", type=int, default=700, help="closed-loop calls that time the service")
    args = parser.parse_args()

    from crossover_lab.core.analysis.serving_load import load_point
    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.engine.pool import LanePool, run_comparison
    from crossover_lab.core.lane.arrivals import mean_wait_pk

    lane = LaneSpec.parse(args.lane)
    model = ModelSpec((args.width, args.width))
    base = TrainSpec(task="predict", batch_size=args.batch, data="synthetic", samples=max(4096, args.batch * 64))
    load = lambda: os.getloadavg()[0]  # noqa: E731
    pool = LanePool()
    try:
        pool.ready([lane], None, data_of=RunConfig(model, base))

        def run(train: TrainSpec):
            result = run_comparison(pool, [lane], RunConfig(model, train), schedule="sequential")
            return result.lanes[lane.name]

        closed = run(TrainSpec(**{**base.__dict__, "max_steps": args.calls + base.warmup_steps}))
        service = np.array([r.ms for r in closed.records if not r.warmup]) / 1000.0
        mean_s = float(service.mean())
        print(f"{lane.name}: model 784-{args.width}-{args.width}-10, requests of {args.batch} samples; "
              f"closed loop: {len(service)} calls, mean {1000 * mean_s:.3f} ms, median "
              f"{1000 * statistics.median(service):.3f} ms, cv {service.std() / mean_s:.2f} (load {load():.2f})")
        for rho in (0.3, 0.6):
            rate = rho / mean_s
            train = TrainSpec(**{**base.__dict__, "arrival_rate": rate, "max_steps": args.requests})
            got = run(train)
            calls = [r for r in got.records if r.requests and not r.warmup]
            waits = np.array([w for r in calls for w in r.waits_ms]) / 1000.0
            own = np.array([r.ms for r in calls]) / 1000.0
            blocks = [float(b.mean()) for b in np.array_split(waits, BLOCKS)]
            half = T_975[BLOCKS - 1] * statistics.stdev(blocks) / BLOCKS ** 0.5
            measured = float(waits.mean())
            predicted = mean_wait_pk(rate, service)
            from_own = mean_wait_pk(rate, own)
            inside = abs(predicted - measured) <= half
            print(f"  ρ {rho:.1f} ({rate:.1f} requests/s, {len(waits)} requests): mean wait {1000 * measured:.3f} ms "
                  f"± {1000 * half:.3f} (95%, {BLOCKS} blocks); Pollaczek–Khinchine from the closed loop's calls "
                  f"{1000 * predicted:.3f} ms: {'agrees within the noise' if inside else 'differs beyond the noise'}; "
                  f"from this run's own calls (mean {1000 * own.mean():.3f} ms) {1000 * from_own:.3f} ms "
                  f"(load {load():.2f})")
        rate = 2.5 / mean_s
        train = TrainSpec(**{**base.__dict__, "arrival_rate": rate, "max_steps": args.requests})
        over = run(train)
        point = load_point(lane.name, over.records, over.summary, train)
        print(f"  ρ 2.5 ({rate:.1f} requests/s): held {point.held} (ended {point.ended!r}, answered "
              f"{point.achieved:.1f}/s of {point.offered:.1f}/s arriving; p99 given: "
              f"{'yes' if point.held and point.p99_ms == point.p99_ms else 'no'}) (load {load():.2f})")
    finally:
        pool.close()


if __name__ == "__main__":
    main()
