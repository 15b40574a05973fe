"""What the anatomy costs, and what each clock costs the steps it times.

1. The cost of timing itself, per clock, on each lane: a plain `model.fit` (no callback) against fit with the
   pipelined clock (a timestamp every K steps from an async-safe callback) and against fit with Crossover's
   per-step callback (the synced clock). Interleaved repetitions in one lane-like process per lane; medians of
   the paired ratios of whole-fit wall times.
2. How long `main.py anatomy --widths 16,2048 --lanes cpu1,jax:cpu1` takes from fresh lanes (2 lanes × 2
   widths, 2 hidden layers each): printed last. Target: under 15 s on the 2-core dev machine.

3. With --cold-warm: the same anatomy on JAX lanes twice, from fresh lanes each time, first with an empty
   persistent compilation cache (cold) and then with the one the first run filled (warm), in a home folder of
   its own; prints where each point's programs came from, then "cold X s, warm Y s" last.

Run: .venv/bin/python benchmarks/anatomy_cost.py [--lanes cpu1,jax:cpu1] [--widths 16,2048] [--reps 7]
     .venv/bin/python benchmarks/anatomy_cost.py --cold-warm [--lanes jax:cpu,jax:cpu1]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def clock_costs(lane: str, width: int, steps: int, reps: int) -> dict[str, float]:
    """In this process, set up as the lane's process would be: fit ratios synced/plain and pipelined/plain."""
    from crossover_lab.core.lane.anatomy import pipelined_clock
    from crossover_lab.core.lane.backends import DEFAULT_JIT, configure_process, import_keras
    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
    from crossover_lab.core.lane.data import preprocess, synthetic
    from crossover_lab.core.lane.feeding import make_input
    from crossover_lab.core.lane.model import build_model
    from crossover_lab.core.lane.timing import SegmentClock, make_batch_timer

    spec = LaneSpec.parse(lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    x, y = synthetic(128 * 40, seed=0)
    x = preprocess(x, "scale")
    model = build_model(keras, ModelSpec((width, width)), TrainSpec(), jit=DEFAULT_JIT[spec.backend])

    def callbacks(kind: str) -> list:
        if kind == "synced":
            clock = SegmentClock("b", lane, lane, spec.backend, 128, (width, width), 1, 0, time.perf_counter(), 5)
            return [make_batch_timer(keras, clock, emit=lambda _b: None, should_stop=lambda: False)]
        return [pipelined_clock(keras, 16)] if kind == "pipelined" else []

    def fit(kind: str) -> float:
        source = make_input(x, y, 128, spec, "host")[0]
        t0 = time.perf_counter()
        model.fit(source, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=callbacks(kind), shuffle=False)
        return time.perf_counter() - t0

    for kind in ("plain", "synced", "pipelined"):  # compile, and first calls of each path
        fit(kind)
    ratios: dict[str, list[float]] = {"synced": [], "pipelined": []}
    for rep in range(reps):
        order = ["plain", "synced", "pipelined"] if rep % 2 else ["pipelined", "synced", "plain"]
        times = {kind: fit(kind) for kind in order}
        for kind in ratios:
            ratios[kind].append(times[kind] / times["plain"])
    return {kind: statistics.median(v) for kind, v in ratios.items()}


def anatomy_time(lanes: str, widths: str) -> tuple[float, list]:
    from crossover_lab.core.study.anatomy import anatomy_configs, measure_anatomies
    from crossover_lab.core.config import RunConfig, TrainSpec, parse_lanes
    from crossover_lab.core.engine.pool import LanePool
    from crossover_lab.core.study.sweep import parse_sweep_widths

    base = RunConfig(train=TrainSpec(data="synthetic", samples=5000))
    configs = anatomy_configs(base, parse_sweep_widths(widths), None)
    pool = LanePool()
    t0 = time.perf_counter()
    try:
        outcomes = measure_anatomies(pool, list(parse_lanes(lanes)), configs)
    finally:
        pool.close()
    return time.perf_counter() - t0, outcomes


def cold_warm(lanes: str, widths: str) -> None:
    import os
    import tempfile

    os.environ["CROSSOVER_HOME"] = tempfile.mkdtemp(prefix="crossover-cache-")  # an empty cache, the lanes' too
    print(f"load average {os.getloadavg()[0]:.2f} before; cache in {os.environ['CROSSOVER_HOME']}/compiled")
    took = []
    for name in ("cold", "warm"):
        seconds, outcomes = anatomy_time(lanes, widths)
        took.append(seconds)
        words = ", ".join(f"{o.lane} {o.config.model.label()}: {o.point.settings.get('compile_cache') or '-'}"
                          for o in outcomes if o.point is not None)
        print(f"{name}: {seconds:.1f} s ({words}); load {os.getloadavg()[0]:.2f}")
    print(f"anatomy of {widths} on {lanes}: cold {took[0]:.1f} s, warm {took[1]:.1f} s, warm / cold {took[1] / took[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="cpu1,jax:cpu1")
    parser.add_argument("--widths", default="16,2048")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--clock-costs", nargs=2, metavar=("LANE", "WIDTH"), help=argparse.SUPPRESS)
    parser.add_argument("--cold-warm", action="store_true", help="the compilation cache's saving (part 3 only)")
    args = parser.parse_args()
    if args.cold_warm:
        cold_warm(args.lanes if "jax" in args.lanes else "jax:cpu,jax:cpu1", args.widths)
        return
    if args.clock_costs:  # the child process of part 1
        print(json.dumps(clock_costs(args.clock_costs[0], int(args.clock_costs[1]), args.steps, args.reps)))
        return
    print("cost of timing itself, width 16 (where a step is shortest), medians of paired whole-fit ratios:")
    for lane in args.lanes.split(","):
        out = subprocess.run([sys.executable, __file__, "--clock-costs", lane, "16", "--reps", str(args.reps),
                              "--steps", str(args.steps)], capture_output=True, text=True)
        if out.returncode:
            print(f"  {lane}: failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {lane}: synced clock / plain fit {r['synced']:.3f}; pipelined clock / plain fit "
              f"{r['pipelined']:.3f}")
    seconds, outcomes = anatomy_time(args.lanes, args.widths)
    print(f"anatomy of {args.widths} on {args.lanes} from fresh lanes:")
    for o in outcomes:
        if o.point is None:
            print(f"  {o.lane} {o.config.model.label()}: failed: {o.error}")
            continue
        p = o.point
        print(f"  {o.lane} {o.config.model.label()}: {p.seconds:.1f} s in the lane; fit "
              f"{p.rung('fit').median_ms:.3g} ms, fit / fit_pipelined {p.timing_cost:.3f}")
    print(f"anatomy_seconds {seconds:.1f}")


if __name__ == "__main__":
    main()
