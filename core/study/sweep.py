"""Sweeps: the same MLP at growing widths (and batch sizes) on each lane, one point at a time.

Files live in core/files/sweeps/files.py, the row type in core/files/sweeps/rows.py; this module decides what
to measure and measures it.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .anatomy import measure_floor
from ..config import MAX_WIDTH, MIN_WIDTH, ConfigError, DeviceKind, LaneSpec, RunConfig, Schedule, Task, parse_int_list
from ..messages import Calibrated
from ..records import BatchTiming, LaneEvent, RunSummary, Status
from ..run_stats import summarize
from ..analysis.refinement import Refinement
from ..analysis.tails import calls_for_tail
from ..engine.pool import LanePool, run_comparison
from ..results import RunResult, new_run_id
from ..files.sweeps.rows import SweepRow, energy_columns

DEFAULT_STEADY_STEPS = 60
DEFAULT_POINT_SECONDS = 3.0


def _on_off(value: str) -> bool:
    if value not in ("on", "off"):
        raise ValueError(value)
    return value == "on"


# The settings a compare sweep may change, and how a value is read from the command line.
KNOBS: dict[str, Callable[[str], Any]] = {
    "batch_size": int,
    "steps_per_execution": int,
    "jit": _on_off,
    "feeding": str,
    "mixed_precision": _on_off,
}


def with_knob(spec: SweepSpec, text: str) -> SweepSpec:
    """The same sweep with one knob changed: `jit=on`, `batch_size=512`, `feeding=device`…"""
    knob, _, value = text.partition("=")
    knob = knob.strip().replace("-", "_")
    if knob not in KNOBS or not value:
        raise ConfigError(f"compare {text!r}: use KNOB=VALUE with a knob among {', '.join(KNOBS)}")
    try:
        parsed = KNOBS[knob](value.strip().lower())
    except ValueError:
        raise ConfigError(f"compare {text!r}: {value!r} is not a value for {knob}") from None
    train = dataclasses.replace(spec.base.train, **{knob: parsed})
    base = RunConfig(spec.base.model, train)
    batches = (parsed,) if knob == "batch_size" else spec.batch_sizes
    return dataclasses.replace(spec, base=base, batch_sizes=batches, variant=f"{knob}={value.strip().lower()}")


_ROUND_MANTISSAS = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8)


def _round_width(w: float) -> int:
    """The round width nearest to `w` in log scale: 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten, or a
    power of two (the widths people try: 50, 150, 400, 512, 1500)."""
    decade = 10 ** math.floor(math.log10(w))
    candidates = [m * decade * f for m in _ROUND_MANTISSAS for f in (1, 10)] + [2 ** round(math.log2(w))]
    return int(min(candidates, key=lambda c: abs(math.log(c / w))))


def log_widths(lo: int = 16, hi: int = 4096, n: int = 6) -> tuple[int, ...]:
    """`n` widths evenly spaced in log scale from `lo` to `hi`, each but the ends rounded to a round width."""
    if not (1 <= lo < hi) or n < 2:
        raise ConfigError(f"width range {lo}-{hi} with {n} points: need 1 ≤ low < high and at least 2 points")
    inner = {_round_width(w) for w in np.geomspace(lo, hi, n)[1:-1]}
    return tuple(sorted({lo, hi} | {w for w in inner if lo < w < hi}))


def steady_steps_for(asked: int | None, config: RunConfig) -> int:
    """A point's steady batches: as asked, else 60 for training and, for the predict task, the calls its p99 needs
    (662, core/analysis/tails.py), the point's time limit still ending it first where calls are slow."""
    if asked is not None:
        return asked
    return calls_for_tail(99) if config.train.task == Task.PREDICT else DEFAULT_STEADY_STEPS


def parse_sweep_widths(text: str) -> tuple[int, ...]:
    return parse_int_list(text, "sweep width")


NO_WIDTH = 0  # a saved model's one "width" in a sweep (it has none): its points differ in batch size only


