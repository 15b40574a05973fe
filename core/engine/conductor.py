"""Who trains which segment when: lanes side by side, one after another, or taking turns; a model changed mid-run.

A run is a plan of one or more configs (a ramp steps through widths) carried out on every lane.
The schedule decides who trains at a time:
- side-by-side: every lane at once (a demo; lanes that share CPU cores slow each other down);
- sequential: one lane after another, each through the whole plan (exact figures);
- interleaved: lanes take turns, each turn at most TURN_S of steady training or the rest of a segment,
  whichever is shorter (cpu at width w, then cpu1, and so on); a lane paused mid-segment goes on where
  it stopped at its next turn. Every figure is uncontended, and every lane's line grows from the start.
A model changed while it trains (RunControl.switch) replaces what is left of the plan: training
lanes switch at their next batch, the others start on it when their turn comes.
"""
from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from ..analysis.contention import shares_device
from ..config import SCHEDULES, ConfigError, LaneSpec, RunConfig, Schedule
from ..messages import Finish, Pause, Proceed, Resume, SwitchModel
from ..records import LANE_ENDS, BatchTiming, LaneEvent, LaneInterrupted, SegmentEnded, Status, TurnEnded

# Lanes taking turns train at most this long (steady seconds) per turn: both lines grow within seconds,
# and a model dragged to a new width reaches every lane within one turn.
TURN_S = 2.0
# A lane's first turn is shorter: the next lane's start (its data, its model's build and trace) comes
# sooner, so every lane's line shows within the first seconds.
FIRST_TURN_S = 0.5

if TYPE_CHECKING:
    from .lanes import Lane


class Lanes(Protocol):
    """Where a conductor finds each lane's process: a LanePool (core/engine/pool.py)."""

    def get(self, spec: LaneSpec) -> Lane: ...

def schedule_named(name: str) -> Schedule:
    """A schedule by its name as a user or a file gives it (core/config.py Schedule.named): for the edges (the CLI's
    --schedule, the window's saved choice); inside, a schedule is a Schedule."""
    return Schedule.named(name)


def default_schedule(specs: Sequence[LaneSpec]) -> Schedule:
    """Interleaved when some lanes share CPU cores, or a lane runs beside its twin (figures must be uncontended),
    else side by side."""
    specs = list(specs)
    shared = any(shares_device(a, b) for i, a in enumerate(specs) for b in specs[i + 1:])
    return Schedule.INTERLEAVED if shared else Schedule.SIDE_BY_SIDE


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


class Turn(Enum):
    """Where a lane is in the run's turns."""

    WAITING = "waiting"  # not started
    TRAINING = "training"
    PAUSED = "paused"  # between segments, until its next turn
    PAUSING = "pausing"  # told its turn is over; it stops at its next batch end
    HELD = "held"  # paused mid-segment, until its next turn
    DONE = "done"


@dataclass
class _LaneTurns:
    spec: LaneSpec
    next: RunConfig | None  # what it trains next (or is training)
    todo: collections.deque = field(default_factory=collections.deque)  # after that
    state: Turn = Turn.WAITING
    turn_s: float = 0.0  # steady seconds trained in this turn
    turns_taken: int = 0
    switched: bool = False  # held (or pausing) when the model changed: its next turn starts on `next`
    switch_sent: bool = False  # told to switch while it trained, and not yet heard to have done it
    # Steady seconds after which this turn ends, where a model changed mid-run shortens it (None: the usual limit):
    # the other lanes want the new model too.
    limit_s: float | None = None


