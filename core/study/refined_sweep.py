"""A refined sweep on real lanes: the coarse widths, then the widths core/study/refine.py asks for, measured through the
lane pool like any sweep point; rows are marked coarse or refine, and a width measured again adds its batches."""
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
from .sweep import PointMeasured, SweepResult, SweepSpec, calibration_size, measure_point, with_floors
from ..files.sweep_rows import SweepRow


def check_refinable(lanes: Sequence[LaneSpec], specs: Sequence[SweepSpec]) -> SweepSpec:
    """The one sweep a refinement can follow, or ConfigError saying what stands in the way."""
    if len(lanes) < 2:
        raise ConfigError("refining looks for the width where the faster lane changes: choose at least two lanes")
    if len(specs) != 1:
        raise ConfigError("refining follows one sweep: set Compare with to none (drop --compare)")
    spec = specs[0]
    if len(spec.batch_sizes) > 1:
        raise ConfigError("refining follows one curve per lane: give a single batch size")
    if len(set(spec.widths)) < 2:
        raise ConfigError("refining needs at least two widths to look between, e.g. 16,256,2048")
    return spec


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


def run_refined_sweep(pool: LanePool, lanes: Sequence[LaneSpec], spec: SweepSpec, target: RefineTarget, *,
                      on_point: Callable[[PointMeasured], None] | None = None,
                      on_event: Callable[[LaneEvent], None] | None = None,
                      cancel: threading.Event | None = None,
                      clock: Callable[[], float] = time.monotonic) -> SweepResult:
    """Measure `spec`'s widths on every lane, then refine around each change of the faster lane.

    The budget counts from the first point (calibration, if asked for, comes before it). Each
    PointMeasured reports `total` 0: how many points refinement will take is not known ahead.
    """
    check_refinable(lanes, [spec])
    cancel = cancel or threading.Event()
    result = SweepResult(spec)
    pool.ready(lanes, cancel)  # their framework imports overlap one another, and end before the first point
    if spec.calibrate:
        for lane in lanes:
            if not cancel.is_set():
                result.calibration[lane.name] = pool.get(lane).calibrate(calibration_size(lane), 1.0, cancel)
    kept: dict[tuple[str, int], list[BatchTiming]] = {}

    def measure(width: int, level: int) -> list[SweepPoint]:
        (config,) = dataclasses.replace(spec, widths=(width,)).points()
        run, measured = measure_point(pool, lanes, config, result, on_event, cancel)
        rows = []
        for row in measured:
            records = kept.setdefault((row.lane, width), [])
            if row.status == Status.COMPLETED:
                records.extend(r for r in run.lanes[row.lane].records if not r.warmup)
                row = with_batches(row, records)
            stage = "coarse" if width in spec.widths and level == 0 else "refine"
            rows.append(dataclasses.replace(row, stage=stage))
        if spec.floor:
            rows = with_floors(pool, lanes, config, rows, cancel)
        result.rows.extend(rows)
        if on_point is not None:
            on_point(PointMeasured(spec.variant, tuple(rows), run, len(result.rows), 0))
        return [row.point() for row in rows if row.usable]

    result.refinement = refine(spec.widths, measure, target, clock=clock, cancel=cancel)
    result.cancelled = cancel.is_set()
    return result