@dataclass(frozen=True)
class SweepSpec:
    """What to sweep: hidden widths (every layer the same width) × batch sizes, on a base config."""

    widths: tuple[int, ...]
    layers: int = 2
    batch_sizes: tuple[int, ...] = ()  # empty: the base config's batch size only
    base: RunConfig = field(default_factory=RunConfig)
    steady_steps: int = DEFAULT_STEADY_STEPS
    seconds_per_point: float = DEFAULT_POINT_SECONDS
    calibrate: bool = True  # time a large matrix product per lane: the GFLOP/s each point is a share of
    variant: str = "base"  # in compare mode, the knob setting this sweep ran with ("jit=on")
    floor: bool = False  # also time each point's on-device loop (the anatomy's device_loop): column floor_ms
    # Measure one or two points a second time, chosen by place (rechecks, to_recheck): how the pair's ratio scatters
    # between runs, the run-to-run noise that one run's batches cannot show and the one rule counts.
    recheck: bool = True
    # Measure every point this many times, in passes apart in time (the widths' order and the lanes' order reversed
    # from one pass to the next): the one rule then tests the whole sweep over its passes' means, which holds
    # whatever a pass's widths share (a slow load one lane feels more, a session's state). Three or more: the rule's
    # designs with that test (core/analysis/significance.py PASSES_FOR_SWEEP); 1: one pass and its rechecks.
    passes: int = 1

    def __post_init__(self) -> None:
        if self.base.model.saved is not None:  # a saved model has no width: one x per batch size, width 0 in rows
            if self.widths != (NO_WIDTH,):
                raise ConfigError("a saved model has no width: sweep it along --batch-sizes")
        elif not self.widths:
            raise ConfigError("a sweep needs at least one width")
        for width in self.widths if self.base.model.saved is None else ():
            if not MIN_WIDTH <= width <= MAX_WIDTH:
                raise ConfigError(f"sweep width {width}: widths must be {MIN_WIDTH}-{MAX_WIDTH}")
        if not 1 <= self.layers <= 8:
            raise ConfigError(f"{self.layers} hidden layers: choose 1-8")
        if self.base.model.factory is not None and self.layers != 1:
            raise ConfigError(f"{self.layers} hidden layers: {self.base.model.factory.function}(width) builds the "
                              "whole model from one width (layers 1)")
        if self.steady_steps < 3:
            raise ConfigError(f"steady batches per point {self.steady_steps}: choose at least 3")
        if not self.seconds_per_point > 0:
            raise ConfigError(f"time per point {self.seconds_per_point} s: choose more than 0")
        if not 1 <= self.passes <= MAX_PASSES:
            raise ConfigError(f"{self.passes} passes: choose 1-{MAX_PASSES} (3 lets the rule measure what a pass's "
                              "widths share)")

    def points(self) -> list[RunConfig]:
        out = []
        for batch in self.batch_sizes or (self.base.train.batch_size,):
            for width in self.widths:
                model = self.base.model if self.base.model.saved is not None else \
                    dataclasses.replace(self.base.model, widths=(width,) * self.layers)
                train = dataclasses.replace(self.base.train, batch_size=batch,
                                            max_steps=self.base.train.warmup_steps + self.steady_steps,
                                            max_seconds=self.seconds_per_point)
                out.append(RunConfig(model, train))
        return out


def ramp_plan(base: RunConfig, widths: Sequence[int], layers: int | None = None,
              steady_steps: int = DEFAULT_STEADY_STEPS, seconds: float = DEFAULT_POINT_SECONDS,
              batch_sizes: Sequence[int] = ()) -> tuple[RunConfig, ...]:
    """A ramp: one run that steps every lane through `widths` (each hidden layer that wide), measuring each
    as a sweep point is measured (warm-up, then `steady_steps` steady batches or `seconds`).

    With `batch_sizes` (and no widths) it steps through those batch sizes at the model's own widths instead (a
    saved model's only ramp): the crossover is then found along batch size, as a sweep of one width finds it."""
    if batch_sizes:
        if widths:
            raise ConfigError("a ramp goes through widths or through batch sizes, not both at once")
        if len(set(batch_sizes)) < 2:
            raise ConfigError("a ramp through batch sizes needs at least two, e.g. 1,8,64,512")
        model = base.model
        if model.saved is None and len(set(model.widths)) > 1:
            raise ConfigError(f"a ramp through batch sizes keeps the model's widths, and {model.label()} has "
                              "layers of different widths: give every layer one width (--widths 256,256)")
        spec = SweepSpec(widths=(model.widths[0] if model.widths else NO_WIDTH,), layers=len(model.widths) or 1,
                         batch_sizes=tuple(batch_sizes), base=base, steady_steps=steady_steps,
                         seconds_per_point=seconds)
        return tuple(spec.points())
    if layers is not None and not 1 <= layers <= 8:
        raise ConfigError(f"--layers {layers}: a ramp's model has 1-8 hidden layers")
    spec = SweepSpec(widths=tuple(widths), layers=layers if layers is not None else len(base.model.widths), base=base,
                     steady_steps=steady_steps, seconds_per_point=seconds)
    return tuple(spec.points())


