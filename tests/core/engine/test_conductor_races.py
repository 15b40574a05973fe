"""The conductor's turns against a scripted lane that hears its steering messages in order, one batch at a
time, as a lane process does (core/lane/timing.py): a model changed just as a turn ends never leaves two lanes
of shared cores training at once, and never leaves a lane waiting for a turn the conductor thinks it has."""
from __future__ import annotations

import collections

from crossover_lab.core.config import LaneSpec, Schedule
from crossover_lab.core.engine.conductor import TURN_S, Conductor, RunControl
from crossover_lab.core.messages import Finish, Pause, Proceed, Resume, SwitchModel
from crossover_lab.core.presets import PRESETS
from crossover_lab.core.records import (BatchTiming, LaneEnded, RunSummary, SegmentEnded, SegmentStarted, Status,
                                        TurnEnded, TurnResumed)

CONFIG = PRESETS["tiny"].config
BATCH_S = TURN_S / 8  # each scripted batch is an eighth of a turn of steady training
STEPS = 40  # a segment's budget, in batches


class ScriptedLane:
    """One lane: a batch per poll while it trains; after each batch it reads one steering message, and a Pause
    makes it wait, mid-segment, for Resume or SwitchModel (reading messages in the order they were sent). A
    message sent while it trains a batch is heard at the end of the next one: a lane process runs ahead of
    what the app has seen."""

    def __init__(self, name: str, clock: list[int], log: list[tuple[int, str, str]]) -> None:
        self.name, self.clock, self.log = name, clock, log
        self.queue: collections.deque = collections.deque()  # heard at the next batch end
        self.incoming: list = []  # sent while a batch trains
        self.pauses_at: list[int] = []  # the lane's step count when each Pause was sent
        self.out: list = []
        self.state = "idle"  # idle | training | waiting (a pause) | between (segments) | done
        self.segment, self.steps, self.config, self.paced = 0, 0, None, False
        self.busy = True

    # the conductor's side
    def submit(self, run_id, config, paced=False):
        self.paced = paced
        self._start(config)

    def steer(self, message):
        self.incoming.append(message)
        if isinstance(message, Pause):
            self.pauses_at.append(self.steps)
        self.on_steer(self, message)
        return True

    def on_steer(self, lane, message):  # a test's hook: what the app does as the conductor steers
        pass

    def cancel(self):
        self.state, self.busy = "done", False
        self.out.append(LaneEnded("r", self.name, Status.CANCELLED, "stopped", 0.0, 0))

    def poll(self, timeout):
        self.clock[1] += 1
        if self.clock[1] > 20000:  # a lane waits for a turn the conductor thinks it has: nothing moves
            self.stuck.set()
        if self.state != "training":
            self._arrive()
        if self.state == "training":
            self._batch()
        elif self.state == "waiting":
            self._hear_while_waiting()
        elif self.state == "between":
            self._hear_between()
        out, self.out = self.out, []
        return out

    # the lane's side
    def _start(self, config):
        self.segment, self.steps, self.config, self.state = self.segment + 1, 0, config, "training"
        self.out.append(SegmentStarted("r", self.name, self.segment, config.model.widths, 32, 1, 0, 0.0))

    def _end(self, status):
        self.out.append(SegmentEnded("r", self.name, self.segment, RunSummary("r", self.name, "CPU", status), 0.0))

    def _arrive(self):
        self.queue.extend(self.incoming)
        self.incoming.clear()

    def _batch(self):
        self.clock[0] += 1
        self.steps += 1
        self.log.append((self.clock[0], self.name, self.config.model.widths))
        self.out.append(BatchTiming("r", self.name, "CPU", 1, self.steps, self.steps, 0.0, BATCH_S * 1000, 32,
                                    False, 0.1, segment=self.segment))
        if self.steps >= STEPS:
            self._end(Status.COMPLETED)
            self._arrive()
            self._after_segment()
            return
        heard = self.queue.popleft() if self.queue else None
        self._arrive()
        if heard is not None:
            message = heard
            if isinstance(message, Pause):
                self.out.append(TurnEnded("r", self.name, self.segment, self.steps, 0.0))
                self.state = "waiting"
                self._hear_while_waiting()
            elif isinstance(message, SwitchModel):
                self._end(Status.SWITCHED)
                self._start(message.config)

    def _hear_while_waiting(self):
        while self.queue:
            message = self.queue.popleft()
            if isinstance(message, (Resume, SwitchModel)):
                self.out.append(TurnResumed("r", self.name, self.segment, 0.0))
                self.state = "training"
                if isinstance(message, SwitchModel):
                    self._end(Status.SWITCHED)
                    self._start(message.config)
                return

    def _after_segment(self):
        if self.queue and isinstance(self.queue[0], SwitchModel):
            self._start(self.queue.popleft().config)
        elif not self.paced:
            self._finish()
        else:
            self.state = "between"
            self._hear_between()

    def _hear_between(self):
        while self.queue:
            message = self.queue.popleft()
            if isinstance(message, Finish):
                self._finish()
                return
            if isinstance(message, (Proceed, SwitchModel)):
                self._start(message.config)
                return

    def _finish(self):
        self.state, self.busy = "done", False
        self.out.append(LaneEnded("r", self.name, Status.COMPLETED, "", 0.0, 0))


