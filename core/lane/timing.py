"""The Keras callback that times every training step, flags warm-up, and stops on cancel, limits or a new model.

Warm-up rule: the first `warmup_steps` training steps of each segment (default 5) are warm-up.
The first step traces and compiles the step function; the next few touch memory, caches and
allocators for the first time. With steps per execution N, a record that holds any of those
steps is warm-up. Warm-up records are kept and exported, flagged, and left out of steady-state
statistics (core/analysis/).

Turns: a Pause (lanes taking turns) ends the lane's turn at the next batch end. The timer says so
(TurnEnded) and waits there, inside the segment, for Resume; the step after it is marked `resumed`,
and its clock starts at its own batch's beginning, so the wait is no step's time.

Clock: each step's ms runs from the end of the previous step to the end of this one, read after
the loss was fetched from the device (Keras syncs to hand it over), so the device had finished:
this is synced step latency, not pipelined throughput. With `per_call` (the predict task, core/lane/serving.py)
each record runs from its own call's beginning to its end: one call's latency, the loop between calls left out.

Energy: with a meter (core/lane/energy.py), the timer reads it when warm-up ends (after the last warm-up
step's record, the steady stretch's first step not yet begun) and when the segment ends (after its last
step's record), and around a turn waited out (ended at the Pause, begun again at the Resume), so the
joules cover the steady steps and no wait. A read is no step's time: the next step's clock starts after it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, SupportsFloat, TypeAlias

from ..config import RunConfig, Task
from ..messages import Bundle, LanePhase, Pause, Resume, Steer, SwitchModel
from ..records import BatchTiming, EpochEnded, LaneEvent, TurnEnded, TurnResumed
from .load import CpuSample
from .load import sample as cpu_sample

if TYPE_CHECKING:
    from types import ModuleType

    from .arrivals import Take
    from .energy import Meter
    from .steering import Steering

TURN_POLL_S = 0.05  # a lane waiting for its turn checks the cancel flag this often
FLUSH_INTERVAL_S = 0.05  # send records in small bundles: one queue put per batch costs more
# What Keras hands a callback: metric name → value (a float, or a NumPy or backend scalar that float() reads).
Logs: TypeAlias = Mapping[str, SupportsFloat]


class StopReason(str, Enum):
    """What ended a segment: its budget (steps or seconds), a cancel, or a new model (a switch)."""

    BUDGET = "budget"
    CANCEL = "cancel"
    SWITCH = "switch"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SegmentClock:
    """What the timer stamps on each record of one segment, and when the segment is over."""

    run_id: str
    lane: str
    device: str
    backend: str
    batch_size: int
    widths: tuple[int, ...]  # the model's hidden widths, (750, 150, 50, 50)
    segment: int
    first_step: int  # the run's steps before this segment: records count on from here
    t0: float  # perf_counter() at the run's start: start_s of every segment counts from it
    warmup_steps: int
    max_steps: int | None = None  # steps of this segment
    max_seconds: float | None = None  # steady seconds of this segment
    t0_at: float = 0.0  # time.time() at t0: a record's wall time is t0_at + start_s
    task: Task = Task.TRAIN  # what each record times: a training step, or one predict call
    family: str = "mlp"  # the kind of model (ModelSpec.kind) each record's widths belong to


@dataclass
class EnergySpan:
    """What the meter counted over a segment's steady steps: joules, and the steps, samples and seconds they cover."""

    joules: float = 0.0
    steps: int = 0
    samples: int = 0
    seconds: float = 0.0
    pieces: int = 0  # begin-end reads (more than one when a turn was waited out)
    failed: bool = False  # a read gave nothing: the joules are unknown
    temp_begin_c: float = float("nan")  # a GPU's temperature when the window began, and when it ended (NaN: none)
    temp_end_c: float = float("nan")


