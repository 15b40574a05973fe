"""What the crossover map plots of a run: a point per lane and segment, and what kind of point it is.

A run on one model gives a point per lane; a ramp or a run whose model changed while it trained
gives one per segment. A point is provisional while its segment runs (it firms up as batches
arrive), cut short when its segment was stopped or switched before its budget ran out, and
contended when it overlapped in time with another lane on the same CPU cores. Where one lane has
several points at a size, the map keeps the best kind (completed and uncontended first), the
latest among equals: a run cut short never replaces a completed one.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from ...core.analysis.points import SweepPoint
from ...core.analysis.contention import contended
from ...core.records import RunSummary
from ...core.results import RunResult, Segment
from ...core.records import Status

MIN_STEADY_BATCHES = 10  # a segment that is not complete adds its point only with at least this many steady batches
KINDS = ("completed", "provisional", "cut short", "contended")
_RANK = {"completed": 3, "contended": 2, "provisional": 1, "cut short": 1}


@dataclass(frozen=True)
class MapPoint:
    point: SweepPoint
    run_id: str
    kind: str  # one of KINDS
    order: int = 0  # later points win among points of the same kind

    @property
    def lane(self) -> str:
        return self.point.lane

    @property
    def rank(self) -> tuple[int, int]:
        return _RANK[self.kind], self.order


SummaryOf = Callable[[str, Segment], RunSummary]


def run_points(result: RunResult, summary_of: SummaryOf | None = None, now: float | None = None) -> list[MapPoint]:
    """The run's points. `summary_of(lane, segment)` gives a running segment's figures so far (a live
    run's tracker); without it only ended segments count."""
    now = time.time() if now is None else now
    crowded = contended(result, now)
    cfg = result.config
    points = []
    for name, lane in result.lanes.items():
        if lane.segments:
            for segment in lane.segments:
                summary = segment.ended.summary if segment.ended is not None else (
                    summary_of(name, segment) if summary_of is not None else None)
                kind = _kind(summary, (name, segment.index) in crowded, firm=segment.ended is not None)
                if kind and summary is not None:  # _kind gives "" for no summary
                    points.append(_point(name, summary, segment.started.flops_per_batch,
                                         segment.started.batch_size, result.run_id, kind))
        elif lane.summary is not None:
            kind = _kind(lane.summary, (name, 1) in crowded, firm=True)
            if kind:
                points.append(_point(name, lane.summary, cfg.flops_per_batch, cfg.train.batch_size,
                                     result.run_id, kind))
    return points


def _kind(s: RunSummary | None, crowded: bool, firm: bool) -> str:
    if s is None or not (math.isfinite(s.median_ms) and s.median_ms > 0) or s.n_batches < 1 or s.status == Status.FAILED:
        return ""
    complete = firm and s.status == Status.COMPLETED
    if not complete and s.n_batches < MIN_STEADY_BATCHES:
        return ""
    if crowded:
        return "contended"
    return "completed" if complete else ("provisional" if not firm else "cut short")


def _point(lane: str, s: RunSummary, flops: int, batch_size: int, run_id: str, kind: str) -> MapPoint:
    # The key find_crossovers matches lanes by (`width`) is the FLOPs per batch: identical for the same
    # model and batch on every lane, and growing along the map's x axis.
    return MapPoint(SweepPoint(lane=lane, width=flops, flops_per_batch=flops, median_ms=s.median_ms,
                               p10_ms=s.p10_ms, p90_ms=s.p90_ms, device=s.device, batch_size=batch_size,
                               n_batches=s.n_batches), run_id, kind)


def best_by_lane(points: Iterable[MapPoint]) -> dict[str, list[MapPoint]]:
    """Per lane, sorted by size, the point kept at each size: the best kind, the latest among equals."""
    lanes: dict[str, dict[int, MapPoint]] = {}
    for i, p in enumerate(points):
        p = MapPoint(p.point, p.run_id, p.kind, i)
        at = lanes.setdefault(p.lane, {})
        old = at.get(p.point.width)
        if old is None or p.rank >= old.rank:
            at[p.point.width] = p
    return {lane: [by_key[k] for k in sorted(by_key)] for lane, by_key in sorted(lanes.items())}
