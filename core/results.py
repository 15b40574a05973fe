"""What a run produced, lane by lane and segment by segment: the unit the files, the map and the history hold.

LaneResult.status is the one rule for a lane's state; every view of a run (the CLI, sweeps, the
window, the files) reads it from here.
"""
from __future__ import annotations

import datetime as _dt
import secrets
from dataclasses import dataclass, field
from typing import Iterable

from .config import RunConfig, Schedule
from .analysis.stats import summarize
from .records import (BatchTiming, LaneEnded, LaneEvent, LaneInterrupted, RunFailed, RunFinished, RunStarted,
                      RunSummary, SegmentEnded, SegmentStarted, Status, TurnEnded, TurnResumed)

LANE_STATUSES = (Status.WAITING, Status.RUNNING, Status.COMPLETED, Status.CANCELLED, Status.FAILED)


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass
class Segment:
    """A stretch of one lane's run on one model: when it started and, once over, its summary."""

    started: SegmentStarted
    ended: SegmentEnded | None = None
    # Lanes taking turns: when it paused mid-segment and when it went on (time.time()), in order.
    pauses: list[tuple[float, float | None]] = field(default_factory=list)

    @property
    def index(self) -> int:
        return self.started.segment

    @property
    def label(self) -> str:
        """The hidden widths, "512-512", as the plot marks the segment ("as saved": a saved model has none)."""
        return "-".join(map(str, self.started.widths)) or "as saved"

    def named(self, by_batch: bool) -> str:
        """The segment as a view names it beside the run's others: its widths, or in a ramp through batch sizes
        (by_batch_size) its batch size, "batch 64"."""
        return f"batch {self.started.batch_size:,}" if by_batch else self.label

    def span(self, now: float) -> tuple[float, float]:
        """When it ran (time.time()), up to `now` while it still runs."""
        return self.started.at, self.ended.at if self.ended is not None else now

    def spans(self, now: float) -> list[tuple[float, float]]:
        """When it trained: its span less the pauses while other lanes took their turns."""
        begin, end = self.span(now)
        out = []
        for paused, resumed in self.pauses:
            out.append((begin, paused))
            begin = resumed if resumed is not None else end
        out.append((begin, end))
        return [(a, b) for a, b in out if b > a]


@dataclass
class LaneResult:
    """Everything one lane produced for one run; kept even when the run failed or was cancelled."""

    lane: str
    started: RunStarted | None = None
    records: list[BatchTiming] = field(default_factory=list)
    summary: RunSummary | None = None
    failure: str = ""  # why the lane failed, or why it stopped without a summary
    stopped: bool = False  # a stop or a close ended it before it could report: cancelled, not failed
    segments: list[Segment] = field(default_factory=list)

    @property
    def status(self) -> Status:
        """The one rule for a lane's state, used by the CLI, sweeps, the window and the files:
        waiting | running | completed | cancelled | failed."""
        if self.summary is not None:
            return Status(self.summary.status)
        if self.stopped:
            return Status.CANCELLED
        if self.failure:
            return Status.FAILED
        return Status.RUNNING if self.started is not None or self.records else Status.WAITING

    def apply(self, event: LaneEvent) -> None:
        """Fold in one of this lane's events."""
        if isinstance(event, BatchTiming):
            self.records.append(event)
        elif isinstance(event, SegmentStarted):
            self.segments.append(Segment(event))
        elif isinstance(event, SegmentEnded):
            segment = self._segment(event.segment)
            if segment is not None:
                segment.ended = event
        elif isinstance(event, TurnEnded):
            segment = self._segment(event.segment)
            if segment is not None:
                segment.pauses.append((event.at, None))
        elif isinstance(event, TurnResumed):
            segment = self._segment(event.segment)
            if segment is not None and segment.pauses and segment.pauses[-1][1] is None:
                segment.pauses[-1] = (segment.pauses[-1][0], event.at)
        elif isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, RunFinished):
            self.summary = event.summary
        elif isinstance(event, RunFailed):
            self.summary, self.failure = event.summary, event.reason
        elif isinstance(event, LaneEnded):
            self.summary = self._last_segment_summary(event)
            self.failure = event.reason if event.status == Status.FAILED else ""
        elif isinstance(event, LaneInterrupted):
            if self.summary is None and not self.failure:
                self.stopped, self.failure = True, event.reason

    def _segment(self, index: int) -> Segment | None:
        return next((s for s in reversed(self.segments) if s.index == index), None)

    def _last_segment_summary(self, end: LaneEnded) -> RunSummary:
        """A lane's own summary, as it would have sent it: its last segment's figures (a ramp's widths are
        not pooled), from the records folded here."""
        last = self.records[-1].segment if self.records else 1
        segment = next((s for s in self.segments if s.index == last), None)
        return summarize([r for r in self.records if r.segment == last], run_id=end.run_id, lane=self.lane,
                         device=self.started.device if self.started is not None else self.lane,
                         status=end.status, reason=end.reason,
                         flops_per_batch=segment.started.flops_per_batch if segment else end.flops_per_batch,
                         wall_s=end.wall_s)


@dataclass
class RunResult:
    """One run of one config (or a plan of them) across lanes: the unit the CSV, the map and the history hold."""

    run_id: str
    config: RunConfig
    schedule: Schedule
    started_at: str
    lanes: dict[str, LaneResult]
    ended_at: str = ""
    # This machine's run-to-run noise per lane when the run began (core/files/noise.py: SD of logs, as the latest
    # sweep here measured it), and which sweep that was: what the run's verdict is bounded by. Empty: none known.
    run_noise: dict[str, float] = field(default_factory=dict)
    run_noise_from: str = ""

    def __post_init__(self) -> None:
        self.schedule = Schedule.named(self.schedule)  # a file's word, or an old name ("concurrent"), as the type


def by_batch_size(segments: Iterable[Segment]) -> bool:
    """Whether these segments (a run's, over its lanes) differ in batch size at one model: a ramp through batch
    sizes, whose segments are named by their batch size (Segment.named)."""
    seen = list(segments)
    return len({s.started.batch_size for s in seen}) > 1 and len({s.started.widths for s in seen}) == 1
