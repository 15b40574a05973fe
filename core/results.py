"""What a run produced, lane by lane and segment by segment: the unit the files, the map and the history hold.

LaneResult.status is the one rule for a lane's state; every view of a run (the CLI, sweeps, the
window, the files) reads it from here.
"""
from __future__ import annotations

import datetime as _dt
import secrets
from dataclasses import dataclass, field

from .config import RunConfig
from .records import (BatchTiming, LaneEvent, RunFailed, RunFinished, RunStarted, RunSummary, SegmentEnded,
                      SegmentStarted)

LANE_STATUSES = ("waiting", "running", "completed", "cancelled", "failed")


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass
class Segment:
    """A stretch of one lane's run on one model: when it started and, once over, its summary."""

    started: SegmentStarted
    ended: SegmentEnded | None = None

    @property
    def index(self) -> int:
        return self.started.segment

    @property
    def label(self) -> str:
        """The hidden widths, "512-512", as the plot marks the segment."""
        return "-".join(map(str, self.started.widths))

    def span(self, now: float) -> tuple[float, float]:
        """When it ran (time.time()), up to `now` while it still runs."""
        return self.started.at, self.ended.at if self.ended is not None else now


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
    def status(self) -> str:
        """The one rule for a lane's state, used by the CLI, sweeps, the window and the files:
        waiting | running | completed | cancelled | failed."""
        if self.summary is not None:
            return self.summary.status
        if self.stopped:
            return "cancelled"
        if self.failure:
            return "failed"
        return "running" if self.started is not None or self.records else "waiting"

    def apply(self, event: LaneEvent) -> None:
        """Fold in one of this lane's events."""
        if isinstance(event, BatchTiming):
            self.records.append(event)
        elif isinstance(event, SegmentStarted):
            self.segments.append(Segment(event))
        elif isinstance(event, SegmentEnded):
            segment = next((s for s in reversed(self.segments) if s.index == event.segment), None)
            if segment is not None:
                segment.ended = event
        elif isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, RunFinished):
            self.summary = event.summary
        elif isinstance(event, RunFailed):
            self.summary, self.failure = event.summary, event.reason


@dataclass
class RunResult:
    """One run of one config (or a plan of them) across lanes: the unit the CSV, the map and the history hold."""

    run_id: str
    config: RunConfig
    schedule: str
    started_at: str
    lanes: dict[str, LaneResult]
    ended_at: str = ""