@dataclass
class SweepResult:
    spec: SweepSpec
    rows: list[SweepRow] = field(default_factory=list)  # one per point and lane; a point cut short has none
    runs: list[RunResult] = field(default_factory=list)  # each point's per-batch records
    cancelled: bool = False
    calibration: dict[str, Calibrated] = field(default_factory=dict)  # lane → its achievable GFLOP/s
    refinement: Refinement | None = None  # a refined sweep's answer (core/study/refined_sweep.py)


@dataclass(frozen=True)
class PointMeasured:
    """A point is done on every lane: its rows (none if it was cut short), its run, and the progress."""

    variant: str
    rows: tuple[SweepRow, ...]
    run: RunResult
    done: int  # lane-points done so far (measured, failed or cut short), over every variant
    total: int
    reused: bool = False  # taken from a sweep measured just before on the same lanes and settings, not timed again
    again: bool = False  # a point measured a second time for the run-to-run noise (rechecks): rows pool both runs


def calibration_size(lane: LaneSpec) -> int:
    """Big enough to reach the device's throughput, small enough to take about a second."""
    return 8192 if lane.kind == DeviceKind.GPU else 2048


def measure_point(pool: LanePool, lanes: Sequence[LaneSpec], config: RunConfig, result: SweepResult,
                  on_event: Callable[[LaneEvent], None] | None,
                  cancel: threading.Event) -> tuple[RunResult, list[SweepRow]]:
    """Time one point of a sweep on every lane, one lane after another: the run (kept in `result`) and a
    row per lane that measured it (a point cut short is not a point)."""
    run = run_comparison(pool, list(lanes), config, schedule=Schedule.SEQUENTIAL, run_id=new_run_id(),
                         on_event=on_event, cancel=cancel)
    result.runs.append(run)
    rows = []
    for lane in lanes:
        cal = result.calibration.get(lane.name)
        row = SweepRow.from_result(run, lane.name, cal.gflops if cal else math.nan, result.spec.variant)
        if row.status == Status.CANCELLED or (cancel.is_set() and row.status != Status.COMPLETED):
            continue
        rows.append(row)
    return run, rows


def lane_points(lanes: Sequence[LaneSpec], specs: Sequence[SweepSpec]) -> int:
    """How many (lane, point) measurements the sweeps `specs` make: what their progress counts to."""
    return sum(len(s.points()) * s.passes + rechecks(s, lanes) for s in specs) * len(lanes)


MAX_PASSES = 9
# The CLI's and the Sweep tab's default: five passes. Three let the rule measure what a pass's widths share, but
# over three passes, neighbouring ones alike (core/analysis/significance.py PASS_RHO), a true 10% lead on a quiet
# machine was found in 1.5% of sweeps of six widths; over five in 96.5% (benchmarks/rule_calibration.py). Five times
# one pass: about 2.2 minutes for cpu1 against its twin at six widths on a 2-core machine.
DEFAULT_PASSES = 5


def for_lanes(spec: SweepSpec, lanes: Sequence[LaneSpec]) -> SweepSpec:
    """The spec as `lanes` measure it: passes are a pair's (they measure the noise of the pair's ratio), so a sweep of
    one lane measures one pass."""
    return dataclasses.replace(spec, passes=1) if len(lanes) < 2 and spec.passes > 1 else spec


# A sweep of this many points or more measures two of them again, and from THREE_RECHECKS_FROM three: the pair's
# run-to-run noise then rests on two or three widths (degrees of freedom), at a cost of at most a third of the sweep.
TWO_RECHECKS_FROM = 6
THREE_RECHECKS_FROM = 8


