"""What Crossover's timed predict adds to one call: its serving loop with the step timer (core/lane/serving.py,
records, flushes, stop checks) against a plain loop of `model.predict_on_batch`, each call timed with
`time.perf_counter_ns` around it, on the same model, the same batches and the same lane process.

The two loops alternate in one process, so both see the same machine; the comparison runs twice, each round's
figure printed beside the load average. Per loop: the median of its per-call ms. Prints the median of the
paired ratios (Crossover's median / the plain loop's median) last. Target: predict_overhead_ratio <= 1.05.
Run: .venv/bin/python benchmarks/predict_overhead.py [--reps 5] [--calls 400] [--lane cpu1] [--batch 32]
"""
from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5, help="paired loops per round (two rounds)")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--lane", default="cpu1")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=256)
    args = parser.parse_args()

    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
    from crossover_lab.core.lane.backends import configure_process, import_keras
    from crossover_lab.core.lane.data import preprocess, synthetic
    from crossover_lab.core.lane.load import load_average
    from crossover_lab.core.lane.model import build_model
    from crossover_lab.core.lane.serving import make_call, serve, train_weights
    from crossover_lab.core.lane.timing import SegmentClock, make_batch_timer

    spec = LaneSpec.parse(args.lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    train = TrainSpec(batch_size=args.batch, task="predict")
    x, y = synthetic(args.batch * args.calls, seed=0)
    x = preprocess(x, "scale")
    model = build_model(keras, ModelSpec((args.width,)), train, jit=False)
    weights = train_weights(model, x, y, args.batch)
    call = make_call(keras, model, spec, train, jit=False)
    batches = [x[i * args.batch:(i + 1) * args.batch] for i in range(args.calls)]

    def crossover() -> float:
        clock = SegmentClock("b", spec.name, spec.name, spec.backend, args.batch, (args.width,), 1, 0,
                             time.perf_counter(), 5, max_steps=args.calls, task="predict")
        timer = make_batch_timer(keras, clock, emit=lambda _bundle: None, should_stop=lambda: False, per_call=True)
        serve(model, call, x, args.batch, timer, args.calls)
        return statistics.median(r.ms for r in timer.records if not r.warmup)

    def plain() -> float:
        times = []
        for batch in batches:
            t0 = time.perf_counter_ns()
            model.predict_on_batch(batch)
            times.append((time.perf_counter_ns() - t0) / 1e6)
        return statistics.median(times[5:])  # the same 5 calls left out as Crossover's warm-up

    crossover(), plain()  # trace and warm both paths
    all_ratios = []
    for round_ in (1, 2):
        ratios, medians = [], {"crossover": [], "plain": []}
        for rep in range(args.reps):
            order = (crossover, plain) if rep % 2 else (plain, crossover)
            got = {f.__name__: f() for f in order}
            medians["crossover"].append(got["crossover"])
            medians["plain"].append(got["plain"])
            ratios.append(got["crossover"] / got["plain"])
        all_ratios += ratios
        print(f"round {round_}: median per call {statistics.median(medians['crossover']):.4f} ms (Crossover) vs "
              f"{statistics.median(medians['plain']):.4f} ms (plain loop), ratio {statistics.median(ratios):.4f} "
              f"(min {min(ratios):.4f}, max {max(ratios):.4f}), load average {load_average():.2f}")
    print(f"model 784-{args.width}-10, batch {args.batch}, {args.calls} calls per loop, lane {spec.name} "
          f"({spec.backend}, threads {settings['threads']}), Keras predict_on_batch, weights {weights}, "
          f"{2 * args.reps} pairs")
    spread = (max(all_ratios) - min(all_ratios)) / statistics.median(all_ratios)
    if spread > 0.05:
        print(f"warning: the paired ratios spread over {100 * spread:.0f}%: this result may be unstable")
    print(f"predict_overhead_ratio={statistics.median(all_ratios):.4f}")


if __name__ == "__main__":
    main()