class StepTimer(Protocol):
    """What the run reads of the timer after its fit (the callback's class is made with the lane's keras)."""

    records: list[BatchTiming]
    epoch_logs: dict[str, float]
    stopped_by: StopReason
    switch_to: RunConfig | None
    energy: EnergySpan
    load_pieces: list[tuple[CpuSample | None, CpuSample | None]]

    @property
    def steps(self) -> int: ...

    def take(self, take: Take) -> None:
        """At an arrival rate: the next call answers these requests (its record says which, how long each waited)."""


def make_batch_timer(keras: ModuleType, clock: SegmentClock, *, emit: Callable[[Bundle], None],
                     should_stop: Callable[[], bool], steering: Steering | None = None,
                     on_phase: Callable[[LanePhase], None] | None = None, meter: Meter | None = None,
                     per_call: bool = False) -> StepTimer:
    """A keras.callbacks.Callback instance (the class needs the lane's keras, imported late).

    After each step it checks the cancel flag and `steering` (a core.steering.Steering, whose
    `asked()` is one memory read). `stopped_by` says what ended the segment (a StopReason; a switch: then
    `switch_to` holds the next config). `on_phase(LanePhase.TRAINING)` is called when the
    first step has ended and `on_phase(LanePhase.FINISHING)` when the last has.
    """
    class BatchTimer(_BatchTimer, keras.callbacks.Callback):
        """The step timer's hooks, as a callback of the lane's keras."""

    return BatchTimer(clock, emit=emit, should_stop=should_stop, steering=steering, on_phase=on_phase or _no_phase,
                      meter=meter, per_call=per_call)


def _no_phase(_phase: LanePhase) -> None:
    """The phase callback where the caller wants none."""


class _StepClock:
    """Each step's time, by perf_counter(): from the end of the step before to its own end, read after its loss (with
    `per_call`, from its own batch's beginning). After a restart (a new epoch, a turn waited out) the next step's time
    starts at its own batch's beginning; a meter read between two steps is skipped (no step's time)."""

    __slots__ = ("_per_call", "_prev_end", "_after_wait", "first_batch", "begin", "start", "end", "resumed")

    def __init__(self, per_call: bool) -> None:
        self._per_call = per_call
        self._prev_end: float | None = None
        self._after_wait = False
        self.first_batch = 0  # the batch the step began at (steps per execution N: it ends N - 1 later)
        self.begin = 0.0  # when its batch began
        self.start = 0.0  # when its time starts, and ends
        self.end = 0.0
        self.resumed = False  # the step is the first after a turn waited out

    def began(self, batch: int) -> None:
        """A step's batch begins (the last thing read before the step runs)."""
        self.first_batch = batch
        self.begin = time.perf_counter()

    def ended(self, batch: int) -> int:
        """Read the clock at a step's end (`start`, `end`, `resumed` are the step's now); returns its batches."""
        end = time.perf_counter()
        self.start = self.begin if self._prev_end is None or self._per_call else self._prev_end
        self._prev_end = self.end = end
        self.resumed, self._after_wait = self._after_wait, False
        n = batch - self.first_batch + 1
        return n if n > 1 else 1

    def restart(self, *, resumed: bool = False) -> None:
        """The next step's time starts at its own batch's beginning; `resumed`: it follows a turn waited out."""
        self._prev_end = None
        if resumed:
            self._after_wait = True

    def skip(self, seconds: float) -> None:
        """Leave `seconds` just spent (a meter read) out of the next step's time."""
        if self._prev_end is not None:
            self._prev_end += seconds


