"""Run one configuration on several lanes, side by side or one after another, and collect what happened."""
from __future__ import annotations

import datetime as _dt
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.lanes import WATCHDOG_S, Lane, local_channel
from crossover_lab.core.records import (BatchTiming, LaneEvent, RunFailed, RunFinished, RunStarted, RunSummary,
                                        now_iso)
from crossover_lab.core.remote_channel import RemoteSettings, remote_lane_channel

SCHEDULES = ("sequential", "concurrent")


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


LANE_STATUSES = ("waiting", "running", "completed", "cancelled", "failed")


@dataclass
class LaneResult:
    """Everything one lane produced for one run; kept even when the run failed or was cancelled."""

    lane: str
    started: RunStarted | None = None
    records: list[BatchTiming] = field(default_factory=list)
    summary: RunSummary | None = None
    failure: str = ""  # why the lane failed, or why it stopped without a summary
    stopped: bool = False  # a stop or a close ended it before it could report: cancelled, not failed

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
        elif isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, RunFinished):
            self.summary = event.summary
        elif isinstance(event, RunFailed):
            self.summary, self.failure = event.summary, event.reason


@dataclass
class RunResult:
    """One run of one config across lanes: the unit the CSV, the map and the history hold."""

    run_id: str
    config: RunConfig
    schedule: str
    started_at: str
    lanes: dict[str, LaneResult]
    ended_at: str = ""


class LanePool:
    """Keeps one Lane per profile alive between runs, so a run does not pay a framework import.

    A lane on another machine (`ssh://host/LANE`) is reached as `remote` says when its process
    starts, so a changed remote Python applies from the next start.
    """

    def __init__(self, remote: RemoteSettings | None = None, watchdog_s: float = WATCHDOG_S) -> None:
        self._lanes: dict[str, Lane] = {}
        self._lock = threading.Lock()
        self.remote = remote or RemoteSettings()
        self.watchdog_s = watchdog_s  # see core/lanes.py: silence after which a running lane is killed

    def get(self, spec: LaneSpec) -> Lane:
        with self._lock:
            lane = self._lanes.get(spec.name)
            if lane is None:
                factory = (lambda s: remote_lane_channel(s, self.remote)) if spec.host else local_channel
                lane = self._lanes[spec.name] = Lane(spec, channel_factory=factory, watchdog_s=self.watchdog_s)
            return lane

    def lanes(self) -> list[Lane]:
        with self._lock:
            return list(self._lanes.values())

    def close(self, timeout: float = 2.0) -> None:
        """Close every lane at once (in parallel), each given `timeout` to leave before it is killed."""
        closers = [threading.Thread(target=lane.close, kwargs={"timeout": timeout}, name=f"close-{lane.name}")
                   for lane in self.lanes()]
        for thread in closers:
            thread.start()
        for thread in closers:
            thread.join(timeout + 3.0)


def run_comparison(pool: LanePool, specs: list[LaneSpec], config: RunConfig, *,
                   schedule: str = "sequential", run_id: str | None = None,
                   on_event: Callable[[LaneEvent], None] | None = None,
                   cancel: threading.Event | None = None) -> RunResult:
    """Run `config` on every lane and return what each produced. Blocks; call from a worker thread.

    Setting `cancel` stops the runs at their next batch end (lanes that don't answer are killed);
    lanes not yet started under the sequential schedule are skipped and reported cancelled.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
    cancel = cancel or threading.Event()
    result = RunResult(run_id or new_run_id(), config, schedule, now_iso(),
                       {spec.name: LaneResult(spec.name) for spec in specs})
    groups = [specs] if schedule == "concurrent" else [[spec] for spec in specs]
    for group in groups:
        if cancel.is_set():
            for spec in group:
                result.lanes[spec.name].stopped = True
                result.lanes[spec.name].failure = "stopped before its turn"
            continue
        active = [pool.get(spec) for spec in group]
        for lane in active:
            lane.submit(result.run_id, config)
        _drain(active, result, on_event, cancel)
    result.ended_at = now_iso()
    return result


def _drain(active: list[Lane], result: RunResult, on_event: Callable[[LaneEvent], None] | None,
           cancel: threading.Event) -> None:
    cancelled = False
    while active:
        if cancel.is_set() and not cancelled:
            cancelled = True
            for lane in active:
                lane.cancel()
        for lane in list(active):
            for event in lane.poll(0.02 if len(active) > 1 else 0.1):
                result.lanes[lane.name].apply(event)
                if on_event is not None:
                    on_event(event)
            if not lane.busy:
                active.remove(lane)
                lane_result = result.lanes[lane.name]
                if lane_result.summary is None and not lane_result.failure:
                    # Closed from another thread (the app is quitting): its records are kept.
                    lane_result.stopped = True
                    lane_result.failure = "interrupted: the lane was closed before the run ended"
        time.sleep(0)