class ScriptedPool:
    def __init__(self, names, stuck):
        self.clock, self.log = [0, 0], []  # batches trained, polls
        self.lanes = {name: ScriptedLane(name, self.clock, self.log) for name in names}
        for lane in self.lanes.values():
            lane.stuck = stuck

    def get(self, spec):
        return self.lanes[spec.name]


def conduct(plan, switch_when=None, switch_on_steer=None):
    """Run the conductor over two scripted lanes of shared cores; `switch_when(event, control)` may change the
    model from the event listener, `switch_on_steer(lane, message, control)` as the conductor steers a lane.
    Returns the pool (its log: every batch, in order) and the events."""
    specs = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]
    control, events = RunControl(), []
    pool = ScriptedPool([s.name for s in specs], control.cancel)
    if switch_on_steer is not None:
        for lane in pool.lanes.values():
            lane.on_steer = lambda lane, message: switch_on_steer(lane, message, control)

    def on_event(event):
        events.append(event)
        if switch_when is not None:
            switch_when(event, control)

    Conductor(pool, specs, plan, Schedule.INTERLEAVED, "r", on_event, control).run()
    return pool, events


def turns_of(log):
    """The lanes' batches as runs of one lane: [(lane, batches)]."""
    runs: list[list] = []
    for _, lane, _ in log:
        if runs and runs[-1][0] == lane:
            runs[-1][1] += 1
        else:
            runs.append([lane, 1])
    return [tuple(r) for r in runs]


def wide(config):
    import dataclasses
    return dataclasses.replace(config, model=dataclasses.replace(config.model, widths=(512,)))


def test_a_model_changed_just_after_a_turn_ended_waits_for_that_lanes_next_turn():
    switched = []

    def switch_as_a_turn_ends(lane, message, control):
        # The conductor tells cpu its (second) turn is over, and the width is dragged at that moment.
        if isinstance(message, Pause) and lane.name == "cpu" and lane.steps > 4 and not switched:
            control.switch(wide(CONFIG))
            switched.append(lane.steps)

    pool, events = conduct([CONFIG], switch_on_steer=switch_as_a_turn_ends)
    assert switched and pool.clock[1] <= 20000, "a lane waited for a turn the conductor thought it had"
    runs = turns_of(pool.log)
    # One lane trains at a time, turn by turn; no turn is longer than the turn's batches (a lane that heard
    # the pause and then the switch would have trained on, beside the other lane's turn).
    assert all(n <= 8 + 2 for _, n in runs), runs  # 8 batches to a turn; the pause is heard 2 later
    assert len(runs) >= 4, runs  # turns went on after the switch
    assert {label for _, lane, label in pool.log if lane == "cpu"} >= {(512,)}
    assert {label for _, lane, label in pool.log if lane == "cpu1"} >= {(512,)}


def test_a_switch_heard_before_a_pause_is_followed_by_that_pause_in_the_new_segment():
    dry, _ = conduct([CONFIG])
    second_pause = dry.lanes["cpu"].pauses_at[1]  # the step whose record ends cpu's second turn
    switched = []

    def switch_just_before_a_turn_ends(event, control):
        # The switch goes out one batch before the pause: cpu hears the switch first, the pause in the new segment.
        if isinstance(event, BatchTiming) and event.lane == "cpu" and event.step == second_pause - 1 and not switched:
            control.switch(wide(CONFIG))
            switched.append(event)

    pool, events = conduct([CONFIG], switch_just_before_a_turn_ends)
    assert switched and pool.clock[1] <= 20000, "a lane waited for a turn the conductor thought it had"
    runs = turns_of(pool.log)
    assert all(n <= 8 + 2 for _, n in runs), runs
    assert len(runs) >= 4, runs
    assert all(lane.state == "done" for lane in pool.lanes.values())


def test_a_paced_plan_changed_as_a_segment_ends_goes_on_with_the_new_model_and_finishes():
    plan = [CONFIG, wide(CONFIG)]
    switched = []
    late = wide(wide(CONFIG))

    def switch_at_a_segments_last_batch(event, control):
        if isinstance(event, BatchTiming) and event.lane == "cpu" and event.step == STEPS and not switched:
            control.switch(late)
            switched.append(event)

    pool, events = conduct(plan, switch_at_a_segments_last_batch)
    assert switched and pool.clock[1] <= 20000
    assert all(n <= 8 + 2 for _, n in turns_of(pool.log)), turns_of(pool.log)
    assert all(lane.state == "done" for lane in pool.lanes.values())