class _Steps:
    """The segment's steps so far and its steady seconds: its first `warmup_steps` steps are warm-up (no steady
    time), and its budget is spent at `max_steps` steps or `max_seconds` steady seconds (no limit: infinite)."""

    __slots__ = ("count", "steady_s", "warmup_steps", "max_steps", "max_seconds")

    def __init__(self, clock: SegmentClock) -> None:
        self.count = 0
        self.steady_s = 0.0
        self.warmup_steps = clock.warmup_steps
        self.max_steps: float = math.inf if clock.max_steps is None else clock.max_steps
        self.max_seconds: float = math.inf if clock.max_seconds is None else clock.max_seconds

    def add(self, n: int, seconds: float) -> bool:
        """Count a step of `n` batches that took `seconds`; returns whether it was warm-up."""
        warmup = self.count < self.warmup_steps
        self.count += n
        if not warmup:
            self.steady_s += seconds
        return warmup

    @property
    def warmed_up(self) -> bool:
        """Whether warm-up is over."""
        return self.count >= self.warmup_steps


_Record: TypeAlias = Callable[[int, int, int, int, float, bool, "Take | None"], BatchTiming]


def _record_maker(c: SegmentClock, clock: _StepClock) -> _Record:
    """The record made at each step's end: `record(epoch, batch, steps, n, loss, warmup, take)` (`steps`: the
    segment's so far, this step's `n` batches counted), with `clock`'s times and the segment's names, read once."""
    run_id, lane, device, backend, widths, batch_size = c.run_id, c.lane, c.device, c.backend, c.widths, c.batch_size
    segment, task, family, first_step, t0 = c.segment, c.task, c.family, c.first_step, c.t0

    def record(epoch: int, batch: int, steps: int, n: int, loss: float, warmup: bool, take: Take | None) -> BatchTiming:
        start = clock.start
        if take is None:
            samples, requests, queued, backlog, waits = n * batch_size, 0, 0, 0, ()
        else:  # a call at an arrival rate: the requests it answered, and how long each waited for it
            requests, queued, backlog = len(take.arrivals), take.queued, take.backlog
            samples, begin = requests * batch_size, clock.begin
            waits = tuple(max(0.0, (begin - a) * 1000.0) for a in take.arrivals)
        # By position, in BatchTiming's order (its fields by name cost 0.6 µs more a step): the names and times,
        # then the batches and the segment's names, then the arrivals' fields.
        return BatchTiming(run_id, lane, device, epoch + 1, batch + 1, first_step + steps, start - t0,
                           (clock.end - start) * 1000.0, samples, warmup, loss,
                           n, backend, widths, batch_size, segment, clock.resumed, task, family,
                           requests, queued, backlog, waits)

    return record


class _Outbox:
    """The events not sent yet, sent as one Bundle (one queue put per batch costs more): by the timer once
    FLUSH_INTERVAL_S has passed since the last (`last`), and at once where the app must hear now."""

    __slots__ = ("_emit", "_pending", "put", "last")

    def __init__(self, emit: Callable[[Bundle], None]) -> None:
        self._emit = emit
        self._pending: list[LaneEvent] = []
        self.put: Callable[[LaneEvent], None] = self._pending.append
        self.last = 0.0  # perf_counter() at the last flush

    def flush(self) -> None:
        if self._pending:
            self._emit(Bundle(tuple(self._pending)))
            self._pending.clear()
        self.last = time.perf_counter()


class _EnergyReads:
    """The meter's reads around the steady steps, summed in `span`: begun when warm-up ends and at a resume, ended at
    a pause and at the segment's end, so the joules cover the steady steps and no wait."""

    __slots__ = ("_meter", "_batch_size", "span", "opened")

    def __init__(self, meter: Meter, batch_size: int) -> None:
        self._meter = meter
        self._batch_size = batch_size
        self.span = EnergySpan()
        self.opened: tuple[int, float] | None = None  # (steps, perf_counter) at the open piece's begin

    def begin(self, steps: int) -> float:
        """Read the meter now, `steps` steps into the segment; returns the seconds the read took (no step's time)."""
        if self.opened is not None:
            return 0.0
        before = time.perf_counter()
        self._meter.begin()
        read_c = getattr(self._meter, "temperature", None)
        if read_c is not None and self.span.pieces == 0:
            self.span.temp_begin_c = read_c()
        after = time.perf_counter()
        self.opened = (steps, after)
        return after - before

    def end(self, steps: int) -> None:
        """Read the meter now, `steps` steps into the segment, and add the piece to `span`."""
        if self.opened is None:
            return
        began, since = self.opened
        now = time.perf_counter()
        joules = self._meter.end()
        read_c = getattr(self._meter, "temperature", None)
        if read_c is not None:
            self.span.temp_end_c = read_c()
        self.opened = None
        span = self.span
        span.pieces += 1
        span.failed = span.failed or joules != joules
        span.joules += joules if joules == joules else 0.0
        span.steps += steps - began
        span.samples += (steps - began) * self._batch_size
        span.seconds += now - since