def rechecks(spec: SweepSpec, lanes: Sequence[LaneSpec]) -> int:
    """How many of the sweep's points it measures a second time, for the run-to-run noise: none unless asked for,
    with two lanes or more to compare and two points or more; two where the sweep has TWO_RECHECKS_FROM points or
    more, three from THREE_RECHECKS_FROM (one width measured twice is one degree of freedom: a load that changed
    once would be all it knew), else one."""
    if not (spec.recheck and spec.passes == 1 and len(lanes) > 1 and len(spec.points()) > 1):
        return 0  # passes measure every point again: no recheck is needed beside them
    return rechecks_for(len(spec.points()))


def rechecks_for(points: int) -> int:
    """How many of a sweep's `points` points it measures a second time (rechecks)."""
    return 3 if points >= THREE_RECHECKS_FROM else 2 if points >= TWO_RECHECKS_FROM else 1 if points > 1 else 0


def to_recheck(points: Sequence[tuple[RunConfig, RunResult, list[SweepRow]]], lanes: Sequence[str],
               n: int = 1) -> list[tuple[RunConfig, RunResult, list[SweepRow]]]:
    """The `n` points to measure again, evenly spaced along the sweep (the middle one for one, a third and two
    thirds of the way for two), among those every lane completed: chosen by place, never by what the first run
    measured (the points where the lanes lay closest would pick small first differences, and the scatter of the
    two runs would understate the noise)."""
    done = [point for point in points if len(lanes) > 1 and not set(lanes) - {
        r.lane for r in point[2] if r.status == Status.COMPLETED and r.median_ms > 0}]
    return [done[i] for i in recheck_places(len(done), n)] if done else []


def recheck_places(points: int, n: int) -> list[int]:
    """Which of `points` points (by index) a sweep measures again for `n` rechecks: evenly spaced, ends left out
    where there is room (n = 1: the middle; n = 3 of 10: the 3rd, 5th and 8th)."""
    return sorted({round((k + 1) * (points - 1) / (n + 1)) for k in range(n)}) if points > 0 and n > 0 else []


def turn_order(lanes: Sequence[LaneSpec], i: int) -> list[LaneSpec]:
    """The lanes in the order they take their turns at the sweep's `i`-th point: reversed at every other point, so
    that a load that drifts over the sweep falls on each lane alike and does not pass for a lead."""
    return list(lanes) if i % 2 == 0 else list(reversed(lanes))


def lane_summary(run: RunResult, lane: str) -> RunSummary | None:
    got = run.lanes.get(lane)
    return got.summary if got is not None else None


def steady_records(run: RunResult, lane: str) -> list[BatchTiming]:
    """The steady batches `lane` measured in `run` (its warm-up apart)."""
    got = run.lanes.get(lane)
    return [r for r in got.records if not r.warmup] if got is not None else []


def with_batches(row: SweepRow, records: Sequence[BatchTiming], summaries: Sequence[RunSummary] = ()) -> SweepRow:
    """The row with every statistic over what was pooled: its timing (median, spread, tail by the tail rule) over
    `records`, every steady batch measured at its width so far, summed up as a run's are (run_stats.summarize), with
    how many runs they came from and how far those runs' medians lie apart (what the one rule takes as the lane's
    run-to-run noise); and its energy over the runs' `summaries` (their joules, steps, samples and seconds added,
    never one run's figure kept for both)."""
    s = summarize(records, run_id=row.run_id, lane=row.lane, device=row.device, status=row.status,
                  flops_per_batch=row.flops_per_batch, wall_s=0.0)
    if s.n_batches == 0:
        return row
    runs, between, medians = run_spread(records)
    ids = list(dict.fromkeys(r.run_id for r in records))
    energy = pooled_energy(summaries)
    return dataclasses.replace(
        row, median_ms=s.median_ms, p10_ms=s.p10_ms, p90_ms=s.p90_ms, mad_ms=s.mad_ms, n_batches=s.n_batches,
        gflops=s.gflops, samples_per_s=s.samples_per_s, p99_ms=s.p99_ms,
        peak_share=s.gflops / row.peak_gflops if row.peak_gflops > 0 else math.nan, runs=runs, between_runs=between,
        run_medians_ms=";".join(f"{m:.6g}" for m in medians) if runs > 1 and len(medians) == runs else "",
        pooled_run_ids=";".join(ids) if runs > 1 else "",
        **(energy_columns(energy) if summaries else {}))


