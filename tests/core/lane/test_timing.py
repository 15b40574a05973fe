"""The step timer on a fake clock and a fake keras: each record's time and flags, the stop it decides, the turn it
waits out, and the meter it reads around the steady steps (core/lane/timing.py)."""
from __future__ import annotations

import math
import time
import types

import pytest

from core.config import RunConfig, Task
from core.lane.arrivals import Take
from core.lane.timing import SegmentClock, StopReason, make_batch_timer
from core.messages import Bundle, LanePhase, Pause, Resume, SwitchModel
from core.records import BatchTiming, EpochEnded, TurnEnded, TurnResumed


class Callback:
    """What the timer needs of keras.callbacks.Callback."""

    def __init__(self) -> None:
        self.model = types.SimpleNamespace(stop_training=False)


KERAS = types.SimpleNamespace(callbacks=types.SimpleNamespace(Callback=Callback))


class Clock:
    """perf_counter() as the test sets it: it moves only when the test (or a fake meter) moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(time, "perf_counter", fake)
    return fake


class Steering:
    """Scripted steering: asked() after the steps listed, then steer() hands out the messages in order."""

    def __init__(self, at: set[int], messages: list[object]) -> None:
        self.at, self.messages, self.step = at, messages, 0
        self.timeouts: list[float | None] = []

    def asked(self) -> bool:
        self.step += 1
        return self.step in self.at

    def steer(self, timeout: float | None = None) -> object:
        self.timeouts.append(timeout)
        return self.messages.pop(0) if self.messages else None


class Meter:
    """A meter whose reads take a second of the fake clock each; 2 J per read."""

    counter = "fake"
    note = ""

    def __init__(self, clock: Clock, joules: float = 2.0) -> None:
        self.clock, self.joules, self.calls = clock, joules, []

    def begin(self) -> None:
        self.calls.append(("begin", self.clock.now))
        self.clock.now += 1.0

    def end(self) -> float:
        self.calls.append(("end", self.clock.now))
        return self.joules

    def temperature(self) -> float:
        return 40.0 + len(self.calls)


def segment(**kw: object) -> SegmentClock:
    base = dict(run_id="r", lane="cpu", device="CPU", backend="tensorflow", batch_size=4, widths=(8, 8), segment=2,
                first_step=10, t0=1000.0, warmup_steps=2, max_steps=5)
    return SegmentClock(**{**base, **kw})  # type: ignore[arg-type]


def fit(timer, clock: Clock, steps: int, *, ms: float = 10.0, every: int = 1, epoch_at: int = 0) -> int:
    """Drive the hooks as keras's fit does, `every` batches per step, each step `ms` long; returns the steps run."""
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    batch, done = 0, 0
    while done < steps and not timer.model.stop_training:
        timer.on_train_batch_begin(batch)
        clock.now += ms / 1000.0
        batch += every
        timer.on_train_batch_end(batch - 1, {"loss": 0.5})
        done += 1
        if epoch_at and done == epoch_at:
            timer.on_epoch_end(0, {"loss": 0.25, "accuracy": 0.75})
            timer.on_epoch_begin(1)
            batch = 0
    timer.on_epoch_end(1 if epoch_at else 0, {"loss": 0.125})
    timer.on_train_end()
    return done


def events(sent: list[Bundle]) -> list[object]:
    return [e for bundle in sent for e in bundle.events]


def test_each_step_is_timed_from_the_previous_end_and_the_first_steps_are_warm_up(clock: Clock):
    sent: list[Bundle] = []
    phases: list[LanePhase] = []
    timer = make_batch_timer(KERAS, segment(), emit=sent.append, should_stop=lambda: False,
                             on_phase=phases.append)
    assert fit(timer, clock, 10) == 5  # max_steps
    records = timer.records
    assert [r.step for r in records] == [11, 12, 13, 14, 15] and timer.steps == 5
    assert [r.warmup for r in records] == [True, True, False, False, False]
    assert all(math.isclose(r.ms, 10.0) for r in records)
    assert [round(r.start_s, 6) for r in records] == [0.0, 0.01, 0.02, 0.03, 0.04]
    first = records[0]
    assert (first.run_id, first.lane, first.device, first.epoch, first.batch, first.samples, first.loss,
            first.batches, first.backend, first.widths, first.batch_size, first.segment, first.resumed, first.task,
            first.family, first.requests, first.waits_ms) == \
        ("r", "cpu", "CPU", 1, 1, 4, 0.5, 1, "tensorflow", (8, 8), 4, 2, False, Task.TRAIN, "mlp", 0, ())
    assert timer.stopped_by is StopReason.BUDGET and timer.switch_to is None
    assert phases == [LanePhase.TRAINING, LanePhase.FINISHING]
    assert [e for e in events(sent) if isinstance(e, BatchTiming)] == records
    assert isinstance(events(sent)[-1], EpochEnded) and timer.epoch_logs == {"loss": 0.125}
    assert len(timer.load_pieces) == 1 and timer.energy.pieces == 0


