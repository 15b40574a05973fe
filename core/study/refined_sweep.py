"""A refined sweep on real lanes: the coarse widths, then the widths core/study/refine.py asks for, measured through the
lane pool like any sweep point; rows are marked coarse or refine, and a width measured again adds its batches.
A sweep just measured on the same lanes and settings lends its points (and its calibration): a width it measured
on every lane is not measured again unless refinement asks that width for more batches."""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Callable, Sequence

from ..analysis.points import SweepPoint
from ..analysis.stats import summarize
from ..config import ConfigError, LaneSpec
from ..records import BatchTiming, LaneEvent, Status
from .refine import refine
from ..analysis.leads import RefineTarget
from ..engine.pool import LanePool
from .saved import inspect_factory, inspecting_lane, with_factory
from .sweep import PointMeasured, SweepResult, SweepSpec, calibration_size, measure_point, with_floors
from ..files.sweep_rows import SweepRow, curve_point, runs_along_batch
from ..words.verdict import width_unit


def check_refinable(lanes: Sequence[LaneSpec], specs: Sequence[SweepSpec]) -> SweepSpec:
    """The one sweep a refinement can follow, or ConfigError saying what stands in the way."""
    if len(lanes) < 2:
        raise ConfigError("refining looks for the width where the faster lane changes: choose at least two lanes")
    if len(specs) != 1:
        raise ConfigError("refining follows one sweep: set Compare with to none (drop --compare)")
    spec = specs[0]
    if along_batch(spec):
        return spec
    if len(spec.batch_sizes) > 1:
        raise ConfigError("refining follows one curve per lane: give a single batch size (or a single width, to "
                          "refine along batch size)")
    if len(set(spec.widths)) < 2:
        raise ConfigError("refining needs at least two widths to look between, e.g. 16,256,2048")
    return spec


def along_batch(spec: SweepSpec) -> bool:
    """A sweep of one width over several batch sizes: its x, and what refinement adds, is the batch size (the rule
    rows follow too: runs_along_batch). A refinement needs two batch sizes to look between, a saved model too."""
    return runs_along_batch(spec.widths, spec.batch_sizes, spec.base.model.kind) and len(set(spec.batch_sizes)) > 1


def with_batches(row: SweepRow, records: Sequence[BatchTiming]) -> SweepRow:
    """The row with its timing statistics over `records`: every steady batch measured at its width so far, summed
    up as a run's are (analysis.summarize)."""
    s = summarize(records, run_id=row.run_id, lane=row.lane, device=row.device, status=row.status,
                  flops_per_batch=row.flops_per_batch, wall_s=0.0)
    if s.n_batches == 0:
        return row
    return dataclasses.replace(
        row, median_ms=s.median_ms, p10_ms=s.p10_ms, p90_ms=s.p90_ms, mad_ms=s.mad_ms, n_batches=s.n_batches,
        gflops=s.gflops, samples_per_s=s.samples_per_s,
        peak_share=s.gflops / row.peak_gflops if row.peak_gflops > 0 else math.nan)


def reusable(previous: SweepResult | None, lanes: Sequence[LaneSpec], spec: SweepSpec) -> dict[int, list[SweepRow]]:
    """The widths of `previous` (a sweep measured on these `lanes`: the caller knows) that `spec` may take as
    measured: same settings but the widths, one batch size, and a completed row on every lane. Width → rows."""
    if previous is None or previous.cancelled and not previous.rows:
        return {}
    same = dataclasses.replace(previous.spec, widths=spec.widths, calibrate=spec.calibrate) == spec
    if not same or len(previous.spec.batch_sizes) > 1:
        return {}
    names, measured_in = {lane.name for lane in lanes}, {run.run_id: run for run in previous.runs}
    by_width: dict[int, list[SweepRow]] = {}
    for row in previous.rows:
        run = measured_in.get(row.run_id)
        if row.status == Status.COMPLETED and row.lane in names and row.usable and run is not None \
                and row.lane in run.lanes:
            by_width.setdefault(row.width, []).append(row)
    return {w: rows for w, rows in by_width.items() if {r.lane for r in rows} == names and w in spec.widths}


