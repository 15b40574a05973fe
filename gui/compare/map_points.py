"""What the crossover map plots of a run: a point per lane and segment, and what kind of point it is.

A run on one model gives a point per lane; a ramp or a run whose model changed while it trained
gives one per segment. A point is provisional while its segment runs (it firms up as batches
arrive), cut short when its segment was stopped, or switched before MIN_HELD_BATCHES steady batches, and
contended when it overlapped in time with another lane on the same CPU cores.

Like with like: a lane's line joins only its completed (and provisional) points of one kind of model
(its family, number of layers and batch size), the latest at each width; cut-short and contended points are
drawn apart and never joined, and crossings are found only between completed points of one kind. So
removing a run removes exactly its points, and nothing hidden behind them comes back.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Iterable

from ...core.config import Task
from ...core.families import Family, axis_words
from ...core.analysis.points import SweepPoint
from ...core.analysis.contention import contended
from ...core.files.sweeps.rows import MIN_HELD_BATCHES, SweepRow, segment_status
from ...core.records import RunSummary, Status
from ...core.results import RunResult, Segment
from ...core.words.numbers import fmt_count

Shape = tuple[int, int, str, str]  # hidden layers, batch size, kind of model, task (train or predict)
# A segment that is not complete (still measuring) adds its point only with this many steady batches: the same count
# that makes a width the user dragged away from a completed point (core/files/sweeps/rows.py).
MIN_STEADY_BATCHES = MIN_HELD_BATCHES


class PointKind(str, Enum):
    """What a map point rests on: a finished stretch, one still measuring, one stopped early, or one measured while
    another lane trained on the same cores. Only completed points are crossed; completed and provisional ones are
    joined on their lane's line."""

    COMPLETED = "completed"
    PROVISIONAL = "provisional"
    CUT_SHORT = "cut short"
    CONTENDED = "contended"

    def __str__(self) -> str:
        return self.value


KINDS = tuple(PointKind)
_RANK = {PointKind.COMPLETED: 3, PointKind.CONTENDED: 2, PointKind.PROVISIONAL: 1, PointKind.CUT_SHORT: 1}


@dataclass(frozen=True)
class MapPoint:
    point: SweepPoint  # its width is the model's hidden width (its first layer's), its FLOPs per batch beside
    run_id: str
    kind: PointKind
    order: int = 0  # later points win among points of the same kind
    widths: tuple[int, ...] = ()
    family: str = "mlp"  # the kind of model (core/families.py kind_word): mlp, cnn, lstm, gru, transformer 4 heads
    task: str = "train"  # a training step's ms, or ("predict") one call's: never joined or crossed with each other

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PointKind(self.kind))  # its word ("completed") as the member

    @property
    def lane(self) -> str:
        return self.point.lane

    @property
    def rank(self) -> tuple[int, int]:
        return _RANK[self.kind], self.order

    @property
    def shape(self) -> Shape:
        """The kind of model and what was timed: (hidden layers, batch size, family, task). Only points of one shape
        are joined or crossed."""
        return len(self.widths), self.point.batch_size, self.family, self.task

    @property
    def uniform(self) -> bool:
        """Every hidden layer as wide as the first: its width alone places it along the map."""
        return bool(self.widths) and len(set(self.widths)) == 1

    @property
    def joined(self) -> bool:
        """Drawn on its lane's line (completed or provisional); cut-short and contended points stand apart."""
        return self.kind in (PointKind.COMPLETED, PointKind.PROVISIONAL)


SummaryOf = Callable[[str, Segment], RunSummary]


def run_points(result: RunResult, summary_of: SummaryOf | None = None, now: float | None = None) -> list[MapPoint]:
    """The run's points. `summary_of(lane, segment)` gives a running segment's figures so far (a live
    run's tracker); without it only ended segments count."""
    now = time.time() if now is None else now
    crowded = contended(result, now)
    cfg = result.config
    if cfg.train.arrival_rate is not None:
        return []  # a rate's answer is which lane held it (core/words/rates.py), not a call's median here
    points = []
    for name, lane in result.lanes.items():
        if lane.segments:
            for segment in lane.segments:
                summary = segment.ended.summary if segment.ended is not None else (
                    summary_of(name, segment) if summary_of is not None else None)
                kind = _kind(summary, (name, segment.index) in crowded, firm=segment.ended is not None)
                if kind is not None and summary is not None:
                    points.append(_point(name, summary, segment.started.widths, segment.started.flops_per_batch,
                                         segment.started.batch_size, result.run_id, kind, cfg.model.kind,
                                         cfg.train.task))
        elif lane.summary is not None:
            kind = _kind(lane.summary, (name, 1) in crowded, firm=True)
            if kind is not None:
                points.append(_point(name, lane.summary, cfg.model.widths, cfg.flops_per_batch,
                                     cfg.train.batch_size, result.run_id, kind, cfg.model.kind, cfg.train.task))
    return points