def test_steps_per_execution_counts_every_batch_of_a_record(clock: Clock):
    timer = make_batch_timer(KERAS, segment(max_steps=12, warmup_steps=5), emit=lambda _b: None,
                             should_stop=lambda: False)
    fit(timer, clock, 10, every=4)
    assert [(r.batch, r.step, r.batches, r.samples, r.warmup) for r in timer.records] == \
        [(4, 14, 4, 16, True), (8, 18, 4, 16, True), (12, 22, 4, 16, False)]


def test_a_new_epoch_starts_its_first_step_at_its_own_batch(clock: Clock):
    timer = make_batch_timer(KERAS, segment(max_steps=None), emit=lambda _b: None, should_stop=lambda: False)
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    for batch in range(2):
        timer.on_train_batch_begin(batch)
        clock.now += 0.01
        timer.on_train_batch_end(batch, {"loss": 1.0})
    timer.on_epoch_end(0, {"loss": 1.0})
    clock.now += 5.0  # between epochs: no step's time
    timer.on_epoch_begin(1)
    timer.on_train_batch_begin(0)
    clock.now += 0.02
    timer.on_train_batch_end(0, {})
    last = timer.records[-1]
    assert (last.epoch, last.batch) == (2, 1) and math.isclose(last.ms, 20.0) and math.isnan(last.loss)


def test_per_call_times_each_call_from_its_own_beginning(clock: Clock):
    timer = make_batch_timer(KERAS, segment(task=Task.PREDICT), emit=lambda _b: None, should_stop=lambda: False,
                             per_call=True)
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    for batch in range(3):
        clock.now += 0.5  # the loop between calls: left out
        timer.on_train_batch_begin(batch)
        clock.now += 0.002
        timer.on_train_batch_end(batch, {})
    assert all(math.isclose(r.ms, 2.0) for r in timer.records)
    assert all(r.task is Task.PREDICT for r in timer.records)


def test_steady_seconds_stop_the_segment(clock: Clock):
    timer = make_batch_timer(KERAS, segment(max_steps=None, max_seconds=0.025), emit=lambda _b: None,
                             should_stop=lambda: False)
    assert fit(timer, clock, 100) == 5  # two warm-up steps, then three of 10 ms reach 25 ms
    assert timer.stopped_by is StopReason.BUDGET


def test_a_cancel_stops_after_the_step(clock: Clock):
    asked = iter([False, False, True])
    timer = make_batch_timer(KERAS, segment(max_steps=None), emit=lambda _b: None, should_stop=lambda: next(asked))
    assert fit(timer, clock, 100) == 3 and timer.stopped_by is StopReason.CANCEL


def test_a_budget_reached_wins_over_a_cancel_in_the_same_step(clock: Clock):
    timer = make_batch_timer(KERAS, segment(max_steps=1), emit=lambda _b: None, should_stop=lambda: True)
    assert fit(timer, clock, 5) == 1 and timer.stopped_by is StopReason.BUDGET


def test_a_switch_ends_the_segment_with_the_next_config(clock: Clock):
    config = RunConfig()
    steering = Steering({2}, [SwitchModel(config)])
    timer = make_batch_timer(KERAS, segment(max_steps=None), emit=lambda _b: None, should_stop=lambda: False,
                             steering=steering)  # type: ignore[arg-type]
    assert fit(timer, clock, 100) == 2
    assert timer.stopped_by is StopReason.SWITCH and timer.switch_to is config


def test_a_message_that_is_no_steer_of_a_run_goes_on(clock: Clock):
    steering = Steering({1, 2}, [None, Resume()])
    timer = make_batch_timer(KERAS, segment(), emit=lambda _b: None, should_stop=lambda: False,
                             steering=steering)  # type: ignore[arg-type]
    assert fit(timer, clock, 100) == 5 and timer.stopped_by is StopReason.BUDGET