def run_refined_sweep(pool: LanePool, lanes: Sequence[LaneSpec], spec: SweepSpec, target: RefineTarget, *,
                      reuse: SweepResult | None = None,
                      on_point: Callable[[PointMeasured], None] | None = None,
                      on_event: Callable[[LaneEvent], None] | None = None,
                      cancel: threading.Event | None = None,
                      clock: Callable[[], float] = time.monotonic) -> SweepResult:
    """Measure `spec`'s widths on every lane, then refine around each change of the faster lane. A sweep of one
    width over several batch sizes is refined along batch size: the batch sizes are its x (along_batch).

    The budget counts from the first point (calibration, if asked for, comes before it). Each
    PointMeasured reports `total` 0: how many points refinement will take is not known ahead. `reuse`: a sweep
    measured just before on the same lanes (the caller's word); its points at the coarse widths are taken as they
    are (their rows keep the run_id of the run that measured them) — see `reusable`.
    """
    check_refinable(lanes, [spec])
    cancel = cancel or threading.Event()
    result = SweepResult(spec)
    batch_axis = along_batch(spec)
    xs = tuple(spec.batch_sizes) if batch_axis else spec.widths
    lent = {} if batch_axis else reusable(reuse, lanes, spec)
    runs = {run.run_id: run for run in reuse.runs} if reuse is not None else {}
    # Their framework imports overlap one another, and so does the making of their data, before the first point.
    pool.ready(lanes, cancel, data_of=spec.points()[0])
    if spec.calibrate:
        for lane in lanes:
            if reuse is not None and lent and lane.name in reuse.calibration:
                result.calibration[lane.name] = reuse.calibration[lane.name]
            elif not cancel.is_set():
                result.calibration[lane.name] = pool.get(lane).calibrate(calibration_size(lane), 1.0, cancel)
    kept: dict[tuple[str, int], list[BatchTiming]] = {}
    current = [spec]  # a model factory's spec gains each width a lane inspects before it is measured

    def measure(x: int, level: int) -> list[SweepPoint]:
        if level == 0 and x in lent:
            return take(lent.pop(x))
        factory = current[0].base.model.factory
        if factory is not None and not batch_axis and factory.at(x) is None:  # its figures are its own width's
            factory = inspect_factory(pool, inspecting_lane(lanes), factory, [x], cancel)
            current[0] = dataclasses.replace(current[0], base=with_factory(current[0].base, factory))
            if factory.at(x) is None:  # cancelled
                return []
        (config,) = dataclasses.replace(current[0], **({"batch_sizes": (x,)} if batch_axis else {"widths": (x,)})).points()
        run, measured = measure_point(pool, lanes, config, result, on_event, cancel)
        rows = []
        for row in measured:
            records = kept.setdefault((row.lane, x), [])
            if row.status == Status.COMPLETED:
                records.extend(r for r in run.lanes[row.lane].records if not r.warmup)
                row = with_batches(row, records)
            stage = "coarse" if x in xs and level == 0 else "refine"
            rows.append(dataclasses.replace(row, stage=stage))
        if spec.floor:
            rows = with_floors(pool, lanes, config, rows, cancel)
        result.rows.extend(rows)
        if on_point is not None:
            on_point(PointMeasured(spec.variant, tuple(rows), run, len(result.rows), 0))
        return [curve_point(row, batch_axis) for row in rows if row.usable]

    def take(rows: list[SweepRow]) -> list[SweepPoint]:
        """A point measured before: its rows as they are, its batches kept in case refinement asks for more."""
        taken = []
        for row in rows:
            run = runs[row.run_id]  # reusable() lends only rows whose run it holds
            kept.setdefault((row.lane, row.width), []).extend(r for r in run.lanes[row.lane].records if not r.warmup)
            if run not in result.runs:
                result.runs.append(run)
            taken.append(dataclasses.replace(row, stage="coarse"))
        result.rows.extend(taken)
        if on_point is not None:
            on_point(PointMeasured(spec.variant, tuple(taken), runs[taken[0].run_id], len(result.rows), 0,
                                   reused=True))
        return [row.point() for row in taken if row.usable]

    refined = refine(xs, measure, target, clock=clock, cancel=cancel)
    unit = "samples per batch" if batch_axis else width_unit(spec.base.model.kind)
    result.refinement = dataclasses.replace(refined, unit=unit)
    result.cancelled = cancel.is_set()
    return result
