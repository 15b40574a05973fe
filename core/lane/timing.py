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

import time
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, SupportsFloat, TypeAlias

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
    widths: str  # "750-150-50-50"
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
        """Under a load: the next call answers these requests (its record says which, and how long each waited)."""


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
    phase = on_phase or (lambda _name: None)
    c = clock

    class BatchTimer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.records: list[BatchTiming] = []
            self.epoch_logs: dict[str, float] = {}
            self.stopped_by = StopReason.BUDGET
            self.switch_to: RunConfig | None = None
            self._pending: list[LaneEvent] = []
            self._last_flush = 0.0
            self._epoch = 0
            self._begin = 0.0
            self._begin_batch = 0
            self._prev_end: float | None = None
            self._steps = 0
            self._steady_s = 0.0
            self._resumed = False
            self.energy = EnergySpan()
            # The machine's load over the segment's training, a stretch per turn: the turns waited out are left
            # out (the other lane trains on the cores then, which is no other work on this lane's figures).
            self.load_pieces: list[tuple[CpuSample | None, CpuSample | None]] = []
            self._load_start: CpuSample | None = cpu_sample()
            self._metering: tuple[int, float] | None = None  # (steps, perf_counter) at the piece's begin
            self._take: Take | None = None  # under a load: the requests the next call answers

        def _meter_begin(self) -> None:
            """Read the meter now; the read's time is taken off the next step's clock."""
            if meter is None or self._metering is not None:
                return
            before = time.perf_counter()
            meter.begin()
            read_c = getattr(meter, "temperature", None)
            if read_c is not None and self.energy.pieces == 0:
                self.energy.temp_begin_c = read_c()
            after = time.perf_counter()
            self._metering = (self._steps, after)
            if self._prev_end is not None:
                self._prev_end += after - before

        def _meter_end(self) -> None:
            if meter is None or self._metering is None:
                return
            steps, since = self._metering
            now = time.perf_counter()
            joules = meter.end()
            read_c = getattr(meter, "temperature", None)
            if read_c is not None:
                self.energy.temp_end_c = read_c()
            self._metering = None
            span = self.energy
            span.pieces += 1
            span.failed = span.failed or joules != joules
            span.joules += joules if joules == joules else 0.0
            span.steps += self._steps - steps
            span.samples += (self._steps - steps) * c.batch_size
            span.seconds += now - since

        def on_train_begin(self, logs: Logs | None = None) -> None:
            self._last_flush = time.perf_counter()

        def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
            self._epoch, self._prev_end = epoch, None

        def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
            self._begin_batch = batch
            self._begin = time.perf_counter()

        def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
            # Fetching the loss waits for the device: the step has really finished now.
            loss = float((logs or {}).get("loss", float("nan")))
            end = time.perf_counter()
            start = self._begin if self._prev_end is None or per_call else self._prev_end
            self._prev_end = end
            n = max(1, batch - self._begin_batch + 1)
            warmup = self._steps < c.warmup_steps
            take, self._take = self._take, None
            load = {} if take is None else {
                "requests": len(take.arrivals), "queued": take.queued, "backlog": take.backlog,
                "waits_ms": tuple(max(0.0, (self._begin - a) * 1000.0) for a in take.arrivals)}
            record = BatchTiming(run_id=c.run_id, lane=c.lane, device=c.device, epoch=self._epoch + 1,
                                 batch=batch + 1, step=c.first_step + self._steps + n, start_s=start - c.t0,
                                 ms=(end - start) * 1000.0,
                                 samples=(n if take is None else len(take.arrivals)) * c.batch_size,
                                 warmup=warmup, loss=loss, batches=n, backend=c.backend, widths=c.widths,
                                 batch_size=c.batch_size, segment=c.segment, resumed=self._resumed, task=c.task,
                                 family=c.family, **load)
            self._resumed = False
            if self._steps == 0:
                phase(LanePhase.TRAINING)
            self._steps += n
            if not warmup:
                self._steady_s += end - start
            self.records.append(record)
            self._pending.append(record)
            if end - self._last_flush >= FLUSH_INTERVAL_S:
                self.flush()
            if (c.max_steps is not None and self._steps >= c.max_steps) or \
                    (c.max_seconds is not None and self._steady_s >= c.max_seconds):
                self.model.stop_training = True
            elif should_stop():
                self.model.stop_training, self.stopped_by = True, StopReason.CANCEL
            elif steering is not None and steering.asked():
                message = steering.steer(0)
                if isinstance(message, Pause):
                    message = self._wait_for_turn(steering, record)
                if isinstance(message, SwitchModel):
                    self.model.stop_training, self.stopped_by, self.switch_to = True, StopReason.SWITCH, message.config
                elif message == StopReason.CANCEL:
                    self.model.stop_training, self.stopped_by = True, StopReason.CANCEL
            if meter is not None:
                if self.model.stop_training:
                    self._meter_end()
                elif self._steps >= c.warmup_steps and not self.energy.pieces and self._metering is None:
                    self._meter_begin()  # warm-up is over: the steady stretch starts with the next step

        def _wait_for_turn(self, steering: Steering, last: BatchTiming) -> Steer | StopReason:
            """The turn is over: say so, and wait here, mid-segment, until it comes back (Resume), the
            model changes (SwitchModel) or a stop. The wait is no step's time: the next record starts
            at its own batch's beginning, and is marked resumed."""
            self._meter_end()  # the wait is no step's energy either
            self._close_load_piece()  # nor the machine's load this lane's figures meet
            self._pending.append(TurnEnded(c.run_id, c.lane, c.segment, last.step, time.time()))
            self.flush()
            phase(LanePhase.WAITING)
            while not should_stop():
                message = steering.steer(TURN_POLL_S)
                if isinstance(message, (Resume, SwitchModel)):
                    phase(LanePhase.TRAINING)
                    self._load_start = cpu_sample()
                    self._prev_end, self._resumed = None, True
                    self._pending.append(TurnResumed(c.run_id, c.lane, c.segment, time.time()))
                    if isinstance(message, Resume) and self._steps >= c.warmup_steps:
                        self._meter_begin()
                    return message
            return StopReason.CANCEL

        def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
            self.epoch_logs = {k: float(v) for k, v in (logs or {}).items()}
            self._pending.append(EpochEnded(c.run_id, c.lane, epoch + 1, self.epoch_logs.get("loss", float("nan")),
                                            self.epoch_logs.get("accuracy", float("nan"))))
            self.flush()

        def _close_load_piece(self) -> None:
            if self._load_start is not None:
                self.load_pieces.append((self._load_start, cpu_sample()))
                self._load_start = None

        def on_train_end(self, logs: Logs | None = None) -> None:
            self._meter_end()  # a fit that ended by itself (its epochs ran out) ends the span here
            self._close_load_piece()
            phase(LanePhase.FINISHING)
            self.flush()

        @property
        def steps(self) -> int:
            return self._steps

        def take(self, take: Take) -> None:
            self._take = take

        def flush(self) -> None:
            if self._pending:
                emit(Bundle(tuple(self._pending)))
                self._pending = []
            self._last_flush = time.perf_counter()

    return BatchTimer()