def pooled_energy(summaries: Sequence[RunSummary]) -> RunSummary | None:
    """One summary holding the energy of several runs' steady stretches, added up; None unless every run read the
    same counter (a run without a reading leaves the pooled figure unknown, not one run's). Readings too short to
    give joules alone count: added up, the window may be long enough (RunSummary.energy_measured decides)."""
    measured = [s for s in summaries if s.energy_read]
    if not summaries or len(measured) != len(summaries) or len({s.energy_counter for s in measured}) != 1:
        return None
    first = measured[0]
    idle = [s.idle_w for s in measured if math.isfinite(s.idle_w)]
    return dataclasses.replace(
        first, energy_j=sum(s.energy_j for s in measured), energy_steps=sum(s.energy_steps for s in measured),
        energy_samples=sum(s.energy_samples for s in measured), energy_s=sum(s.energy_s for s in measured),
        idle_w=statistics.fmean(idle) if idle else math.nan)


def run_spread(records: Sequence[BatchTiming]) -> tuple[int, float, list[float]]:
    """How many separate runs (a run's segment, for a ramp) `records` come from, the standard deviation of the
    logs of their steady medians (NaN with one run, or with a run of fewer than 3 steady steps), and those medians
    in the order the runs came."""
    by_run: dict[tuple[str, int], list[BatchTiming]] = {}
    for r in records:
        by_run.setdefault((r.run_id, r.segment), []).append(r)
    medians = []
    for run in by_run.values():
        s = summarize(run, run_id="", lane="", device="", status=Status.COMPLETED, flops_per_batch=1, wall_s=0.0)
        if s.n_batches >= 3 and s.median_ms > 0:
            medians.append(s.median_ms)
    logs = [math.log(m) for m in medians]
    return len(by_run), (statistics.stdev(logs) if len(logs) > 1 else math.nan), medians


def measure_again(pool: LanePool, lanes: Sequence[LaneSpec], point: tuple[RunConfig, RunResult, list[SweepRow]],
                  result: SweepResult, on_event: Callable[[LaneEvent], None] | None,
                  cancel: threading.Event) -> tuple[RunResult, list[SweepRow]]:
    """Measure a point a second time: each lane that completed it again gets a row over both runs' batches, with
    the runs' scatter (runs 2, between_runs), in place of its first row in `result`; a lane that did not keeps
    its first row. The rows returned are the pooled ones (a floor measured the first time is kept)."""
    config, first, before = point
    first_order = [name for name in first.lanes if name in {lane.name for lane in lanes}]
    again_order = sorted(lanes, key=lambda lane: -first_order.index(lane.name) if lane.name in first_order else 0)
    run, rows = measure_point(pool, again_order, config, result, on_event, cancel)
    had = {r.lane: r for r in before}
    pooled = []
    for row in rows:
        old = had.get(row.lane)
        if row.status != Status.COMPLETED or old is None:
            continue
        new = with_batches(row, steady_records(first, row.lane) + steady_records(run, row.lane),
                           [s for s in (lane_summary(first, row.lane), lane_summary(run, row.lane)) if s is not None])
        # The row keeps the first run's id: it holds that run's batches, and a reader of rows by run (the window's
        # findings) then takes it in place of the first row instead of counting those batches twice.
        pooled.append(dataclasses.replace(new, floor_ms=old.floor_ms, stage=old.stage, run_id=old.run_id))
    swap = {id(had[r.lane]): r for r in pooled}
    result.rows[:] = [swap.get(id(r), r) for r in result.rows]
    return run, pooled


def measure_pass(pool: LanePool, lanes: Sequence[LaneSpec], point: tuple[RunConfig, RunResult, list[SweepRow]],
                 earlier: Sequence[RunResult], result: SweepResult, on_event: Callable[[LaneEvent], None] | None,
                 cancel: threading.Event) -> tuple[RunResult, list[SweepRow]]:
    """One more pass at a point whose `earlier` passes' runs are given: each lane that measured it gets a row over
    every pass's batches, its runs and their medians in pass order (the one rule's passes), in place of its row in
    `result`; the row keeps its first run's id and its floor."""
    config, first, _ = point
    run, rows = measure_point(pool, lanes, config, result, on_event, cancel)
    current = {r.lane: r for r in result.rows if r.run_id == first.run_id}
    runs = [*earlier, run]
    pooled = []
    for row in rows:
        old = current.get(row.lane)
        if row.status != Status.COMPLETED or old is None:
            continue
        records = [rec for r in runs for rec in steady_records(r, row.lane)]
        summaries = [s for s in (lane_summary(r, row.lane) for r in runs) if s is not None]
        new = with_batches(row, records, summaries)
        pooled.append(dataclasses.replace(new, floor_ms=old.floor_ms, stage=old.stage, run_id=old.run_id))
    swap = {id(current[r.lane]): r for r in pooled}
    result.rows[:] = [swap.get(id(r), r) for r in result.rows]
    return run, pooled


