"""The run in progress as the window sees it: lane events applied in the GUI thread, arrays to draw.

No Qt here: the controller feeds `LiveRun.apply()` from its queue, the plot reads the arrays,
the summary reads `summaries()`. The per-lane `LaneResult`s have the engine's shape, so a run
cut short by a close or a crash can be saved exactly as a finished one would be.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from crossover_lab.core.analysis import summarize
from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.records import BatchTiming, EpochEnded, RunFailed, RunFinished, RunStarted, RunSummary
from crossover_lab.core.session import LaneResult, RunResult

MEDIAN_WINDOW = 21  # batches in the rolling median: long enough to smooth, short enough to follow


class GrowingArray:
    """A float64 array that appends in amortised O(1) and hands out a view of what it holds."""

    def __init__(self, capacity: int = 256) -> None:
        self._data = np.empty(capacity)
        self._n = 0

    def extend(self, values: Iterable[float]) -> None:
        new = np.fromiter(values, dtype=float)
        need = self._n + new.size
        if need > self._data.size:
            grown = np.empty(max(need, 2 * self._data.size))
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        self._data[self._n:need] = new
        self._n = need

    @property
    def values(self) -> np.ndarray:
        return self._data[:self._n]

    def __len__(self) -> int:
        return self._n


class Series:
    """Points of one kind (steady or warm-up): step number, seconds since the lane began, ms per step."""

    def __init__(self) -> None:
        self.step, self.elapsed, self.ms = GrowingArray(), GrowingArray(), GrowingArray()

    def add(self, records: list[BatchTiming]) -> None:
        self.step.extend(r.step for r in records)
        self.elapsed.extend(r.start_s + r.ms / 1000.0 for r in records)
        self.ms.extend(r.ms / max(r.batches, 1) for r in records)

    def __len__(self) -> int:
        return len(self.ms)


def lane_state(result: LaneResult) -> str:
    """waiting | running | completed | cancelled | failed; a lane skipped by a stop counts as cancelled."""
    if result.summary is not None:
        return result.summary.status
    if result.failure:
        return "cancelled" if result.skipped else "failed"
    return "running" if result.started or result.records else "waiting"


class LaneLive:
    """One lane's share of the live run: its records, its arrays and where it has got to."""

    def __init__(self, lane: str, result: LaneResult) -> None:
        self.lane = lane
        self.result = result
        self.steady, self.warmup = Series(), Series()
        self.median = GrowingArray()  # rolling median of steady ms, aligned with `steady`
        self.epoch = self.batch = self.step = 0
        self.version = 0  # bumped on every change: drawing skips lanes that did not change
        self._summary: tuple[int, RunSummary] | None = None

    @property
    def device(self) -> str:
        return self.result.started.device if self.result.started else ""

    @property
    def state(self) -> str:
        return lane_state(self.result)

    def add_records(self, records: list[BatchTiming]) -> None:
        self.result.records.extend(records)
        self.warmup.add([r for r in records if r.warmup])
        steady = [r for r in records if not r.warmup]
        if steady:
            start = len(self.steady)
            self.steady.add(steady)
            self.median.extend(_rolling_median(self.steady.ms.values, start))
        last = records[-1]
        self.epoch, self.batch, self.step = last.epoch, last.batch, last.step
        self.version += 1


def _rolling_median(ms: np.ndarray, start: int, window: int = MEDIAN_WINDOW) -> np.ndarray:
    """Trailing medians of ms[start:], each over up to `window` values ending at that index."""
    head = [float(np.median(ms[max(0, i - window + 1):i + 1])) for i in range(start, min(window - 1, ms.size))]
    first_full = max(start, window - 1)
    if first_full >= ms.size:
        return np.asarray(head)
    tail = np.median(sliding_window_view(ms[first_full - window + 1:], window), axis=1)
    return np.concatenate([np.asarray(head), tail])


class LiveRun:
    """A comparison the window started: config, lanes, and everything they sent so far."""

    def __init__(self, run_id: str, config: RunConfig, specs: list[LaneSpec], schedule: str,
                 started_at: str) -> None:
        self.config = config
        self.specs = list(specs)
        self.result = RunResult(run_id, config, schedule, started_at, {s.name: LaneResult(s.name) for s in specs})
        self.lanes = {name: LaneLive(name, lr) for name, lr in self.result.lanes.items()}
        self.finished = False
        self.failure = ""  # the whole run could not be carried out (a lane's own failure is in its result)

    @property
    def run_id(self) -> str:
        return self.result.run_id

    def apply(self, events: list) -> bool:
        """Fold lane events in (others' run ids are ignored); True when anything changed."""
        pending: dict[str, list[BatchTiming]] = {}
        changed = False
        for event in events:
            lane = self.lanes.get(getattr(event, "lane", ""))
            if lane is None or getattr(event, "run_id", None) != self.run_id:
                continue
            changed = True
            if isinstance(event, BatchTiming):
                pending.setdefault(lane.lane, []).append(event)
                continue
            if pending.get(lane.lane):  # keep the order records came in
                lane.add_records(pending.pop(lane.lane))
            if isinstance(event, RunStarted):
                lane.result.started = event
            elif isinstance(event, RunFinished):
                lane.result.summary = event.summary
            elif isinstance(event, RunFailed):
                lane.result.summary, lane.result.failure = event.summary, event.reason
            elif isinstance(event, EpochEnded):
                pass  # the epoch shows in the records; loss and accuracy arrive with the summary
            lane.version += 1
        for name, records in pending.items():
            self.lanes[name].add_records(records)
        return changed

    def finish(self, result: RunResult | None, failure: str = "") -> RunResult:
        """The run is over: adopt the engine's result (authoritative) or mark what is missing."""
        if result is not None:
            self.result.lanes.update(result.lanes)
            self.result.ended_at = result.ended_at
            for name, lane in self.lanes.items():
                lane.result = self.result.lanes[name]
                lane.version += 1
        else:
            self.failure = failure
            for lane in self.lanes.values():
                if lane.result.summary is None and not lane.result.failure:
                    lane.result.failure = failure or "the run ended before this lane finished"
                    lane.version += 1
        self.finished = True
        return self.result

    def total_steps(self, lane: str) -> int:
        """Steps the lane will train (0 while unknown): steps per epoch × epochs, or the step limit."""
        started = self.lanes[lane].result.started
        if started is None:
            return 0
        per_epoch = int(started.settings.get("steps_per_epoch") or 0)
        total = per_epoch * self.config.train.epochs
        if self.config.train.max_steps is not None:
            total = min(total, self.config.train.max_steps) if total else self.config.train.max_steps
        return total

    def summary(self, lane: str) -> RunSummary:
        """The final summary where there is one, else one built from the records so far (cached)."""
        live = self.lanes[lane]
        if live.result.summary is not None:
            return live.result.summary
        if live._summary is None or live._summary[0] != live.version:
            elapsed = float(live.steady.elapsed.values[-1]) if len(live.steady) else 0.0
            live._summary = (live.version, summarize(
                live.result.records, run_id=self.run_id, lane=lane, device=live.device, status="running",
                flops_per_batch=self.config.flops_per_batch, batch_size=self.config.train.batch_size,
                wall_s=elapsed))
        return live._summary[1]

    def time_left(self, lane: str) -> float:
        """Seconds until the lane is done at its current median pace; NaN while unknown."""
        live = self.lanes[lane]
        total = self.total_steps(lane)
        if live.state != "running" or not total or not len(live.median):
            return math.nan
        return max(total - live.step, 0) * float(live.median.values[-1]) / 1000.0