def firm_rows(result: RunResult, now: float | None = None) -> list[SweepRow]:
    """The run's completed points that no other lane crowded, as the findings take them (core/files/findings.py):
    a live run's ended segments as they end. Cut-short and contended points are drawn, never judged."""
    if result.config.train.arrival_rate is not None:
        return []
    crowded = contended(result, time.time() if now is None else now)
    rows = []
    for name, lane in result.lanes.items():
        if lane.segments:
            rows += [SweepRow.from_segment(result, name, seg) for seg in lane.segments
                     if seg.ended is not None and (name, seg.index) not in crowded]
        elif lane.summary is not None and (name, 1) not in crowded:
            rows.append(SweepRow.from_result(result, name))
    return [r for r in rows if r.status == Status.COMPLETED]


def _kind(s: RunSummary | None, crowded: bool, firm: bool) -> PointKind | None:
    if s is None or not (math.isfinite(s.median_ms) and s.median_ms > 0) or s.n_batches < 1 or s.status == Status.FAILED:
        return None
    complete = firm and segment_status(s) == Status.COMPLETED  # a width held long enough, then dragged on, counts
    if not complete and s.n_batches < MIN_STEADY_BATCHES:
        return None
    if crowded:
        return PointKind.CONTENDED
    return PointKind.COMPLETED if complete else (PointKind.PROVISIONAL if not firm else PointKind.CUT_SHORT)


def _point(lane: str, s: RunSummary, widths: tuple[int, ...], flops: int, batch_size: int, run_id: str,
           kind: PointKind, family: str, task: str) -> MapPoint:
    return MapPoint(SweepPoint(lane=lane, width=widths[0] if widths else 0, flops_per_batch=flops,
                               median_ms=s.median_ms, p10_ms=s.p10_ms, p90_ms=s.p90_ms, device=s.device,
                               batch_size=batch_size, n_batches=s.n_batches, kind=family), run_id, kind,
                    widths=tuple(widths),
                    family=family, task=task)


Line = tuple[str, Shape]  # (lane, shape): one line on the map


def lines(points: Iterable[MapPoint]) -> dict[Line, list[MapPoint]]:
    """Per lane and shape, sorted by FLOPs per batch, its joined points: at each model the best kind
    (completed over provisional), the latest among equals."""
    found: dict[Line, dict[tuple[int, ...] | float, MapPoint]] = {}
    for i, p in enumerate(points):
        if not p.joined:
            continue
        p = dataclasses.replace(p, order=i)
        at = found.setdefault((p.lane, p.shape), {})
        key = p.widths or p.point.flops_per_batch
        old = at.get(key)
        if old is None or p.rank >= old.rank:
            at[key] = p
    return {line: sorted(by_model.values(), key=lambda p: p.point.flops_per_batch)
            for line, by_model in sorted(found.items())}


def apart(points: Iterable[MapPoint]) -> list[MapPoint]:
    """The cut-short and contended points: drawn where they are, joined to nothing, crossed by nothing."""
    return [p for p in points if not p.joined]


def crossing_points(drawn: dict[Line, list[MapPoint]]) -> dict[Shape, list[SweepPoint]]:
    """Per shape, the completed points of uniform width, the one rule's input: like with like only."""
    out: dict[Shape, list[SweepPoint]] = {}
    for (_lane, shape), pts in drawn.items():
        out.setdefault(shape, []).extend(p.point for p in pts if p.kind is PointKind.COMPLETED and p.uniform)
    return out


def shape_words(shape: Shape) -> str:
    """A kind of model in words: "1 layer, batch 128", "cnn, 2 blocks, batch 32", "predict, 1 layer, batch 8"."""
    layers, batch, family, task = shape
    timed = "predict, " if task == Task.PREDICT else ""
    if family == Family.MLP:
        return f"{timed}{fmt_count(layers, 'layer')}, batch {batch}"
    return f"{timed}{family}, {axis_words(family, layers).split('(', 1)[1]}, batch {batch}"
