"""A refined sweep on real lanes: the coarse widths, then the widths core/study/refine.py asks for, measured through the
lane pool like any sweep point; rows are marked coarse or refine, and a width measured again adds its batches.
Points measured before on the same lanes with the same settings (a sweep, a ramp, a sweep file of this session:
core/study/measured.py) are lent, with their lanes' calibration: a width measured on every lane is not measured
again unless refinement asks that width for more batches."""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Callable, Sequence

from ..analysis.points import SweepPoint
from ..config import ConfigError, LaneSpec, RunConfig
from ..records import BatchTiming, LaneEvent, RunSummary, Status
from ..results import RunResult
from .refine import refine
from ..analysis.refinement import RefineTarget
from ..engine.pool import LanePool
from .saved import inspect_factory, inspecting_lane, with_factory
from .measured import Ledger, Measured, trimmed
from .sweep import (PointMeasured, SweepResult, SweepSpec, calibration_size, lane_summary, measure_point, steady_records,
                    with_batches, with_floors)
from ..files.sweeps.rows import SweepRow, curve_point, runs_along_batch
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


def point_config(spec: SweepSpec, x: int) -> RunConfig:
    """The config the point at x trains with: `spec` at that width (at that batch size, along batch size)."""
    (config,) = dataclasses.replace(spec, **({"batch_sizes": (x,)} if along_batch(spec) else {"widths": (x,)})).points()
    return config


def point_configs(spec: SweepSpec) -> dict[int, RunConfig]:
    """x → the config its point trains with, for each of `spec`'s coarse widths (batch sizes, along batch size)."""
    return {x: point_config(spec, x) for x in (spec.batch_sizes if along_batch(spec) else spec.widths)}


def run_refined_sweep(pool: LanePool, lanes: Sequence[LaneSpec], spec: SweepSpec, target: RefineTarget, *,
                      reuse: Ledger | None = None,
                      on_point: Callable[[PointMeasured], None] | None = None,
                      on_event: Callable[[LaneEvent], None] | None = None,
                      cancel: threading.Event | None = None,
                      clock: Callable[[], float] = time.monotonic) -> SweepResult:
    """Measure `spec`'s widths on every lane, then refine around each change of the faster lane. A sweep of one
    width over several batch sizes is refined along batch size: the batch sizes are its x (along_batch).

    The budget counts from the first point (calibration, if asked for, comes before it). Each
    PointMeasured reports `total` 0: how many points refinement will take is not known ahead. `reuse`: points
    measured before on these lanes (core/study/measured.py); a coarse width measured there with the config its
    point trains with is taken as it is (its rows keep the run that measured them), and gets more batches only
    when refinement asks that width for them.
    """
    check_refinable(lanes, [spec])
    cancel = cancel or threading.Event()
    points = _Points(pool, lanes, spec, reuse, on_point, on_event, cancel)
    # Their framework imports overlap one another, and so does the making of their data, before the first point.
    pool.ready(lanes, cancel, data_of=spec.points()[0])
    if spec.calibrate:
        points.calibrate()
    refined = refine(points.xs, points.measure, target, clock=clock, cancel=cancel)
    result = points.result
    unit = "samples per batch" if points.batch_axis else width_unit(spec.base.model.kind)
    result.refinement = dataclasses.replace(refined, unit=unit)
    result.cancelled = cancel.is_set()
    return result


