"""What the live plot draws of a run in progress: per-lane arrays that grow as records arrive.

No Qt here: the controller feeds `LiveRun.apply()` (core/engine/tracking.py) from its queue; the plot
reads `series`, the summary reads the tracker's summaries.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..core.files.noise import bound_by_noise
from ..core.config import LaneSpec, RunConfig, Schedule
from ..core.records import BatchTiming
from ..core.engine.tracking import RunTracker

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
        # At an arrival rate, a call's point is its oldest request's latency, arrival to answer (its wait included): a
        # lane falling behind is a line that climbs with the queue.
        self.ms.extend(r.ms + max(r.waits_ms) if r.waits_ms else r.ms / max(r.batches, 1) for r in records)

    def __len__(self) -> int:
        return len(self.ms)


class LaneSeries:
    """One lane's arrays: steady and warm-up points, and the rolling median of the steady ones."""

    def __init__(self) -> None:
        self.steady, self.warmup = Series(), Series()
        self.median = GrowingArray()  # rolling median of steady ms, aligned with `steady`

    def add(self, records: list[BatchTiming]) -> None:
        self.warmup.add([r for r in records if r.warmup])
        steady = [r for r in records if not r.warmup]
        if steady:
            start = len(self.steady)
            self.steady.add(steady)
            self.median.extend(_rolling_median(self.steady.ms.values, start))


def _rolling_median(ms: np.ndarray, start: int, window: int = MEDIAN_WINDOW) -> np.ndarray:
    """Trailing medians of ms[start:], each over up to `window` values ending at that index."""
    head = [float(np.median(ms[max(0, i - window + 1):i + 1])) for i in range(start, min(window - 1, ms.size))]
    first_full = max(start, window - 1)
    if first_full >= ms.size:
        return np.asarray(head)
    tail = np.median(sliding_window_view(ms[first_full - window + 1:], window), axis=1)
    return np.concatenate([np.asarray(head), tail])


class LiveRun(RunTracker):
    """A comparison the window started, with what to draw of each lane."""

    def __init__(self, run_id: str, config: RunConfig, specs: list[LaneSpec], schedule: Schedule,
                 started_at: str, plan: Sequence[RunConfig] = ()) -> None:
        super().__init__(run_id, config, specs, schedule, started_at, plan)
        bound_by_noise(self.result)  # this machine's run-to-run noise, where a sweep here measured it
        self.series = {name: LaneSeries() for name in self.result.lanes}

    def records_added(self, lane: str, records: list[BatchTiming]) -> None:
        self.series.setdefault(lane, LaneSeries()).add(records)

    def device(self, lane: str) -> str:
        started = self.result.lanes[lane].started
        return started.device if started else ""
