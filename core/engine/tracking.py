"""A run as its lanes' events arrive: the RunResult that files, summaries and the window read, built event by event.

A run's records are folded once, here: the conductor only tells (core/engine/conductor.py), and
whoever carries out a run folds its events into one tracker — run_comparison for the CLI and the
studies, the window's LiveRun (gui/live_run.py) on its own thread. The tracker has the final shape
at every moment, so a run cut short by a close, a signal or a crash is saved exactly as a finished
one would be.
"""
from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import Iterable, Sequence

from ..config import ConfigError, LaneSpec, RunConfig, Schedule
from ..records import LANE_ENDS, LANE_EVENTS, BatchTiming, LaneEvent, RunSummary, Status, TurnEnded, now_iso
from ..run_stats import summarize
from ..results import LaneResult, RunResult, Segment


def plan_of(result: RunResult) -> tuple[RunConfig, ...]:
    """The models a run trained, in order (its config alone when it had one)."""
    segments = max((lane.segments for lane in result.lanes.values()), key=len, default=[])
    if len(segments) < 2:
        return (result.config,)
    cfg = result.config
    return tuple(dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, widths=s.started.widths),
                                     train=dataclasses.replace(cfg.train, batch_size=s.started.batch_size))
                 for s in segments)


class Between(str, Enum):
    """A running lane between its batches (RunTracker.phase)."""

    FINISHING = "finishing"  # every batch measured: the lane tidies up before it reports
    SEGMENTS = "between segments"  # a plan's segment done, waiting for its turn
    TURNS = "between turns"  # paused mid-segment while another lane takes its turn

    def __str__(self) -> str:
        return self.value


