"""Lanes: one worker process per device profile; jobs in, events out, cancel, crash and leak recovery.

The parent never imports a deep-learning framework: a lane's process does, once, and trains
the jobs it is sent. Whatever happens there (an exception, out of memory, a segfault, a kill)
reaches the parent as a RunFailed with a reason, and the next job gets a fresh process.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..config import LaneSpec, RunConfig
from .local_channel import LocalChannel
from ..analysis.anatomy import AnatomyMeasured  # registered with the wire's codec where the parent reads replies
from ..messages import (Bundle, Inspected, CalibrateJob, Calibrated, CloseLane, Finish, Job, LaneAlive,
                        LanePhase, LaneClosed, LaneDied, Wirable, LaneStartFailed, LaneStatus, NoAnswer, PrepareJob, Prepared, ProbeJob, Probed,
                        Proceed,
                        RequestCancelled, RunJob, Steer, SwitchModel, Unanswered)
from ..paths import lane_log_path
from ..records import BatchTiming, LaneEnded, LaneEvent, RunFailed, RunFinished, SegmentEnded, Status, now_iso

CANCEL_GRACE_S = 1.0  # after this, a lane that has not stopped is killed
# Recycle the process once it has grown this much past its size after the first run:
# TensorFlow never frees a trained model's variables and optimizer slots.
MEMORY_LIMIT_MB = 2000.0
START_TIMEOUT_S = 120.0
# A running lane that sends nothing (no record, no heartbeat) for this long is taken to have stopped
# responding and is killed. Heartbeats come every 2 s while it prepares or finishes; while batches
# flow, the limit grows to SLOW_STEP_FACTOR times the slowest step seen, so a big model is never cut.
SLOW_STEP_FACTOR = 20.0
# However slow the steps it reports, a lane silent for this long is killed: one step of 1e300 ms (a hostile or
# broken report) must not turn the watchdog off for good.
WATCHDOG_CEILING_S = 6 * 3600.0
# The watchdog is armed once a lane is ready (its framework imported). Before that, a new interpreter on a loaded
# machine can go many seconds before its first heartbeat (a fresh clone's CI at load 8.9 saw a 4-s watchdog kill a
# lane still importing its framework): a starting lane is killed only after this much silence, or the watchdog's
# own limit where that is longer.
START_SILENCE_S = 60.0


def watchdog_problem(seconds: float) -> str:
    """Why `seconds` cannot be a watchdog limit (a sentence), or "" when it can: a finite time above 0."""
    if not math.isfinite(seconds) or seconds <= 0:
        return (f"{seconds:g} s is not a time to wait: choose a number of seconds above 0 (default 60; the "
                "limit grows with the steps a lane reports)")
    if seconds > WATCHDOG_CEILING_S:
        return (f"{seconds:g} s is longer than the {WATCHDOG_CEILING_S / 3600:g} hours a silent lane is ever waited "
                "for: choose at most that")
    return ""


def _watchdog_from_env(text: str | None) -> float:
    try:
        seconds = float(text or 60.0)
    except ValueError:
        return 60.0
    return seconds if not watchdog_problem(seconds) else 60.0  # nan, 0 or -1 never disable it, nor kill at once


WATCHDOG_S = _watchdog_from_env(os.environ.get("CROSSOVER_WATCHDOG_S"))

class Channel(Protocol):
    """How the app speaks to a lane's process: LocalChannel (a spawned child, local_channel.py) or
    RemoteChannel (ssh, remote/channel.py). Every answer is a message of core/messages.py."""

    @property
    def pid(self) -> int | None: ...

    @property
    def alive(self) -> bool: ...

    def exit_reason(self) -> str: ...

    def send(self, job: Job | Steer) -> bool: ...

    def steer(self, message: Steer) -> bool: ...

    def receive(self, timeout: float) -> Wirable | None: ...  # an Answer (a remote one as the wire built it), or None

    def set_cancel(self, on: bool) -> None: ...

    def join(self, timeout: float) -> bool: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...


ChannelFactory = Callable[[LaneSpec], Channel]


def local_channel(spec: LaneSpec) -> LocalChannel:
    return LocalChannel(spec, lane_log_path(spec.name))


@dataclass
class _ActiveRun:
    run_id: str
    config: RunConfig
    submitted: float  # time.monotonic()
    paced: bool = False  # a plan of segments: the conductor says when it is over (Finish)
    finished_plan: bool = False  # Finish was sent (or the run has a single segment)
    finishing: bool = False  # its last segment completed: the lane is only tidying up


class Lane:
    """A device profile's worker process. Use from one thread; `cancel()` may come from any."""

    def __init__(self, spec: LaneSpec, *, cancel_grace_s: float = CANCEL_GRACE_S,
                 memory_limit_mb: float = MEMORY_LIMIT_MB, channel_factory: ChannelFactory = local_channel,
                 watchdog_s: float = WATCHDOG_S, start_silence_s: float = START_SILENCE_S) -> None:
        self.spec = spec
        self.cancel_grace_s = cancel_grace_s
        self.watchdog_s = watchdog_s
        self.start_silence_s = start_silence_s
        self._last_heard = 0.0
        self._slowest_s = 0.0
        self.memory_limit_mb = memory_limit_mb
        self._new_channel = channel_factory
        self._channel: Channel | None = None
        self._run: _ActiveRun | None = None
        self._cancel_at: float | None = None
        self._recycle = False
        self._baseline_mb: float | None = None  # the process's size after its first run
        self._answers: list[Any] = []  # answers to probe/calibrate, read by request()
        self._lock = threading.Lock()
        self.processes_started = 0
        self.up = False  # the process has imported its framework (it answered something other than a heartbeat)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def busy(self) -> bool:
        return self._run is not None

    @property
    def alive(self) -> bool:
        channel = self._channel
        return channel is not None and channel.alive

    @property
    def pid(self) -> int | None:
        channel = self._channel
        return channel.pid if channel is not None else None

    def start(self) -> Channel:
        """Start the process if none runs (returns at once; it imports its backend in the background);
        returns the channel to it."""
        channel = self._channel
        if channel is not None and channel.alive:
            return channel
        self._drop_channel()
        self._answers.clear()  # a previous process's answers must not answer this one's requests
        channel = self._channel = self._new_channel(self.spec)
        self.up = False  # until the new process has imported its framework and answered
        self._baseline_mb = None
        self.processes_started += 1
        return channel

    def submit(self, run_id: str, config: RunConfig, paced: bool = False) -> None:
        if self._run is not None:
            raise RuntimeError(f"lane {self.name} is already running {self._run.run_id}")
        if self._recycle:
            self.close()
            self._recycle = False
        channel = self.start()
        channel.set_cancel(False)
        self._cancel_at = None
        self._last_heard, self._slowest_s = time.monotonic(), 0.0
        self._run = _ActiveRun(run_id, config, time.monotonic(), paced, finished_plan=not paced)
        channel.send(RunJob(run_id, config, paced))

    def steer(self, message: Steer) -> bool:
        """Tell the run in progress something (a new model, the next segment); False when none runs."""
        channel = self._channel
        run = self._run
        if run is None or channel is None:
            return False
        if isinstance(message, Finish):
            run.finished_plan = True
            run.finishing = run.finishing or run.paced
        elif isinstance(message, (SwitchModel, Proceed)):
            run.finishing = False
        return channel.steer(message)

    def cancel(self) -> None:
        """Ask the run to stop at its next batch end; poll() kills the process after the grace period."""
        with self._lock:
            channel = self._channel
            if self._run is not None and self._cancel_at is None and channel is not None:
                self._cancel_at = time.monotonic()
                channel.set_cancel(True)

    def poll(self, timeout: float = 0.05) -> list[LaneEvent]:
        """Events that arrived (waits up to `timeout` for the first); detects crashes and stuck cancels."""
        out: list[LaneEvent] = []
        channel = self._channel  # close() from another thread may drop it meanwhile
        if channel is None:
            return out
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = channel.receive(max(0.0, deadline - time.monotonic()) if not out else 0)
            except EOFError:
                break
            if item is None:
                break
            self._last_heard = time.monotonic()
            out.extend(self._consume(item))
        if self._run is not None:
            out.extend(self._check_health())
        return out

    def _consume(self, item: Wirable) -> list[LaneEvent]:
        # Anything but a heartbeat or a failed start comes from a worker that has imported its framework.
        self.up = self.up or not isinstance(item, (LaneAlive, LaneStartFailed)) or (
            isinstance(item, LaneAlive) and item.phase is LanePhase.READY)
        match item:
            case Bundle(events=events):
                for event in events:
                    if isinstance(event, BatchTiming) and not event.warmup and 0 <= event.ms < math.inf:
                        # Steady steps only (a first step compiles), finite ones: the limit grows with them.
                        self._slowest_s = max(self._slowest_s, event.ms / 1000.0)
                    elif isinstance(event, SegmentEnded) and self._run is not None:
                        # Unpaced, a completed segment is the run's last (a switch ends it "switched").
                        self._run.finishing = event.summary.status == Status.COMPLETED and self._run.finished_plan
                    elif isinstance(event, (RunFinished, RunFailed)):
                        self._run = None
                        self._cancel_at = None
                return list(events)
            case LaneStatus(rss_mb=rss):
                if self._baseline_mb is None:
                    self._baseline_mb = rss
                elif rss - self._baseline_mb > self.memory_limit_mb:
                    self._recycle = True
            case LaneStartFailed(reason=reason):
                self._answers.append(item)
                if self._run is not None:
                    return [self._end_by_parent(self._run, Status.FAILED, f"the lane could not start: {reason}")]
            case Probed() | Prepared() | Calibrated() | AnatomyMeasured() | Inspected():
                self._answers.append(item)
            case LaneAlive():
                pass  # heard: that is all a heartbeat says
        return []

    def watchdog_limit_s(self) -> float:
        """The silence after which a running lane is killed: the watchdog, grown to SLOW_STEP_FACTOR times the
        slowest steady step, never beyond WATCHDOG_CEILING_S (nor below the watchdog itself)."""
        return min(max(self.watchdog_s, SLOW_STEP_FACTOR * self._slowest_s), max(self.watchdog_s, WATCHDOG_CEILING_S))

    def start_limit_s(self) -> float:
        """The silence after which a lane that is still starting (not yet ready) is taken to be frozen: never less
        than the watchdog, and long enough for an interpreter to come up on a loaded machine."""
        return max(self.watchdog_s, self.start_silence_s)

    def _check_health(self) -> list[LaneEvent]:
        run, channel, cancel_at = self._run, self._channel, self._cancel_at  # close() may clear them meanwhile
        if run is None:
            return []
        if channel is not None and not channel.alive:
            return [self._end_by_parent(run, Status.FAILED, channel.exit_reason())]
        if cancel_at is not None and time.monotonic() - cancel_at > self.cancel_grace_s:
            reason = f"stopped by killing the lane: it did not stop within {self.cancel_grace_s:.1f} s"
            return [self._end_by_parent(run, Status.CANCELLED, reason)]
        silent = time.monotonic() - self._last_heard
        if not self.up:  # still importing its framework: the watchdog is armed once the lane is ready
            if silent > self.start_limit_s():
                return [self._end_by_parent(run, Status.FAILED, self._frozen_start(silent))]
            return []
        if silent > self.watchdog_limit_s():
            reason = (f"the lane stopped responding after {silent:.0f} s without a batch or a heartbeat, "
                      "and was killed; what it measured before is kept")
            return [self._end_by_parent(run, Status.FAILED, reason)]
        return []

    def _frozen_start(self, silent: float) -> str:
        return (f"the lane stopped responding while it started ({silent:.0f} s without a heartbeat, more than the "
                f"{self.start_limit_s():g} s a starting lane is given), and was killed")

    def _end_by_parent(self, run: _ActiveRun, status: Status, reason: str) -> LaneEvent:
        """End the run from this side (the process died, or was too slow to stop): kill the process and
        say so. The records that arrived are summarised where they are folded (LaneResult), not here."""
        if status == Status.CANCELLED and run.finishing:
            # Every batch of its plan had been measured: a stop while it tidied up does not undo that.
            status, reason = Status.COMPLETED, "stopped while finishing, after its last batch"
        event = LaneEnded(run.run_id, self.name, status, reason, time.monotonic() - run.submitted,
                          run.config.flops_per_batch, now_iso())
        self._run = None
        self._kill()
        return event

    def request(self, job: Job, answer: type, timeout: float = START_TIMEOUT_S,
                cancel: threading.Event | None = None, work_limit_s: float | None = None) -> Any:
        """Send a job to an idle lane and wait for its answer (an instance of `answer`), or say why none came.
        `work_limit_s`: once the lane is up, it answers within this long or is killed (a lane stuck in the job
        beats its heartbeat all the same: a factory that never returns, a model file that never ends)."""
        if self.busy:
            raise RuntimeError(f"lane {self.name} is busy")
        channel = self.start()
        channel.send(job)
        sent = time.monotonic()
        deadline = sent + timeout
        up_at: float | None = None
        while time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                return RequestCancelled()
            self.poll(0.1)
            if self.up and up_at is None:
                up_at = time.monotonic()
            if work_limit_s is not None and up_at is not None and time.monotonic() - up_at > work_limit_s \
                    and self._channel is channel:
                self._kill()
                return LaneDied(f"the lane was still at it {work_limit_s:g} s after it was ready, alive but with no "
                                "answer (the watchdog's limit), and was killed")
            # While it starts, a lane beats every few seconds from its first moment (core/lane/worker.py): silence
            # beyond the start's limit is a lane that froze (stopped, or stuck in an import), not one that is slow.
            silent = time.monotonic() - max(sent, self._last_heard)
            if not self.up and silent > self.start_limit_s() and self._channel is channel:
                self._kill()
                return LaneDied(self._frozen_start(silent))
            for item in list(self._answers):
                if isinstance(item, (answer, LaneStartFailed)):
                    self._answers.remove(item)
                    return item
            if self._channel is not channel:
                return LaneClosed()
            if not channel.alive:
                return LaneDied(channel.exit_reason())
        return NoAnswer(f"the lane did not answer within {timeout:.0f} s")

    def probe(self, timeout: float = START_TIMEOUT_S, cancel: threading.Event | None = None) -> Probed | Unanswered:
        return self.request(ProbeJob(), Probed, timeout, cancel)

    def prepare(self, config: RunConfig, cancel: threading.Event | None = None, idle: bool = False) -> Prepared:
        """Have the lane load the data `config` trains on now (untimed, before a study's first point), and with
        `idle` read its device's idle power; a Prepared with the reason when it could not."""
        reply = self.request(PrepareJob(config, idle), Prepared, cancel=cancel)
        if isinstance(reply, Prepared):
            return reply
        self.close(timeout=0.5)  # as calibrate: a lane left mid-job would answer a later request with this one
        return Prepared(math.nan, reply.reason)

    def calibrate(self, size: int = 2048, seconds: float = 1.0,
                  cancel: threading.Event | None = None) -> Calibrated:
        """The device's achievable GFLOP/s; a Calibrated with NaN and the reason when none came."""
        reply = self.request(CalibrateJob(size, seconds), Calibrated, cancel=cancel)
        if isinstance(reply, Calibrated):
            return reply
        # A lane left mid-job (cancelled, closed) would answer a later request with this job's
        # result: start the next job from a fresh process instead.
        self.close(timeout=0.5)
        return Calibrated(size, float("nan"), reply.reason)

    def _kill(self) -> None:
        channel = self._channel
        if channel is not None:
            channel.kill()
        self._drop_channel()

    def _drop_channel(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the process: politely if idle, by kill if it does not leave within `timeout`."""
        channel = self._channel
        if channel is None:
            return
        if self._run is not None:
            self.cancel()
        channel.send(CloseLane())
        if not channel.join(timeout):
            channel.kill()
        self._run = None
        self._drop_channel()