class Conductor:
    """Carries out one run on a LanePool; `run()` blocks (call it from a worker thread)."""

    def __init__(self, pool: Lanes, specs: list[LaneSpec], plan: Sequence[RunConfig], schedule: Schedule,
                 run_id: str, on_event: Callable[[LaneEvent], None], control: RunControl) -> None:
        """Every event reaches `on_event`, in order, from the thread that calls run(): the conductor keeps
        no records, whoever listens folds them (a RunTracker, core/engine/tracking.py)."""
        self.pool, self.plan, self.on_event, self.control = pool, list(plan), on_event, control
        self.run_id = run_id
        self.schedule = schedule
        self.paced = len(self.plan) > 1
        self.turns = [_LaneTurns(spec, self.plan[0], collections.deque(self.plan[1:])) for spec in specs]
        self._turn = 0  # interleaved: whose turn it is
        self._cancelled = False

    def run(self) -> None:
        while any(t.state != Turn.DONE for t in self.turns):
            if self.control.cancel.is_set() and not self._cancelled:
                self._cancel()
            self._switch(self.control.take_switch())
            self._grant()
            active = [t for t in self.turns if t.state in (Turn.TRAINING, Turn.PAUSED, Turn.PAUSING, Turn.HELD)]
            for turns in active:
                self._poll(turns, 0.02 if len(active) > 1 else 0.1)
            if not active:
                time.sleep(0.01)

    # ------------------------------------------------------------------ turns

    def _grant(self) -> None:
        """Let the lanes whose turn it is train their next segment."""
        if self._cancelled:
            return
        if self.schedule is Schedule.SIDE_BY_SIDE:
            ready = [t for t in self.turns if t.state in (Turn.WAITING, Turn.PAUSED) and t.next is not None]
        elif self.schedule is Schedule.SEQUENTIAL:
            first = next((t for t in self.turns if t.state != Turn.DONE), None)
            ready = [first] if first is not None and first.state in (Turn.WAITING, Turn.PAUSED) else []
        else:
            busy = any(t.state in (Turn.TRAINING, Turn.PAUSING) for t in self.turns)
            ready = [] if busy else self._interleaved_turn()
        for turns in ready:
            config = turns.next
            if config is None:  # `ready` holds only lanes with a next model
                continue
            lane = self.pool.get(turns.spec)
            short = turns.switched  # its turn starts on a model changed mid-run: a first turn's length
            if turns.state == Turn.WAITING:
                lane.submit(self.run_id, config, paced=self.paced)
            elif turns.state == Turn.HELD:
                lane.steer(SwitchModel(config) if turns.switched else Resume())
            else:
                lane.steer(Proceed(config))
            turns.state, turns.turn_s, turns.switched = Turn.TRAINING, 0.0, False
            turns.limit_s = FIRST_TURN_S if short else None
            turns.turns_taken += 1

    def _interleaved_turn(self) -> list[_LaneTurns]:
        for _ in range(len(self.turns)):
            turns = self.turns[self._turn % len(self.turns)]
            self._turn += 1
            if turns.state in (Turn.WAITING, Turn.PAUSED, Turn.HELD) and turns.next is not None:
                return [turns]
        return []

    def _switch(self, config: RunConfig | None) -> None:
        if config is None or self._cancelled:
            return
        for turns in self.turns:
            if turns.state == Turn.DONE:
                continue
            turns.todo.clear()
            if turns.state == Turn.TRAINING:
                self.pool.get(turns.spec).steer(SwitchModel(config))
                turns.switch_sent = True
                # At most a first turn's length more, on the new model: a dragged width reaches the waiting lanes
                # within about a second and a half, not after a whole turn on this one.
                usual = turns.limit_s if turns.limit_s is not None else self._usual_limit(turns)
                turns.limit_s = min(usual, turns.turn_s + FIRST_TURN_S)
            elif turns.state in (Turn.PAUSING, Turn.HELD):
                # It switches when its turn comes back, within one turn. A pausing lane is not told now: it
                # would hear the pause, then the switch, and train the new model while another lane has the turn.
                turns.switched = True
            turns.next = config

    # ------------------------------------------------------------------ events

    def _poll(self, turns: _LaneTurns, timeout: float) -> None:
        lane = self.pool.get(turns.spec)
        for event in lane.poll(timeout):
            self.on_event(event)
            if isinstance(event, BatchTiming) and not event.warmup and turns.state == Turn.TRAINING:
                turns.turn_s += event.ms / 1000.0
                limit = turns.limit_s if turns.limit_s is not None else self._usual_limit(turns)
                if turns.turn_s >= limit and self._others_wait(turns):
                    lane.steer(Pause())
                    turns.state = Turn.PAUSING
            elif isinstance(event, TurnEnded) and turns.state == Turn.PAUSING:
                turns.state = Turn.HELD
            elif isinstance(event, SegmentEnded) and event.summary.status == Status.SWITCHED:
                # A new segment in the same turn; a pause sent before it is heard in that segment.
                turns.switch_sent = False
            elif isinstance(event, SegmentEnded) and event.summary.status == Status.COMPLETED:
                if turns.switch_sent:  # its budget ran out first: it goes on with the new model, same turn
                    turns.switch_sent = False
                else:
                    self._segment_done(turns, lane)
            elif isinstance(event, LANE_ENDS):
                turns.state = Turn.DONE
        if turns.state != Turn.DONE and not lane.busy:
            # Closed from another thread (the app is quitting): its records are kept.
            turns.state = Turn.DONE
            self.on_event(LaneInterrupted(self.run_id, turns.spec.name,
                                          "interrupted: the lane was closed before the run ended"))

    @staticmethod
    def _usual_limit(turns: _LaneTurns) -> float:
        return FIRST_TURN_S if turns.turns_taken == 1 else TURN_S

    def _others_wait(self, turns: _LaneTurns) -> bool:
        """Lanes taking turns, and another lane waits for one."""
        return self.schedule is Schedule.INTERLEAVED and any(
            t is not turns and t.state in (Turn.WAITING, Turn.PAUSED, Turn.HELD) and t.next is not None
            for t in self.turns)

    def _segment_done(self, turns: _LaneTurns, lane: Lane) -> None:
        if not self.paced:
            return  # the lane's run ends with its only segment (or goes on with a switched model)
        if turns.switched:  # the model changed while it paused: its next turn starts on it
            turns.switched = False
        else:
            turns.next = turns.todo.popleft() if turns.todo else None
        if turns.next is None:
            lane.steer(Finish())
        turns.state = Turn.PAUSED

    def _cancel(self) -> None:
        self._cancelled = True
        for turns in self.turns:
            if turns.state in (Turn.TRAINING, Turn.PAUSED, Turn.PAUSING, Turn.HELD):
                self.pool.get(turns.spec).cancel()
            elif turns.state == Turn.WAITING:
                turns.state = Turn.DONE
                self.on_event(LaneInterrupted(self.run_id, turns.spec.name, "stopped before its turn"))