def run_sweeps(pool: LanePool, lanes: Sequence[LaneSpec], specs: Sequence[SweepSpec], *,
               on_point: Callable[[PointMeasured], None] | None = None,
               on_event: Callable[[LaneEvent], None] | None = None,
               cancel: threading.Event | None = None) -> list[SweepResult]:
    """Run each spec (a sweep, or a sweep and its compare variant) on every lane, one lane at a time.

    `on_point` hears of every finished point with the progress over all specs; finished points
    are kept when `cancel` stops it.
    """
    cancel = cancel or threading.Event()
    total = lane_points(lanes, specs)
    done = 0
    results: list[SweepResult] = []
    # The lanes' imports overlap one another, and so does the making of their data; both end before the first point.
    pool.ready(lanes, cancel, data_of=specs[0].points()[0] if specs else None)
    for spec in specs:
        if cancel.is_set():
            break
        result = SweepResult(spec)
        results.append(result)
        if spec.calibrate:
            for lane in lanes:
                if cancel.is_set():
                    break
                result.calibration[lane.name] = pool.get(lane).calibrate(calibration_size(lane), 1.0, cancel)
        measured: list[tuple[RunConfig, RunResult, list[SweepRow]]] = []
        runs_of: dict[int, list[RunResult]] = {}  # each point's runs, pass by pass (passes > 1)
        for i, config in enumerate(spec.points()):
            if cancel.is_set():
                break
            run, rows = measure_point(pool, turn_order(lanes, i), config, result, on_event, cancel)
            if spec.floor:
                rows = with_floors(pool, lanes, config, rows, cancel)
            result.rows.extend(rows)
            measured.append((config, run, rows))
            done += len(lanes)  # every lane's turn at the point, measured or cut short: the estimate counts it
            if on_point is not None:
                on_point(PointMeasured(spec.variant, tuple(rows), run, done, total))
        points = list(enumerate(measured))
        for p in range(1, spec.passes):  # the passes after the first: the points in the reverse order each time
            for i, point in (reversed(points) if p % 2 else points):
                if cancel.is_set():
                    break
                earlier = runs_of.setdefault(i, [point[1]])
                run, rows = measure_pass(pool, turn_order(lanes, i + p), point, earlier, result, on_event, cancel)
                earlier.append(run)
                done += len(lanes)
                if on_point is not None:
                    on_point(PointMeasured(spec.variant, tuple(rows), run, done, total, again=True))
        for doubt in to_recheck(measured, [lane.name for lane in lanes], rechecks(spec, lanes)):
            if cancel.is_set():
                break
            run, rows = measure_again(pool, lanes, doubt, result, on_event, cancel)
            done += len(lanes)
            if on_point is not None:
                on_point(PointMeasured(spec.variant, tuple(rows), run, done, total, again=True))
        result.cancelled = cancel.is_set()
    return results


def with_floors(pool: LanePool, lanes: Sequence[LaneSpec], config: RunConfig, rows: list[SweepRow],
                cancel: threading.Event) -> list[SweepRow]:
    """The point's rows with each lane's floor (ms per step of an on-device loop); why not, where it has none."""
    out = []
    for row in rows:
        lane = next((spec for spec in lanes if spec.name == row.lane), None)
        if row.status != Status.COMPLETED or lane is None or cancel.is_set():
            out.append(row)
            continue
        floor_ms, why = measure_floor(pool, lane, config, cancel)
        note = f"no floor: {why}" if why and not cancel.is_set() else ""
        out.append(dataclasses.replace(row, floor_ms=floor_ms, reason=row.reason or note))
    return out


def results_so_far(specs: Sequence[SweepSpec], points: Sequence[PointMeasured]) -> list[SweepResult]:
    """What a sweep in progress has measured, shaped as its final results (for an export mid-sweep)."""
    return [SweepResult(spec, rows=[r for p in points if p.variant == spec.variant for r in p.rows],
                        runs=[p.run for p in points if p.variant == spec.variant]) for spec in specs]
