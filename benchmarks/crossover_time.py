"""How long until the crossover is known within ±15%: a refined sweep against a fixed log-spaced one.

One run on cpu vs cpu1 (1 hidden layer, synthetic data), each method with fresh lanes (their
start-up counts: a user waits for it too):
- refined: `sweep --widths 16,256,2048 --refine 0.15`, timed until refinement returns;
- fixed: log-spaced widths from 16 to 2048, close enough together that neighbouring widths are
  within the tolerance of each other, timed to its end (a fixed sweep knows nothing before).
Both answers are judged by the same rule (core/analysis/verdict.py); "too close to call over the range" is an
answer (cpu and cpu1 often are, on 2 cores). Prints both times, what a
point added by refinement costs against a fixed sweep's point at the same width (median; it
must be no more), and the ratio fixed / refined last. Targets on the 2-core dev machine: refined < 25 s, ratio ≥ 2.
Run: .venv/bin/python benchmarks/crossover_time.py [--lanes cpu,cpu1] [--tolerance 0.15]
"""
from __future__ import annotations

import argparse
import datetime as dt
import math
import statistics
import time

import numpy as np

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec, parse_lanes
from crossover_lab.core.study.refine import MARGIN
from crossover_lab.core.analysis.refinement import RefineTarget, Refinement
from crossover_lab.core.study.refine import answer
from crossover_lab.core.study.refined_sweep import run_refined_sweep
from crossover_lab.core.engine.pool import LanePool
from crossover_lab.core.results import RunResult
from crossover_lab.core.study.sweep import SweepSpec, log_widths, run_sweeps
from crossover_lab.core.words.sweep import refine_lines

LO, HI = 16, 2048


def span_s(run: RunResult) -> float:
    return (dt.datetime.fromisoformat(run.ended_at) - dt.datetime.fromisoformat(run.started_at)).total_seconds()


def added_point_cost(added: list[RunResult], swept: list[RunResult]) -> float:
    """Median of (an added point's seconds / a swept point's seconds at that width, interpolated in log width)."""
    swept = sorted(swept[1:], key=lambda r: r.config.model.widths[0])  # the first paid the lanes' start-up
    if not added or len(swept) < 2:
        return math.nan
    x = np.log([r.config.model.widths[0] for r in swept])
    y = [span_s(r) for r in swept]
    return statistics.median(span_s(r) / float(np.interp(math.log(r.config.model.widths[0]), x, y)) for r in added)


def refined(lanes: list, base: RunConfig, target: RefineTarget) -> tuple[float, Refinement, list[RunResult]]:
    pool = LanePool()
    try:
        t0 = time.monotonic()
        result = run_refined_sweep(pool, lanes, SweepSpec((LO, 256, HI), layers=1, base=base, calibrate=False), target)
        wall = time.monotonic() - t0
    finally:
        pool.close()
    assert result.refinement is not None
    return wall, result.refinement, result.runs


def fixed(lanes: list, base: RunConfig, target: RefineTarget) -> tuple[float, Refinement, list[RunResult]]:
    # Neighbours within the tolerance of each other (with the same margin refinement aims with).
    n = math.ceil(math.log(HI / LO) / (MARGIN * math.log(target.ratio))) + 1
    spec = SweepSpec(log_widths(LO, HI, n), layers=1, base=base, calibrate=False)
    pool = LanePool()
    try:
        t0 = time.monotonic()
        (result,) = run_sweeps(pool, lanes, [spec])
        wall = time.monotonic() - t0
    finally:
        pool.close()
    # Judged as refinement would judge it; a tie it has is a tie at one measurement, nothing added.
    judged = answer([r.point() for r in result.rows if r.usable], {}, target, "", wall, spec.widths)
    return wall, judged, result.runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", default="cpu,cpu1")
    parser.add_argument("--tolerance", type=float, default=0.15)
    args = parser.parse_args()
    lanes = list(parse_lanes(args.lanes))
    base = RunConfig(ModelSpec((LO,)), TrainSpec(data="synthetic"))
    target = RefineTarget(args.tolerance, 300.0)
    r_wall, r_answer, r_runs = refined(lanes, base, target)
    print(f"refined ({LO},256,{HI} then --refine {args.tolerance:g}): {r_wall:.1f} s, {len(r_answer.widths)} "
          f"measurements, in order: {', '.join(map(str, r_answer.widths))}")
    for line in refine_lines(r_answer):
        print("  " + line)
    f_wall, f_answer, f_runs = fixed(lanes, base, target)
    print(f"fixed ({len(f_runs)} log-spaced widths {LO}-{HI}): {f_wall:.1f} s")
    for line in refine_lines(f_answer)[:-1]:
        print("  " + line)
    print(f"an added point costs {added_point_cost(r_runs[3:], f_runs):.2f}x a fixed sweep's point at the same "
          "width (median)")
    for name, judged in (("refined", r_answer), ("fixed", f_answer)):
        # An answer is known when every crossing is tight, or the lanes are too close to call over a range (noise),
        # or no change of the faster lane was measured at all: the one rule's answers, each said in full above.
        known = judged.stopped in ("tight", "noise", "no crossover") and \
            all(c.stopped in ("tight", "noise") for c in judged.crossings)
        if not known:
            print(f"warning: the {name} sweep did not place every crossover within ±{100 * args.tolerance:g}%: "
                  "its time is not the time to that precision")
    print(f"refined_s={r_wall:.1f} fixed_s={f_wall:.1f}")
    print(f"ratio={f_wall / r_wall:.2f}")


if __name__ == "__main__":
    main()
