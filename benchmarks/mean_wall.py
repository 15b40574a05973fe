"""What a user's own fit costs: Crossover's mean wall time per step against a plain Keras fit timed per epoch.

Both run in this one process on the same lane profile (one pinned thread by default), the same model
and the same input pipeline, in alternating repetitions so both see the same machine state:
- Crossover: the lane's batch timer (core/lane/timing.py) over epochs, summarised by core/run_stats.py:
  `mean_wall_ms` is the steady stretch's wall time per step, epoch boundaries and slow steps included;
- plain: `model.fit` with nothing but an epoch callback taking time.perf_counter() at each epoch's
  begin and end; ms per step = the steady epochs' wall time / their steps.
Prints each pair and, last, the median ratio crossover / plain (target: within 10%, 0.90–1.10), with the
machine's load beside it.
Run: .venv/bin/python benchmarks/mean_wall.py [--reps 5] [--epochs 4] [--steps 150] [--lane cpu1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=150, help="steps per epoch")
    parser.add_argument("--lane", default="cpu1")
    parser.add_argument("--width", type=int, default=128)
    args = parser.parse_args()

    from crossover_lab.core.run_stats import summarize
    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
    from crossover_lab.core.lane.backends import configure_process, import_keras
    from crossover_lab.core.lane.data import preprocess, synthetic
    from crossover_lab.core.lane.feeding import make_input
    from crossover_lab.core.lane.model import build_model
    from crossover_lab.core.lane.timing import SegmentClock, make_batch_timer

    spec = LaneSpec.parse(args.lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    train = TrainSpec(batch_size=32, epochs=args.epochs)
    x, y = synthetic(32 * args.steps, seed=0)
    ds, _ = make_input(preprocess(x, "scale"), y, 32, spec, "host")
    model = build_model(keras, ModelSpec((args.width,)), train, jit=False)
    model.fit(ds, epochs=1, steps_per_epoch=20, verbose=0)  # trace the step once for both

    class EpochClock(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.spans: list[float] = []
            self._t = 0.0

        def on_epoch_begin(self, epoch, logs=None):  # noqa: ANN001
            self._t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):  # noqa: ANN001
            self.spans.append(time.perf_counter() - self._t)

    def plain() -> float:
        clock = EpochClock()
        model.fit(ds, epochs=args.epochs, steps_per_epoch=args.steps, callbacks=[clock], verbose=0, shuffle=False)
        steady = clock.spans[1:]  # the first epoch holds the warm-up, as Crossover's warm-up steps do
        return 1000.0 * sum(steady) / (len(steady) * args.steps)

    def crossover() -> float:
        t0 = time.perf_counter()
        clock = SegmentClock("bench", spec.name, "CPU", spec.backend, 32, (args.width,), 1, 0, t0,
                             warmup_steps=args.steps)  # the whole first epoch is warm-up, as plain() leaves it out
        timer = make_batch_timer(keras, clock, emit=lambda _b: None, should_stop=lambda: False)
        model.fit(ds, epochs=args.epochs, steps_per_epoch=args.steps, callbacks=[timer], verbose=0, shuffle=False)
        s = summarize(timer.records, run_id="bench", lane=spec.name, device="CPU", status="completed",
                      flops_per_batch=1, wall_s=time.perf_counter() - t0)
        return s.mean_wall_ms

    ratios = []
    for rep in range(args.reps):
        first, second = (plain, crossover) if rep % 2 == 0 else (crossover, plain)
        a, b = first(), second()
        p, c = (a, b) if first is plain else (b, a)
        ratios.append(c / p)
        print(f"rep {rep + 1}: plain fit {p:.3f} ms/step, crossover mean wall {c:.3f} ms/step, ratio {c / p:.3f}")
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} cores")
    print(f"mean_wall_ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