class RunTracker:
    """Folds lane events into a RunResult. Subclasses hear of new records through `records_added`."""

    def __init__(self, run_id: str, config: RunConfig, specs: list[LaneSpec], schedule: Schedule,
                 started_at: str, plan: Sequence[RunConfig] = ()) -> None:
        self.config = config
        self.plan = tuple(plan) or (config,)  # a ramp's models, in order
        self.specs = list(specs)
        self.result = RunResult(run_id, config, schedule, started_at,
                                {s.name: LaneResult(s.name) for s in specs})
        self.finished = False
        self.failure = ""  # the whole run could not be carried out (a lane's own failure is in its result)
        self.versions = {name: 0 for name in self.result.lanes}  # bumped on every change to a lane
        self._summaries: dict[tuple[str, int], tuple[int, RunSummary]] = {}
        self._held: set[str] = set()  # lanes paused mid-segment until their next turn
        # Where each segment's records begin in the lane's list (they arrive in order, a segment at a time).
        self._starts: dict[str, dict[int, int]] = {name: {} for name in self.result.lanes}

    @property
    def run_id(self) -> str:
        return self.result.run_id

    @property
    def lanes(self) -> dict[str, LaneResult]:
        return self.result.lanes

    def apply(self, events: Iterable[LaneEvent]) -> list[str]:
        """Fold lane events in (other runs' are ignored); returns the lanes that changed, in run order."""
        pending: dict[str, list[BatchTiming]] = {}
        changed: dict[str, None] = {}
        for event in events:
            if not isinstance(event, LANE_EVENTS):
                continue
            lane = self.result.lanes.get(event.lane)
            if lane is None or event.run_id != self.run_id:
                continue
            name = event.lane
            changed[name] = None
            if isinstance(event, BatchTiming):
                pending.setdefault(name, []).append(event)
                self._held.discard(name)
                continue
            if isinstance(event, TurnEnded):
                self._held.add(name)
            elif isinstance(event, LANE_ENDS):
                self._held.discard(name)
            if pending.get(name):  # keep the order records came in
                self._add(name, pending.pop(name))
            lane.apply(event)
            self.versions[name] += 1
        for name, records in pending.items():
            self._add(name, records)
        return [name for name in self.result.lanes if name in changed]

    def _add(self, name: str, records: list[BatchTiming]) -> None:
        lane, starts = self.result.lanes[name], self._starts[name]
        for i, record in enumerate(records):
            if record.segment not in starts:
                starts[record.segment] = len(lane.records) + i
        lane.records.extend(records)
        self.versions[name] += 1
        self.records_added(name, records)

    def records_added(self, lane: str, records: list[BatchTiming]) -> None:
        """A hook: `records` were just added to `lane` (in arrival order)."""

    @classmethod
    def of_result(cls, result: RunResult) -> "RunTracker":
        """A tracker of a run that has ended (one from the history, or read back from its files)."""
        specs = []
        for name in result.lanes:
            try:
                specs.append(LaneSpec.parse(name))
            except ConfigError:  # a lane named LABEL/LANE: another machine's, read back from its files
                pass
        tracker = cls(result.run_id, result.config, specs, result.schedule, result.started_at, plan_of(result))
        for name, lane in result.lanes.items():
            tracker.result.lanes[name] = dataclasses.replace(lane, records=[])
            tracker.versions.setdefault(name, 0)
            tracker._starts.setdefault(name, {})
            tracker._add(name, list(lane.records))
        tracker.result.ended_at = result.ended_at
        tracker.finish()
        return tracker

    def finish(self, failure: str = "") -> RunResult:
        """The run is over: every event has been folded in. `failure`: the whole run could not be carried
        out, and each lane that had not ended says so."""
        self.result.ended_at = self.result.ended_at or now_iso()
        self.failure = failure
        for lane in self.result.lanes.values():
            if lane.summary is None and not lane.failure:  # it never ended: a crash, or a second Ctrl-C
                lane.failure = failure or "the run ended before this lane finished"
        for name in self.versions:
            self.versions[name] += 1
        self.finished = True
        return self.result

    def total_steps(self, lane: str) -> int:
        """Steps the lane will train (0 while unknown): steps per epoch × epochs, or the step limit."""
        started = self.result.lanes[lane].started
        if started is None:
            return 0
        per_epoch = started.settings.steps_per_epoch
        total = per_epoch * self.config.train.epochs
        if self.config.train.max_steps is not None:
            total = min(total, self.config.train.max_steps) if total else self.config.train.max_steps
        return total

    def summary(self, lane: str) -> RunSummary:
        """What the lane measures now: its current (or last) segment, or the whole run once it has
        ended on one model; built from the records so far while it runs (cached)."""
        result = self.result.lanes[lane]
        if result.summary is not None and len(result.segments) <= 1:
            return result.summary
        if result.segments:
            return self.segment_summary(lane, result.segments[-1])
        return self._summarize(lane, 0, result.records, result.status, self.config.flops_per_batch)

    def segment_summary(self, lane: str, segment: Segment) -> RunSummary:
        """A segment's figures: its own summary once it has ended, else its records so far."""
        if segment.ended is not None:
            return segment.ended.summary
        return self._summarize(lane, segment.index, self.segment_records(lane, segment.index), Status.RUNNING,
                               segment.started.flops_per_batch)

    def segment_records(self, lane: str, index: int) -> list[BatchTiming]:
        starts, records = self._starts[lane], self.result.lanes[lane].records
        begin = starts.get(index)
        if begin is None:
            return []
        later = [start for seg, start in starts.items() if seg > index]
        return records[begin:min(later) if later else len(records)]

    def _summarize(self, lane: str, segment: int, records: list[BatchTiming], status: str,
                   flops: int) -> RunSummary:
        key = (lane, segment)
        cached = self._summaries.get(key)
        if cached is None or cached[0] != self.versions[lane]:
            result = self.result.lanes[lane]
            elapsed = records[-1].start_s + records[-1].ms / 1000.0 - records[0].start_s if records else 0.0
            cached = (self.versions[lane], summarize(
                records, run_id=self.run_id, lane=lane, device=result.started.device if result.started else "",
                status=status, flops_per_batch=flops, wall_s=elapsed))
            self._summaries[key] = cached
        return cached[1]

    def phase(self, lane: str) -> Status | Between:
        """What the lane is doing: its status, or, running, between its batches (Between)."""
        result = self.result.lanes[lane]
        status = result.status
        if status == Status.RUNNING and lane in self._held:
            return Between.TURNS
        last = result.segments[-1] if result.segments else None
        if status != Status.RUNNING or last is None or last.ended is None:
            return status
        if last.ended.summary.status != Status.COMPLETED:
            return status  # switched: the next segment is on its way
        switched = any(s.ended is not None and s.ended.summary.status == Status.SWITCHED for s in result.segments)
        if len(self.plan) == 1 or last.index >= len(self.plan) or switched:
            return Between.FINISHING
        return Between.SEGMENTS

    def current_segment(self, lane: str) -> Segment | None:
        segments = self.result.lanes[lane].segments
        return segments[-1] if segments else None

    def steps_done(self, lane: str) -> int:
        records = self.result.lanes[lane].records
        return records[-1].step if records else 0

    def time_left(self, lane: str) -> float:
        """Seconds until the lane is done at its current median pace; NaN while unknown."""
        total = self.total_steps(lane)
        summary = self.summary(lane)
        if self.result.lanes[lane].status != Status.RUNNING or not total or not math.isfinite(summary.median_ms):
            return math.nan
        return max(total - self.steps_done(lane), 0) * summary.median_ms / 1000.0