class _Points:
    """The points of one refined sweep, in `result` as refinement asks for them (`measure`): each x measured on every
    lane, or lent from before (`reuse`, a coarse x), its rows marked coarse or refine; an x measured again adds its
    batches to those kept for it, and each row gets its lane's floor where the sweep asks for floors."""

    def __init__(self, pool: LanePool, lanes: Sequence[LaneSpec], spec: SweepSpec, reuse: Ledger | None,
                 on_point: Callable[[PointMeasured], None] | None, on_event: Callable[[LaneEvent], None] | None,
                 cancel: threading.Event) -> None:
        self.pool, self.lanes, self.spec, self.reuse = pool, lanes, spec, reuse
        self.on_point, self.on_event, self.cancel = on_point, on_event, cancel
        self.result = SweepResult(spec)
        self.batch_axis = along_batch(spec)
        self.xs = tuple(spec.batch_sizes) if self.batch_axis else spec.widths
        self.lent = reuse.lend(lanes, point_configs(spec)) if reuse is not None else {}
        self.kept: dict[tuple[str, int], list[BatchTiming]] = {}
        # Each kept point's runs, for its pooled energy: a point lent from before holds a run whose energy is not
        # known here (a summary without a reading), which leaves the pooled figure unknown rather than one run's.
        self.kept_summaries: dict[tuple[str, int], list[RunSummary]] = {}
        self.current = spec  # a model factory's spec gains each width a lane inspects before it is measured

    def calibrate(self) -> None:
        """Each lane's calibration: the one lent with its points, else timed now."""
        reuse, calibration = self.reuse, self.result.calibration
        for lane in self.lanes:
            if reuse is not None and self.lent and lane.name in reuse.calibration:
                calibration[lane.name] = reuse.calibration[lane.name]
            elif not self.cancel.is_set():
                calibration[lane.name] = self.pool.get(lane).calibrate(calibration_size(lane), 1.0, self.cancel)

    def measure(self, x: int, level: int) -> list[SweepPoint]:
        """The point at x on every lane (lent, at level 0, where it was measured before), as refinement reads it."""
        if level == 0 and x in self.lent:
            return self.take(x, self.lent.pop(x))
        config = self._config_at(x)
        if config is None:  # cancelled while a lane inspected the factory
            return []
        run, measured = measure_point(self.pool, self.lanes, config, self.result, self.on_event, self.cancel)
        rows = []
        for row in measured:
            records = self.kept.setdefault((row.lane, x), [])
            if row.status == Status.COMPLETED:
                records.extend(steady_records(run, row.lane))
                summary = lane_summary(run, row.lane)
                runs = self.kept_summaries.setdefault((row.lane, x), [])
                runs.extend([summary] if summary is not None else [])
                row = with_batches(row, records, runs)
            stage = "coarse" if x in self.xs and level == 0 else "refine"
            rows.append(dataclasses.replace(row, stage=stage))
        return self._add(x, config, rows, run)

    def _config_at(self, x: int) -> RunConfig | None:
        """The config the point at x trains with; a model factory's width a lane has not inspected yet is inspected
        first (its figures are its own width's). None: cancelled meanwhile."""
        factory = self.current.base.model.factory
        if factory is not None and not self.batch_axis and factory.at(x) is None:
            factory = inspect_factory(self.pool, inspecting_lane(self.lanes), factory, [x], self.cancel)
            self.current = dataclasses.replace(self.current, base=with_factory(self.current.base, factory))
            if factory.at(x) is None:
                return None
        return point_config(self.current, x)

    def take(self, x: int, points: list[Measured]) -> list[SweepPoint]:
        """A point measured before: each lane's row over every batch measured there, kept in case refinement
        asks for more; its run (a ramp's: trimmed to the widths taken) goes into the result's files."""
        rows = []
        for lane in self.lanes:
            mine = [m for m in points if m.lane == lane.name]
            records = self.kept.setdefault((lane.name, x), [])
            records.extend(r for m in mine for r in m.records)
            self.kept_summaries.setdefault((lane.name, x), []).append(RunSummary("", lane.name, "", Status.COMPLETED))
            cal = self.result.calibration.get(lane.name)
            row = dataclasses.replace(mine[-1].row, stage="coarse", variant=self.spec.variant,
                                      peak_gflops=cal.gflops if cal else math.nan)
            rows.append(with_batches(row, records))
        runs = _as_kept(points)
        self.result.runs.extend(run for run in runs if run not in self.result.runs)
        return self._add(x, points[0].config, rows, runs[-1], reused=True)

    def _add(self, x: int, config: RunConfig, rows: list[SweepRow], run: RunResult, *,
             reused: bool = False) -> list[SweepPoint]:
        """Add the point's rows (with their floors, where asked) to the result and say so; returns its usable
        points, as refinement reads them."""
        if self.spec.floor:
            rows = self._floors(x, config, rows)
        self.result.rows.extend(rows)
        if self.on_point is not None:
            self.on_point(PointMeasured(self.spec.variant, tuple(rows), run, len(self.result.rows), 0, reused=reused))
        return [curve_point(row, self.batch_axis) for row in rows if row.usable]

    def _floors(self, x: int, config: RunConfig, rows: list[SweepRow]) -> list[SweepRow]:
        """Each row with its lane's floor at x: the one measured there before (a width measured again for its
        lead, or a lent point that had one), else timed now (the anatomy's device_loop rung)."""
        had = {row.lane: row.floor_ms for row in self.result.rows + rows
               if (row.batch_size if self.batch_axis else row.width) == x and math.isfinite(row.floor_ms)}
        rows = [dataclasses.replace(row, floor_ms=had[row.lane]) if row.lane in had else row for row in rows]
        missing = [row for row in rows if row.lane not in had]
        timed = {row.lane: row for row in with_floors(self.pool, self.lanes, config, missing, self.cancel)} \
            if missing else {}
        return [timed.get(row.lane, row) for row in rows]


def _as_kept(points: Sequence[Measured]) -> list[RunResult]:
    """The runs a lent width's rows name, as the refinement's files keep them: a sweep point's run whole, a ramp's
    (several segments on a lane) trimmed to this width's segments, so no batch is written twice."""
    out: list[RunResult] = []
    for run in {id(m.run): m.run for m in points}.values():
        whole = all(len(lane.segments) <= 1 for lane in run.lanes.values())
        out.append(run if whole else trimmed(run, {(m.lane, m.segment) for m in points if m.run is run}))
    return out
