"""Does the open loop (predict --arrival-rate, core/lane/arrivals.py) queue as queueing theory says it must?

On one real lane: first its calls are timed one at a time (a closed loop, no queue): their times S. Then
requests arrive by a Poisson schedule at two rates below saturation (utilisation ρ = λ·E[S] of 0.3 and 0.6),
and the mean wait each request had before its call began is compared with what the M/G/1 queue predicts from
those service times (Pollaczek–Khinchine: W = λ·E[S²] / 2(1 − ρ)). The measured mean's interval comes from
BLOCKS consecutive blocks of requests (their means; waits in a queue are correlated, so the requests' own count
would overstate certainty): the prediction "agrees within the noise" when it lies inside mean ± t·SE. Last, a
rate 2.5 times what the lane can answer must be reported as not held, not as a huge p99.

What M/G/1 calls the wait is the queueing wait: a request that finds the server idle waits 0 there, while here it
waits for the lane's loop to wake from its sleep (a fraction of a millisecond, printed apart); and the service the
queue sees is a call plus the loop's own work before the next call can begin (printed, and predicted from too).

Each figure is printed beside the 1-minute load average. The prediction is also given from the service times the
load run measured itself (its calls, same model, same process), since a busy machine moves service times
between runs.
Run: .venv/bin/python benchmarks/arrival_queueing.py [--lane cpu1] [--width 512] [--batch 32] [--requests 1500]
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

    from crossover_lab.core.analysis.serving_rates import rate_point
    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
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
            result = run_comparison(pool, [lane], RunConfig(model, train), schedule=Schedule.SEQUENTIAL)
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
            calls = [r for r in got.records if r.requests and not r.warmup]  # one request per call (max batch 1)
            raw = np.array([r.waits_ms[0] for r in calls]) / 1000.0
            queued = np.array([r.queued > 0 for r in calls])
            # A request that found the server idle waits only for the loop to wake (its sleep's overshoot): M/G/1
            # has it wait 0. Its queueing wait is its wait if it arrived while the server was busy, else 0.
            waits = np.where(queued, raw, 0.0)
            wake = float(raw[~queued].mean()) if (~queued).any() else 0.0
            own = np.array([r.ms for r in calls]) / 1000.0
            # The service the queue sees: a call, plus the loop's own work before the next can begin (the gap from
            # a call's end to the next call's start, where that next request was already waiting).
            gaps = [b.start_s - (a.start_s + a.ms / 1000.0) for a, b in zip(calls, calls[1:]) if b.queued]
            between = float(np.median(gaps)) if gaps else 0.0
            blocks = [float(b.mean()) for b in np.array_split(waits, BLOCKS)]
            half = T_975[BLOCKS - 1] * statistics.stdev(blocks) / BLOCKS ** 0.5
            measured = float(waits.mean())
            predicted = mean_wait_pk(rate, service)
            effective = mean_wait_pk(rate, service + between)
            said = lambda p: "agrees within the noise" if abs(p - measured) <= half else "differs beyond the noise"  # noqa: E731
            print(f"  ρ {rho:.1f} ({rate:.1f} requests/s, {len(waits)} requests, {100 * queued.mean():.0f}% queued): "
                  f"mean queueing wait {1000 * measured:.3f} ms ± {1000 * half:.3f} (95%, {BLOCKS} blocks); "
                  f"Pollaczek–Khinchine from the closed loop's calls {1000 * predicted:.3f} ms ({said(predicted)}); "
                  f"from those calls plus the loop's {1000 * between:.3f} ms between calls {1000 * effective:.3f} ms "
                  f"({said(effective)}); this run's own calls averaged {1000 * own.mean():.3f} ms; a request that "
                  f"found the server idle waited {1000 * wake:.3f} ms for the loop to wake (load {load():.2f})")
        rate = 2.5 / mean_s
        train = TrainSpec(**{**base.__dict__, "arrival_rate": rate, "max_steps": args.requests})
        over = run(train)
        point = rate_point(lane.name, over.records, over.summary, train)
        print(f"  ρ 2.5 ({rate:.1f} requests/s): held {point.held} (ended {point.ended!r}, answered "
              f"{point.achieved:.1f}/s of {point.offered:.1f}/s arriving; p99 given: "
              f"{'yes' if point.held and point.p99_ms == point.p99_ms else 'no'}) (load {load():.2f})")
    finally:
        pool.close()


if __name__ == "__main__":
    main()