class _LoadPieces:
    """The machine's load over the segment's training, a stretch per turn: the turns waited out are left out (the
    other lane trains on the cores then, which is no other work on this lane's figures)."""

    def __init__(self) -> None:
        self.pieces: list[tuple[CpuSample | None, CpuSample | None]] = []
        self._start: CpuSample | None = cpu_sample()

    def open(self) -> None:
        self._start = cpu_sample()

    def close(self) -> None:
        if self._start is not None:
            self.pieces.append((self._start, cpu_sample()))
            self._start = None


class _StopDecision:
    """After each step, whether the segment ends there: its budget first (`steps`), then a cancel (`should_stop`),
    then a steer: a new model ends it; a Pause waits the turn out here (`turn_ended`, `turn_resumed`: the timer's
    side of it) and goes on, or ends it. Returns None (go on), StopReason.BUDGET or CANCEL, or the SwitchModel."""

    __slots__ = ("_steps", "_should_stop", "_steering", "_turn_ended", "_turn_resumed")

    def __init__(self, steps: _Steps, should_stop: Callable[[], bool], steering: Steering | None,
                 turn_ended: Callable[[BatchTiming], None], turn_resumed: Callable[[bool], None]) -> None:
        self._steps = steps
        self._should_stop = should_stop
        self._steering = steering
        self._turn_ended = turn_ended
        self._turn_resumed = turn_resumed

    def __call__(self, last: BatchTiming) -> StopReason | SwitchModel | None:
        steps = self._steps
        if steps.count >= steps.max_steps or steps.steady_s >= steps.max_seconds:
            return StopReason.BUDGET
        if self._should_stop():
            return StopReason.CANCEL
        steering = self._steering
        if steering is None or not steering.asked():
            return None
        message = steering.steer(0)
        if isinstance(message, Pause):
            message = self._wait_for_turn(steering, last)
        if isinstance(message, SwitchModel):
            return message
        return StopReason.CANCEL if message is StopReason.CANCEL else None

    def _wait_for_turn(self, steering: Steering, last: BatchTiming) -> Steer | StopReason:
        """The turn is over: say so, and wait here, mid-segment, until it comes back (Resume), the
        model changes (SwitchModel) or a stop. The wait is no step's time: the next record starts
        at its own batch's beginning, and is marked resumed."""
        self._turn_ended(last)
        while not self._should_stop():
            message = steering.steer(TURN_POLL_S)
            if isinstance(message, (Resume, SwitchModel)):
                self._turn_resumed(isinstance(message, Resume))
                return message
        return StopReason.CANCEL


