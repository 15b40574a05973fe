"""Who trains which segment when: lanes side by side, one after another, or taking turns; a model changed mid-run.

A run is a plan of one or more configs (a ramp steps through widths) carried out on every lane.
The schedule decides who trains at a time:
- side-by-side: every lane at once (a demo; lanes that share CPU cores slow each other down);
- sequential: one lane after another, each through the whole plan (exact figures);
- interleaved: lanes take turns by segment (cpu at width w, then cpu1 at width w, then the next
  width), so every figure is uncontended and both lanes' lines still grow as it goes.
A model changed while it trains (RunControl.switch) replaces what is left of the plan: training
lanes switch at their next batch, the others start on it when their turn comes.
"""
from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..analysis.contention import shares_cores
from ..config import ConfigError, LaneSpec, RunConfig
from ..messages import Finish, Proceed, SwitchModel
from ..records import LaneEvent, RunFailed, RunFinished, SegmentEnded, now_iso
from ..results import LaneResult, RunResult, new_run_id

SCHEDULES = ("interleaved", "side-by-side", "sequential")
_ALIASES = {"concurrent": "side-by-side", "side_by_side": "side-by-side"}


def schedule_named(name: str) -> str:
    """A schedule's name as recorded ("concurrent", the old name, is side-by-side)."""
    name = _ALIASES.get(name, name)
    if name not in SCHEDULES:
        raise ConfigError(f"schedule {name!r}: choose one of {', '.join(SCHEDULES)}")
    return name


def default_schedule(specs: Sequence[LaneSpec]) -> str:
    """Interleaved when some lanes share CPU cores (figures must be uncontended), else side by side."""
    specs = list(specs)
    shared = any(shares_cores(a, b) for i, a in enumerate(specs) for b in specs[i + 1:])
    return "interleaved" if shared else "side-by-side"


class RunControl:
    """What the app may do to a run in progress, from any thread: stop it, or change its model."""

    def __init__(self, cancel: threading.Event | None = None) -> None:
        self.cancel = cancel or threading.Event()
        self._lock = threading.Lock()
        self._switch: RunConfig | None = None

    def switch(self, config: RunConfig) -> None:
        """Go on with this model: training lanes at their next batch, the others when their turn comes."""
        with self._lock:
            self._switch = config

    def take_switch(self) -> RunConfig | None:
        with self._lock:
            config, self._switch = self._switch, None
            return config


@dataclass
class _LaneTurns:
    spec: LaneSpec
    next: RunConfig | None  # what it trains next (or is training)
    todo: collections.deque = field(default_factory=collections.deque)  # after that
    state: str = "waiting"  # waiting (not started) | training | paused (between segments) | done


class Conductor:
    """Carries out one run on a LanePool; `run()` blocks (call it from a worker thread)."""

    def __init__(self, pool: object, specs: list[LaneSpec], plan: Sequence[RunConfig], schedule: str,
                 run_id: str | None, on_event: Callable[[LaneEvent], None] | None, control: RunControl) -> None:
        self.pool, self.plan, self.on_event, self.control = pool, list(plan), on_event, control
        self.schedule = schedule_named(schedule)
        self.paced = len(self.plan) > 1
        self.result = RunResult(run_id or new_run_id(), self.plan[0], self.schedule, now_iso(),
                                {spec.name: LaneResult(spec.name) for spec in specs})
        self.turns = [_LaneTurns(spec, self.plan[0], collections.deque(self.plan[1:])) for spec in specs]
        self._turn = 0  # interleaved: whose turn it is
        self._cancelled = False

    def run(self) -> RunResult:
        while any(t.state != "done" for t in self.turns):
            if self.control.cancel.is_set() and not self._cancelled:
                self._cancel()
            self._switch(self.control.take_switch())
            self._grant()
            active = [t for t in self.turns if t.state in ("training", "paused")]
            for turns in active:
                self._poll(turns, 0.02 if len(active) > 1 else 0.1)
            if not active:
                time.sleep(0.01)
        self.result.ended_at = now_iso()
        return self.result

    # ------------------------------------------------------------------ turns

    def _grant(self) -> None:
        """Let the lanes whose turn it is train their next segment."""
        if self._cancelled:
            return
        if self.schedule == "side-by-side":
            ready = [t for t in self.turns if t.state in ("waiting", "paused") and t.next is not None]
        elif self.schedule == "sequential":
            first = next((t for t in self.turns if t.state != "done"), None)
            ready = [first] if first is not None and first.state in ("waiting", "paused") else []
        else:
            ready = [] if any(t.state == "training" for t in self.turns) else self._interleaved_turn()
        for turns in ready:
            lane = self.pool.get(turns.spec)
            if turns.state == "waiting":
                lane.submit(self.result.run_id, turns.next, paced=self.paced)
            else:
                lane.steer(Proceed(turns.next))
            turns.state = "training"

    def _interleaved_turn(self) -> list[_LaneTurns]:
        for _ in range(len(self.turns)):
            turns = self.turns[self._turn % len(self.turns)]
            self._turn += 1
            if turns.state in ("waiting", "paused") and turns.next is not None:
                return [turns]
        return []

    def _switch(self, config: RunConfig | None) -> None:
        if config is None or self._cancelled:
            return
        for turns in self.turns:
            if turns.state == "done":
                continue
            turns.todo.clear()
            if turns.state == "training":
                self.pool.get(turns.spec).steer(SwitchModel(config))
            turns.next = config

    # ------------------------------------------------------------------ events

    def _poll(self, turns: _LaneTurns, timeout: float) -> None:
        lane = self.pool.get(turns.spec)
        lane_result = self.result.lanes[turns.spec.name]
        for event in lane.poll(timeout):
            lane_result.apply(event)
            if self.on_event is not None:
                self.on_event(event)
            if isinstance(event, SegmentEnded) and event.summary.status == "completed":
                self._segment_done(turns, lane)
            elif isinstance(event, (RunFinished, RunFailed)):
                turns.state = "done"
        if turns.state != "done" and not lane.busy:
            turns.state = "done"
            if lane_result.summary is None and not lane_result.failure:
                # Closed from another thread (the app is quitting): its records are kept.
                lane_result.stopped = True
                lane_result.failure = "interrupted: the lane was closed before the run ended"

    def _segment_done(self, turns: _LaneTurns, lane: object) -> None:
        if not self.paced:
            return  # the lane's run ends with its only segment (or goes on with a switched model)
        turns.next = turns.todo.popleft() if turns.todo else None
        if turns.next is None:
            lane.steer(Finish())
        turns.state = "paused"

    def _cancel(self) -> None:
        self._cancelled = True
        for turns in self.turns:
            if turns.state in ("training", "paused"):
                self.pool.get(turns.spec).cancel()
            elif turns.state == "waiting":
                turns.state = "done"
                lane_result = self.result.lanes[turns.spec.name]
                lane_result.stopped, lane_result.failure = True, "stopped before its turn"