def test_a_turn_is_waited_out_mid_segment_and_is_no_steps_time(clock: Clock):
    sent: list[Bundle] = []
    phases: list[LanePhase] = []
    meter = Meter(clock)
    messages: list[object] = [Pause(), None, None, Resume()]
    steering = Steering({3}, messages)

    def steer(timeout: float | None = None) -> object:
        clock.now += 7.0 if timeout else 0.0  # the wait: the other lane's turn
        return Steering.steer(steering, timeout)

    steering.steer = steer  # type: ignore[method-assign]
    timer = make_batch_timer(KERAS, segment(), emit=sent.append, should_stop=lambda: False, steering=steering,  # type: ignore[arg-type]
                             on_phase=phases.append, meter=meter)
    fit(timer, clock, 100)
    records = timer.records
    assert [r.resumed for r in records] == [False, False, False, True, False]
    assert all(math.isclose(r.ms, 10.0) for r in records)
    assert phases == [LanePhase.TRAINING, LanePhase.WAITING, LanePhase.TRAINING, LanePhase.FINISHING]
    assert steering.timeouts == [0, 0.05, 0.05, 0.05]
    kinds = [type(e).__name__ for e in events(sent)]
    assert kinds[:5] == ["BatchTiming"] * 3 + ["TurnEnded", "TurnResumed"]
    ended = next(e for e in events(sent) if isinstance(e, TurnEnded))
    assert (ended.segment, ended.step) == (2, 13)
    assert any(isinstance(e, TurnResumed) for e in events(sent))
    # Metered: from warm-up's end to the pause, and from the resume to the segment's end; the wait is in neither.
    span = timer.energy
    assert [c[0] for c in meter.calls] == ["begin", "end", "begin", "end"]
    assert (span.pieces, span.joules, span.steps, span.samples) == (2, 4.0, 3, 12)
    assert math.isclose(span.seconds, 0.03) and not span.failed
    assert span.temp_begin_c == 41.0 and span.temp_end_c == 44.0  # read after each begin, after each end
    assert len(timer.load_pieces) == 2


def test_a_stop_while_waiting_for_the_turn_is_a_cancel(clock: Clock):
    stop = [False]
    steering = Steering({1}, [Pause()])

    def steer(timeout: float | None = None) -> object:
        if timeout:
            stop[0] = True
        return Steering.steer(steering, timeout)

    steering.steer = steer  # type: ignore[method-assign]
    timer = make_batch_timer(KERAS, segment(max_steps=None), emit=lambda _b: None, should_stop=lambda: stop[0],
                             steering=steering)  # type: ignore[arg-type]
    assert fit(timer, clock, 100) == 1 and timer.stopped_by is StopReason.CANCEL


def test_the_meter_read_is_no_steps_time_and_a_failed_read_is_unknown(clock: Clock):
    meter = Meter(clock, joules=math.nan)
    timer = make_batch_timer(KERAS, segment(), emit=lambda _b: None, should_stop=lambda: False, meter=meter)
    fit(timer, clock, 100)
    assert [c[0] for c in meter.calls] == ["begin", "end"]
    assert all(math.isclose(r.ms, 10.0) for r in timer.records)  # the begin read's second is taken off
    assert (timer.energy.pieces, timer.energy.failed, timer.energy.joules, timer.energy.steps) == (1, True, 0.0, 3)


def test_a_call_at_a_rate_says_its_requests_and_their_waits(clock: Clock):
    timer = make_batch_timer(KERAS, segment(task=Task.PREDICT), emit=lambda _b: None, should_stop=lambda: False,
                             per_call=True)
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    timer.take(Take(arrivals=(clock.now - 0.003, clock.now - 0.001, clock.now + 1.0), queued=2, backlog=1))
    timer.on_train_batch_begin(0)
    clock.now += 0.002
    timer.on_train_batch_end(0, {})
    timer.on_train_batch_begin(1)
    timer.on_train_batch_end(1, {})
    under, after = timer.records
    assert (under.requests, under.queued, under.backlog, under.samples) == (3, 2, 1, 12)
    assert [round(w, 6) for w in under.waits_ms] == [3.0, 1.0, 0.0]
    assert (after.requests, after.waits_ms, after.samples) == (0, (), 4)


def test_records_go_out_in_bundles(clock: Clock):
    sent: list[Bundle] = []
    timer = make_batch_timer(KERAS, segment(max_steps=None), emit=sent.append, should_stop=lambda: False)
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    for batch in range(12):
        timer.on_train_batch_begin(batch)
        clock.now += 1 / 64  # 15.6 ms, exact in binary
        timer.on_train_batch_end(batch, {})
    assert [len(b.events) for b in sent] == [4, 4, 4]  # once 50 ms have passed since the last bundle
