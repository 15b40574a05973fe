"""What reading the energy counter costs: timed steps with the meter read (at the steady boundary and the last step)
against timed steps without it, on cpu1.

A fake powercap tree (CROSSOVER_POWERCAP_ROOT, a temporary folder with one package and its DRAM) makes the reads
happen on any machine: each is two small files opened and parsed, as on real RAPL. Metered and unmetered fits
alternate in one process, so both see the same machine; the whole comparison is measured twice, each round's
figure beside the load average. Two figures per fit: its wall time and the median step as the timer measured it
(a read inside a timed step would show there). Prints the median of the paired wall ratios
(metered / unmetered) last. Target: energy_read_ratio <= 1.01.
Run: .venv/bin/python benchmarks/energy_cost.py [--reps 7] [--steps 300]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def fake_tree() -> Path:
    root = Path(tempfile.mkdtemp(prefix="crossover-powercap-"))
    for folder, name in ((root / "intel-rapl:0", "package-0"), (root / "intel-rapl:0" / "intel-rapl:0:0", "dram")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "name").write_text(name + "\n")
        (folder / "max_energy_range_uj").write_text("262143328850\n")
        (folder / "energy_uj").write_text("123456789\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7, help="paired fits per round (two rounds)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lane", default="cpu1")
    args = parser.parse_args()
    os.environ["CROSSOVER_POWERCAP_ROOT"] = str(fake_tree())

    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
    from crossover_lab.core.lane.backends import configure_process, import_keras
    from crossover_lab.core.lane.data import preprocess, synthetic
    from crossover_lab.core.lane.energy import meter_for
    from crossover_lab.core.lane.feeding import make_input
    from crossover_lab.core.lane.load import load_average
    from crossover_lab.core.lane.model import build_model
    from crossover_lab.core.lane.timing import SegmentClock, make_batch_timer

    spec = LaneSpec.parse(args.lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    meter = meter_for(spec)
    if not meter.counter:
        raise SystemExit(f"no meter: {meter.note}")
    train = TrainSpec(batch_size=128, epochs=1)
    x, y = synthetic(128 * args.steps, seed=0)
    ds, feeding = make_input(preprocess(x, "scale"), y, 128, spec, "host")
    model = build_model(keras, ModelSpec((128,)), train, jit=False)
    model.fit(ds, epochs=1, steps_per_epoch=20, verbose=0)  # compile and warm the function

    def fit(metered: bool) -> tuple[float, float]:
        clock = SegmentClock("b", spec.name, spec.name, "tensorflow", 128, (), 1, 0, time.perf_counter(), 5,
                             max_steps=args.steps)
        timer = make_batch_timer(keras, clock, emit=lambda _bundle: None, should_stop=lambda: False,
                                 meter=meter if metered else None)
        t0 = time.perf_counter()
        model.fit(ds, epochs=1, steps_per_epoch=args.steps, verbose=0, callbacks=[timer])
        wall = time.perf_counter() - t0
        if metered:
            assert timer.energy.pieces == 1 and timer.energy.steps == args.steps - 5, timer.energy
        return wall, statistics.median(r.ms for r in timer.records if not r.warmup)

    fit(True), fit(False)
    all_ratios = []
    for round_ in (1, 2):
        ratios, step_ratios = [], []
        for rep in range(args.reps):
            order = (True, False) if rep % 2 else (False, True)
            got = {metered: fit(metered) for metered in order}
            ratios.append(got[True][0] / got[False][0])
            step_ratios.append(got[True][1] / got[False][1])
        all_ratios += ratios
        print(f"round {round_}: wall ratio {statistics.median(ratios):.4f} (min {min(ratios):.4f}, max "
              f"{max(ratios):.4f}), median step ratio {statistics.median(step_ratios):.4f}, "
              f"load average {load_average():.2f}")
    print(f"model 784-128-10, batch 128, {args.steps} steps per fit, lane {spec.name}, {feeding}, "
          f"threads {settings['threads']}, meter {meter.counter} (fake tree), {2 * args.reps} pairs")
    spread = (max(all_ratios) - min(all_ratios)) / statistics.median(all_ratios)
    if spread > 0.05:
        print(f"warning: the paired ratios spread over {100 * spread:.0f}%: this result may be unstable")
    print(f"energy_read_ratio={statistics.median(all_ratios):.4f}")


if __name__ == "__main__":
    main()
