"""What timing every batch costs: the blog's small model trained with and without the timing callback.

Interleaved repetitions in one process, so both variants see the same machine state; prints the
median of the paired ratios (timed / plain) last. Target: overhead_ratio <= 1.03.
Run: .venv/bin/python benchmarks/instrumentation_overhead.py [--reps 9] [--steps 300] [--family cnn --widths 16]
"""
from __future__ import annotations

import argparse
import statistics
import time



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lane", default="cpu1", help="lane profile to train on (default cpu1: one pinned "
                        "thread, the steadiest on a small machine; cpu uses every core)")
    parser.add_argument("--family", default="mlp", help="mlp (default), cnn, rnn or transformer")
    parser.add_argument("--widths", default="128", help="the family's widths, e.g. 16 or 32,64 (default 128)")
    args = parser.parse_args()

    from crossover_lab.core.lane.backends import configure_process, import_keras
    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
    from crossover_lab.core.lane.data import synthetic, preprocess
    from crossover_lab.core.lane.feeding import make_input
    from crossover_lab.core.lane.model import build_model
    from crossover_lab.core.lane.timing import SegmentClock, make_batch_timer

    spec = LaneSpec.parse(args.lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    train = TrainSpec(batch_size=128, epochs=1)
    x, y = synthetic(128 * args.steps, seed=0)
    ds, feeding = make_input(preprocess(x, "scale"), y, 128, spec, "host")
    model_spec = ModelSpec(tuple(int(w) for w in args.widths.split(",")), family=args.family)
    model = build_model(keras, model_spec, train, jit=False)
    model.fit(ds, epochs=1, steps_per_epoch=20, verbose=0)  # compile and warm both paths' function

    sink: list = []

    def fit(timed: bool) -> float:
        callbacks = []
        if timed:
            clock = SegmentClock("b", spec.name, spec.name, "tensorflow", 128, (), 1, 0, time.perf_counter(), 5)
            callbacks = [make_batch_timer(keras, clock, emit=sink.append, should_stop=lambda: False)]
        t0 = time.perf_counter()
        model.fit(ds, epochs=1, steps_per_epoch=args.steps, verbose=0, callbacks=callbacks)
        return time.perf_counter() - t0

    fit(True), fit(False)
    ratios = []
    for rep in range(args.reps):
        if rep % 2:
            timed, plain = fit(True), fit(False)
        else:
            plain, timed = fit(False), fit(True)
        ratios.append(timed / plain)
        print(f"rep {rep + 1}: plain {plain * 1000 / args.steps:.3f} ms/step, timed {timed * 1000 / args.steps:.3f} "
              f"ms/step, ratio {timed / plain:.3f}")
    print(f"model {model_spec.label()}, batch 128, {args.steps} steps per fit, lane {spec.name}, {feeding}, "
          f"threads {settings['threads']}")
    spread = (max(ratios) - min(ratios)) / statistics.median(ratios)
    if spread > 0.1:
        print(f"warning: the paired ratios spread over {100 * spread:.0f}%: this result may be unstable")
    print(f"overhead_ratio={statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
