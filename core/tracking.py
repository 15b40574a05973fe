"""A run as its lanes' events arrive: the RunResult that files, summaries and the window read, built event by event.

The engine (core/session.py) returns the final RunResult when a run ends; a tracker has the
same shape at every moment before that, so a run cut short by a close, a signal or a crash is
saved exactly as a finished one would be.
"""
from __future__ import annotations

import math
from typing import Iterable

from crossover_lab.core.analysis import summarize
from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.records import BatchTiming, RunSummary
from crossover_lab.core.session import LaneResult, RunResult


class RunTracker:
    """Folds lane events into a RunResult. Subclasses hear of new records through `records_added`."""

    def __init__(self, run_id: str, config: RunConfig, specs: list[LaneSpec], schedule: str,
                 started_at: str) -> None:
        self.config = config
        self.specs = list(specs)
        self.result = RunResult(run_id, config, schedule, started_at, {s.name: LaneResult(s.name) for s in specs})
        self.finished = False
        self.failure = ""  # the whole run could not be carried out (a lane's own failure is in its result)
        self.versions = {name: 0 for name in self.result.lanes}  # bumped on every change to a lane
        self._summaries: dict[str, tuple[int, RunSummary]] = {}

    @property
    def run_id(self) -> str:
        return self.result.run_id

    @property
    def lanes(self) -> dict[str, LaneResult]:
        return self.result.lanes

    def apply(self, events: Iterable[object]) -> list[str]:
        """Fold lane events in (other runs' are ignored); returns the lanes that changed, in run order."""
        pending: dict[str, list[BatchTiming]] = {}
        changed: dict[str, None] = {}
        for event in events:
            name = getattr(event, "lane", "")
            lane = self.result.lanes.get(name)
            if lane is None or getattr(event, "run_id", None) != self.run_id:
                continue
            changed[name] = None
            if isinstance(event, BatchTiming):
                pending.setdefault(name, []).append(event)
                continue
            if pending.get(name):  # keep the order records came in
                self._add(name, pending.pop(name))
            lane.apply(event)
            self.versions[name] += 1
        for name, records in pending.items():
            self._add(name, records)
        return [name for name in self.result.lanes if name in changed]

    def _add(self, name: str, records: list[BatchTiming]) -> None:
        self.result.lanes[name].records.extend(records)
        self.versions[name] += 1
        self.records_added(name, records)

    def records_added(self, lane: str, records: list[BatchTiming]) -> None:
        """A hook: `records` were just added to `lane` (in arrival order)."""

    def finish(self, result: RunResult | None, failure: str = "") -> RunResult:
        """The run is over: adopt the engine's result (authoritative) or mark what is missing."""
        if result is not None:
            self.result.lanes.update(result.lanes)
            self.result.ended_at = result.ended_at
        else:
            self.failure = failure
            for lane in self.result.lanes.values():
                if lane.summary is None and not lane.failure:
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
        per_epoch = int(started.settings.get("steps_per_epoch") or 0)
        total = per_epoch * self.config.train.epochs
        if self.config.train.max_steps is not None:
            total = min(total, self.config.train.max_steps) if total else self.config.train.max_steps
        return total

    def summary(self, lane: str) -> RunSummary:
        """The final summary where there is one, else one built from the records so far (cached)."""
        result = self.result.lanes[lane]
        if result.summary is not None:
            return result.summary
        cached = self._summaries.get(lane)
        if cached is None or cached[0] != self.versions[lane]:
            records = result.records
            elapsed = records[-1].start_s + records[-1].ms / 1000.0 if records else 0.0
            cached = (self.versions[lane], summarize(
                records, run_id=self.run_id, lane=lane, device=result.started.device if result.started else "",
                status=result.status, flops_per_batch=self.config.flops_per_batch, wall_s=elapsed))
            self._summaries[lane] = cached
        return cached[1]

    def steps_done(self, lane: str) -> int:
        records = self.result.lanes[lane].records
        return records[-1].step if records else 0

    def time_left(self, lane: str) -> float:
        """Seconds until the lane is done at its current median pace; NaN while unknown."""
        total = self.total_steps(lane)
        summary = self.summary(lane)
        if self.result.lanes[lane].status != "running" or not total or not math.isfinite(summary.median_ms):
            return math.nan
        return max(total - self.steps_done(lane), 0) * summary.median_ms / 1000.0