class _BatchTimer:
    """The step timer's keras hooks (make_batch_timer makes them a keras.callbacks.Callback). At each batch's end it
    reads the step's clock, counts the step, makes and sends its record, asks whether the segment ends there, and
    reads the meter where warm-up or the segment ends; each of those is a part's own."""

    model: Any  # the model being fit (keras's Callback.set_model; serve() sets it as fit would)

    def __init__(self, c: SegmentClock, *, emit: Callable[[Bundle], None], should_stop: Callable[[], bool],
                 steering: Steering | None, on_phase: Callable[[LanePhase], None], meter: Meter | None,
                 per_call: bool) -> None:
        super().__init__()
        self.records: list[BatchTiming] = []
        self.epoch_logs: dict[str, float] = {}
        self.stopped_by = StopReason.BUDGET
        self.switch_to: RunConfig | None = None
        self._segment = c
        self._phase = on_phase
        self._epoch = 0
        self._take: Take | None = None  # at an arrival rate: the requests the next call answers
        self._clock = _StepClock(per_call)
        self._steps = _Steps(c)
        self._record = _record_maker(c, self._clock)
        self._out = _Outbox(emit)
        self._energy = _EnergyReads(meter, c.batch_size) if meter is not None else None
        self.energy = self._energy.span if self._energy is not None else EnergySpan()
        self._load = _LoadPieces()
        self.load_pieces = self._load.pieces
        self._decide = _StopDecision(self._steps, should_stop, steering, self._turn_ended, self._turn_resumed)

    @property
    def steps(self) -> int:
        return self._steps.count

    def take(self, take: Take) -> None:
        self._take = take

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._out.last = time.perf_counter()

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._epoch = epoch
        self._clock.restart()

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._clock.began(batch)

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        # Fetching the loss waits for the device: the step has really finished now.
        loss = float((logs or {}).get("loss", math.nan))
        clock, steps, out = self._clock, self._steps, self._out
        n = clock.ended(batch)
        if not steps.count:
            self._phase(LanePhase.TRAINING)
        warmup = steps.add(n, clock.end - clock.start)
        take, self._take = self._take, None
        record = self._record(self._epoch, batch, steps.count, n, loss, warmup, take)
        self.records.append(record)
        out.put(record)
        if clock.end - out.last >= FLUSH_INTERVAL_S:
            out.flush()
        ended = self._decide(record)
        if ended is not None:
            self._stop(ended)
        energy = self._energy
        if energy is not None:
            if self.model.stop_training:
                energy.end(steps.count)
            elif energy.opened is None and not energy.span.pieces and steps.count >= steps.warmup_steps:
                clock.skip(energy.begin(steps.count))  # warm-up is over: the steady stretch starts with the next step

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self.epoch_logs = {k: float(v) for k, v in (logs or {}).items()}
        c = self._segment
        self._out.put(EpochEnded(c.run_id, c.lane, epoch + 1, self.epoch_logs.get("loss", float("nan")),
                                 self.epoch_logs.get("accuracy", float("nan"))))
        self._out.flush()

    def on_train_end(self, logs: Logs | None = None) -> None:
        if self._energy is not None:
            self._energy.end(self._steps.count)  # a fit that ended by itself (its epochs ran out) ends the span here
        self._load.close()
        self._phase(LanePhase.FINISHING)
        self._out.flush()

    def _stop(self, why: StopReason | SwitchModel) -> None:
        self.model.stop_training = True
        if isinstance(why, SwitchModel):
            self.stopped_by, self.switch_to = StopReason.SWITCH, why.config
        elif why is StopReason.CANCEL:
            self.stopped_by = why

    def _turn_ended(self, last: BatchTiming) -> None:
        """The turn is over after `last`: the meter and the load stop counting, and the app hears it now."""
        if self._energy is not None:
            self._energy.end(self._steps.count)  # the wait is no step's energy either
        self._load.close()  # nor the machine's load this lane's figures meet
        c = self._segment
        self._out.put(TurnEnded(c.run_id, c.lane, c.segment, last.step, time.time()))
        self._out.flush()
        self._phase(LanePhase.WAITING)

    def _turn_resumed(self, resume: bool) -> None:
        """The turn is back (`resume`; else a new model ends the segment): the clock, load and meter go on."""
        self._phase(LanePhase.TRAINING)
        self._load.open()
        self._clock.restart(resumed=True)
        c = self._segment
        self._out.put(TurnResumed(c.run_id, c.lane, c.segment, time.time()))
        if resume and self._energy is not None and self._steps.warmed_up:
            self._clock.skip(self._energy.begin(self._steps.count))
