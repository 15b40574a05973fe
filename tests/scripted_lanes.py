"""Scripted lanes: a channel that answers the lane protocol (core/messages.py) as a lane process would, with step
times from a script instead of a framework, so the app's logic is tested without starting a process.

A scripted lane runs in a thread of the test's process and says what core/lane/run.py and core/lane/timing.py
say, in the same order: RunStarted, SegmentStarted, BatchTiming (warm-up first), EpochEnded, TurnEnded and
TurnResumed around a Pause, SegmentEnded, RunFinished or RunFailed; it answers probes, data, calibration,
inspection and anatomy jobs; it hears Pause, Resume, SwitchModel, Proceed and Finish between steps and the
cancel flag after every step. Its step times are a cost model (a fixed cost per step plus FLOPs at a
throughput, times a seeded noise), so a test knows what the answer must be. Each step sleeps `pace` times its
scripted time: the records' `ms` is the script's (the lane's clock), `start_s` and `at` are the real clock, so
overlaps between lanes are real and a run of 200 steps of 5 ms takes about a second at pace 1.

A script can also fail the way a lane fails: a start that fails or never answers, a run that raises, a process
that dies or hangs at a given step, a stop that is not heard.

`ScriptedMachine` makes the channels for a LanePool: `LanePool(channels=machine.channel)`, or the fixture
`scripted` (gui_fixtures.py), which also gives the CLI's and the window's own pools scripted lanes.
"""
from __future__ import annotations

import itertools
import math
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from crossover_lab.core.analysis.anatomy import AnatomyMeasured, AnatomyPoint, RungTime, ladder_of
from crossover_lab.core.run_stats import summarize
from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.engine.local_channel import exit_reason
from crossover_lab.core.lane.arrivals import OpenLoop, arrival_times
from crossover_lab.core.messages import (AnatomyJob, Bundle, CalibrateJob, Calibrated, CloseLane,
                                         Finish, InspectJob, Inspected, LaneAlive, LanePhase, LaneStartFailed,
                                         LaneStatus, Pause, PrepareJob, Prepared, ProbeJob, Probed, Proceed, Resume,
                                         RunJob, SwitchModel)
from crossover_lab.core.records import (BatchTiming, EpochEnded, RunFailed, RunFinished, RunSettings, RunStarted, RunSummary,
                                        SegmentEnded, SegmentStarted, Status, TurnEnded, TurnResumed, now_iso)

FLUSH_S = 0.05  # records go out in bundles at least this often, as a lane's (core/lane/timing.py)
HEARTBEAT_S = 0.5  # a scripted lane waiting (for its turn, a Proceed) says it is alive this often
SYNTHETIC_SAMPLES = 60_000  # what a lane's synthetic MNIST stand-in holds when no sample limit is set


@dataclass(frozen=True)
class LaneScript:
    """How one scripted lane behaves: its cost model, its pace, and how it fails (if it does)."""

    fixed_ms: float = 1.0  # a step's fixed cost
    gflops: float = 50.0  # its throughput: ms = fixed_ms + FLOPs / (gflops × 1e6)
    noise: float = 0.0  # the log-normal SD of each step around the cost model
    warmup_factor: float = 20.0  # a warm-up step takes this many times a steady one (the first traces, compiles)
    pace: float = 0.0  # real seconds slept per scripted second (0: as fast as the test reads)
    min_sleep_s: float = 0.0005  # at least this per step, so a stop or a steer lands mid-run
    seed: int = 0
    gpus: tuple[str, ...] = ()  # what a probe of this lane's backend finds
    start_s: float = 0.0  # real seconds before the lane says it is ready
    start_fails: str = ""  # the lane could not set up its backend: this reason
    start_hangs: bool = False  # it never answers (a frozen import)
    fail_at_step: int | None = None  # the run raises at this step (the run's count): `fail_reason`
    fail_reason: str = "ValueError: scripted failure"
    die_at_step: int | None = None  # the process dies at this step, of signal `die_signal`
    die_signal: int = 11
    hang_at_step: int | None = None  # from this step on the lane sends nothing, and hears nothing but a kill
    inspect_hangs: bool = False  # an inspection never ends (a factory that never returns), its heartbeat beating on
    ignore_cancel: bool = False  # the cancel flag is never read (a stop must kill it)
    data_error: str = ""  # PrepareJob and every run: the data cannot be loaded
    rss_mb: float = 500.0  # what LaneStatus says after a job
    rss_growth_mb: float = 0.0  # and how much more after each job (a leaking framework)
    settings: dict = field(default_factory=dict)  # added to RunStarted's settings

    def step_ms(self, config: RunConfig) -> float:
        return self.fixed_ms + config.flops_per_batch / (self.gflops * 1e6)


def lane_of(spec: LaneSpec) -> str:
    return spec.name


class ScriptedMachine:
    """The scripted lanes of one test: a script per lane name (a default for the rest) and every channel made. A
    lane's script may be a list: its first process follows the first, the next process the next, the last on."""

    def __init__(self, scripts: dict[str, LaneScript | list[LaneScript]] | None = None,
                 default: LaneScript | None = None) -> None:
        self.scripts = dict(scripts or {})
        self.default = default or LaneScript()
        self.channels: list[ScriptedChannel] = []
        self.jobs: list[tuple[str, object]] = []  # (lane, job) in the order lanes received them
        self._pids = itertools.count(900_001)

    def script(self, name: str) -> LaneScript:
        got = self.scripts.get(name, self.default)
        if isinstance(got, list):
            return got[min(self.started(name), len(got) - 1)]
        return got

    def channel(self, spec: LaneSpec) -> ScriptedChannel:
        channel = ScriptedChannel(spec, self.script(spec.name), self, next(self._pids))
        self.channels.append(channel)
        return channel

    def started(self, name: str) -> int:
        """How many processes lane `name` started."""
        return sum(1 for c in self.channels if c.spec.name == name)

    def alive(self) -> list[ScriptedChannel]:
        return [c for c in self.channels if c.alive]

    def close(self) -> None:
        for channel in self.channels:
            channel.kill()


class _Killed(Exception):
    """The channel was killed: the lane's thread leaves without a word."""


class _Died(Exception):
    """The scripted process dies (a segfault, an out-of-memory kill)."""


class ScriptedChannel:
    """One scripted lane: the Channel protocol of core/engine/lanes.py over a thread and two queues."""

    def __init__(self, spec: LaneSpec, script: LaneScript, machine: ScriptedMachine, pid: int) -> None:
        self.spec, self.script, self.machine, self._pid = spec, script, machine, pid
        self._jobs: queue.Queue = queue.Queue()
        self._steers: queue.Queue = queue.Queue()
        self._events: queue.Queue = queue.Queue()
        self._cancel = threading.Event()
        self._killed = threading.Event()
        self._exit: int | None = None
        self._closed = False
        self._rss = script.rss_mb
        self._rng = np.random.default_rng(script.seed)
        self._data_ready = False
        self._thread = threading.Thread(target=self._main, name=f"scripted-lane-{spec.name}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the Channel protocol

    @property
    def pid(self) -> int | None:
        return self._pid

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._exit is None

    def exit_reason(self) -> str:
        return exit_reason(self._exit)

    def send(self, job) -> bool:
        if self._closed or not self.alive:
            return False
        self.machine.jobs.append((self.spec.name, job))
        self._jobs.put(job)
        return True

    def steer(self, message) -> bool:
        if self._closed or not self.alive:
            return False
        self.machine.jobs.append((self.spec.name, message))
        self._steers.put(message)
        return True

    def receive(self, timeout: float):
        if self._closed:
            raise EOFError("closed")
        try:
            return self._events.get(timeout=timeout) if timeout > 0 else self._events.get_nowait()
        except queue.Empty:
            if not self.alive and self._events.empty():
                raise EOFError("the scripted lane ended") from None
            return None

    def set_cancel(self, on: bool) -> None:
        (self._cancel.set if on else self._cancel.clear)()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def kill(self) -> None:
        if self._exit is None:
            self._exit = -9
        self._killed.set()
        self._thread.join(2.0)

    def close(self) -> None:
        self._closed = True

    # ------------------------------------------------------------------ the lane

    def _put(self, message) -> None:
        if self._killed.is_set():
            raise _Killed
        self._events.put(message)

    def _sleep(self, seconds: float) -> None:
        if self._killed.wait(seconds):
            raise _Killed

    def _main(self) -> None:
        s = self.script
        try:
            if s.start_hangs:
                self._killed.wait()
                raise _Killed
            self._sleep(s.start_s)
            if s.start_fails:
                self._put(LaneStartFailed(s.start_fails))
                self._exit = 1
                return
            self._put(LaneAlive(LanePhase.READY))
            while True:
                job = self._jobs.get()
                if self._killed.is_set():
                    raise _Killed
                if isinstance(job, CloseLane):
                    self._exit = 0
                    return
                self._put(self._answer(job))
                self._rss += s.rss_growth_mb
                self._put(LaneStatus(self._rss))
        except _Killed:
            return
        except _Died:
            self._exit = -s.die_signal

    def _answer(self, job):
        s, spec = self.script, self.spec
        match job:
            case ProbeJob():
                return Probed(spec.backend, s.gpus, "Scripted CPU",
                              RunSettings.from_json({"threads": spec.threads or 2, "scripted": True}))
            case PrepareJob():
                return Prepared(0.01, s.data_error)
            case CalibrateJob(size=size):
                return Calibrated(size, s.gflops)
            case InspectJob():
                while s.inspect_hangs:  # alive, beating, and never done
                    self._put(LaneAlive(LanePhase.PREPARING))
                    self._sleep(HEARTBEAT_S)
                return Inspected(None, "a scripted lane inspects no model")
            case AnatomyJob(config=config):
                return AnatomyMeasured(self._anatomy(config, job.rungs))
            case RunJob():
                return self._run(job)
        raise AssertionError(f"a scripted lane got {job!r}")

    def _anatomy(self, config: RunConfig, rungs: tuple[str, ...]) -> AnatomyPoint:
        """Each rung of the task's ladder a share of the scripted step, from the whole step (the top rung) down to
        the throughput part alone (the floor): the parts then telescope to the step, as a lane's do."""
        ladder = ladder_of(config.train.task)
        names = rungs or ladder.rungs
        s = self.script
        floor = config.flops_per_batch / (s.gflops * 1e6)
        step = s.step_ms(config)
        times = {}
        for i, name in enumerate(ladder.rungs):
            if name in names:
                ms = step - (step - floor) * i / (len(ladder.rungs) - 1)
                times[name] = RungTime(ms, ms * 0.95, ms * 1.05, 50)
        return AnatomyPoint(self.spec.name, self.spec.name, self.spec.backend, config.model.widths,
                            config.train.batch_size, config.flops_per_batch, times, window_steps=8,
                            settings=RunSettings.from_json({"scripted": True}), seconds=0.01,
                            task=config.train.task)

    # ------------------------------------------------------------------ a run, as core/lane/run.py carries it out

    def _samples(self, config: RunConfig) -> int:
        return config.train.samples or SYNTHETIC_SAMPLES

    def _budget(self, config: RunConfig) -> int:
        t = config.train
        if t.max_steps is not None:
            return t.max_steps
        return max(1, self._samples(config) // t.batch_size) * t.epochs

    def _run(self, job: RunJob):
        s, spec, config = self.script, self.spec, job.config
        lane = spec.name
        t0, t0_at = time.perf_counter(), time.time()
        if s.data_error:
            return Bundle((RunFailed(job.run_id, lane, s.data_error, None, now_iso()),))
        settings = {"backend": spec.backend, "threads": spec.threads or 2, "scripted": True, "paced": job.paced,
                    "pid": self._pid,
                    "task": config.train.task, "samples": self._samples(config), "data_source": "synthetic",
                    "warmup_steps": config.train.warmup_steps, **s.settings}
        self._put(Bundle((RunStarted(job.run_id, lane, lane, RunSettings.from_json(settings), now_iso()),)))
        segment, first_step, last = 1, 0, None
        steps_left = self._budget(config)
        budget = steps_left
        current: RunConfig | None = config
        try:
            while current is not None:
                steps, stopped_by, switch_to, last = self._segment(job, current, segment, first_step, budget, t0,
                                                                   t0_at)
                first_step += steps
                steps_left -= steps
                if stopped_by == "cancel":
                    break
                if stopped_by == "switch" and switch_to is not None:
                    current, budget = switch_to, max(steps_left, switch_to.train.warmup_steps + 60)
                elif not job.paced:
                    current = None
                else:
                    current = self._wait_next()
                    budget = self._budget(current) if current is not None else 0
                    if current is None and self._cancel.is_set() and not s.ignore_cancel:
                        last = replace(last, status=Status.CANCELLED) if last is not None else None
                segment += 1
        except _Failed as failed:
            reason = s.fail_reason
            summary = (RunSummary(**{**failed.partial.as_dict(), "status": Status.FAILED, "reason": reason})
                       if failed.partial is not None else None)
            return Bundle((RunFailed(job.run_id, lane, reason, summary, now_iso()),))
        status = Status.CANCELLED if last is not None and last.status == Status.CANCELLED else Status.COMPLETED
        final = (RunSummary(**{**last.as_dict(), "status": status, "wall_s": time.perf_counter() - t0})
                 if last is not None else RunSummary("", "", "", status))
        return Bundle((RunFinished(job.run_id, lane, final, now_iso()),))

    def _wait_next(self) -> RunConfig | None:
        """A paced run between segments: the next segment's config (Proceed, SwitchModel), or None (Finish, a stop)."""
        message = self._wait_for((Finish, Proceed, SwitchModel))
        return message.config if isinstance(message, (Proceed, SwitchModel)) else None

    def _segment(self, job: RunJob, config: RunConfig, segment: int, first_step: int, budget: int, t0: float,
                 t0_at: float) -> tuple[int, str, RunConfig | None, RunSummary]:
        s, lane, t = self.script, self.spec.name, config.train
        family = config.model.kind
        widths = config.model.widths
        self._put(Bundle((SegmentStarted(job.run_id, lane, segment, config.model.widths, t.batch_size,
                                         config.flops_per_batch, first_step, time.time(), t0_at),)))
        if t.arrival_rate is not None:
            return self._load_segment(job, config, segment, first_step, t0)
        per_epoch = max(1, self._samples(config) // t.batch_size)
        records: list[BatchTiming] = []
        pending: list = []
        stopped_by, switch_to, resumed, steady_s = "budget", None, False, 0.0
        started = flushed = time.perf_counter()
        base = s.step_ms(config)
        for i in range(budget):
            step = first_step + i + 1
            if s.hang_at_step is not None and step >= s.hang_at_step:
                self._flush(pending)
                self._killed.wait()
                raise _Killed
            if s.die_at_step is not None and step >= s.die_at_step:
                self._flush(pending)
                raise _Died
            if s.fail_at_step is not None and step >= s.fail_at_step:
                self._flush(pending)
                raise _Failed(summarize(records, run_id=job.run_id, lane=lane, device=lane, status=Status.FAILED,
                                        flops_per_batch=config.flops_per_batch,
                                        wall_s=time.perf_counter() - started) if records else None)
            warmup = i < t.warmup_steps
            ms = base * (s.warmup_factor if warmup and i == 0 else 1.0)
            if s.noise:
                ms *= math.exp(self._rng.normal(0.0, s.noise))
            begin = time.perf_counter()
            self._sleep(max(s.min_sleep_s, ms / 1000.0 * s.pace))
            epoch, batch = i // per_epoch + 1, i % per_epoch + 1
            record = BatchTiming(run_id=job.run_id, lane=lane, device=lane, epoch=epoch, batch=batch, step=step,
                                 start_s=begin - t0, ms=ms, samples=t.batch_size, warmup=warmup, loss=1.0 / (step + 1),
                                 backend=self.spec.backend, widths=widths, batch_size=t.batch_size, segment=segment,
                                 resumed=resumed, task=t.task, family=family)
            resumed = False
            records.append(record)
            pending.append(record)
            if not warmup:
                steady_s += ms / 1000.0
            if batch == per_epoch:
                pending.append(EpochEnded(job.run_id, lane, epoch, record.loss, 0.9))
            if len(pending) >= 64 or time.perf_counter() - flushed >= FLUSH_S:
                self._flush(pending)
                flushed = time.perf_counter()
            if i + 1 >= budget or (t.max_seconds is not None and steady_s >= t.max_seconds):
                break
            if self._cancel.is_set() and not s.ignore_cancel:
                stopped_by = "cancel"
                break
            message = self._steer_now()
            if isinstance(message, Pause):
                self._flush(pending + [TurnEnded(job.run_id, lane, segment, step, time.time())])
                pending.clear()
                message = self._wait_turn()
                if message is None:
                    stopped_by = "cancel"
                    break
                resumed = True
                pending.append(TurnResumed(job.run_id, lane, segment, time.time()))
            if isinstance(message, SwitchModel):
                stopped_by, switch_to = "switch", message.config
                break
        self._flush(pending)
        status = {"budget": Status.COMPLETED, "cancel": Status.CANCELLED, "switch": Status.SWITCHED}[stopped_by]
        summary = replace(summarize(records, run_id=job.run_id, lane=lane, device=lane, status=status,
                                    flops_per_batch=config.flops_per_batch, wall_s=time.perf_counter() - started,
                                    final_loss=records[-1].loss if records else math.nan),
                          others_cpu=0.0, load_avg=0.0)
        self._put(Bundle((SegmentEnded(job.run_id, lane, segment, summary, time.time()),)))
        return len(records), stopped_by, switch_to, summary

    def _load_segment(self, job: RunJob, config: RunConfig, segment: int, first_step: int,
                      t0: float) -> tuple[int, str, RunConfig | None, RunSummary]:
        """Predict at an arrival rate (core/lane/arrivals.py's OpenLoop, as the real lane drives it) on a virtual clock
        that each call advances by its cost: a call of k requests costs fixed_ms + k × a request's FLOPs at
        `gflops`. Warm-up calls first, one after another; then the schedule."""
        s, lane, t = self.script, self.spec.name, config.train
        widths, family = config.model.widths, config.model.kind
        now = [time.perf_counter() - t0]  # the virtual clock, in the records' seconds since the run's start
        records: list[BatchTiming] = []

        def cost(k: int) -> float:
            ms = s.fixed_ms + k * config.flops_per_batch / (s.gflops * 1e6)
            return ms * math.exp(self._rng.normal(0.0, s.noise)) if s.noise else ms

        def record(i: int, ms: float, warmup: bool, **load) -> None:
            records.append(BatchTiming(run_id=job.run_id, lane=lane, device=lane, epoch=1, batch=i + 1,
                                       step=first_step + i + 1, start_s=now[0], ms=ms,
                                       samples=max(1, load.get("requests", 1)) * t.batch_size, warmup=warmup,
                                       loss=0.5, backend=self.spec.backend, widths=widths, batch_size=t.batch_size,
                                       segment=segment, task=t.task, family=family, **load))
            now[0] += ms / 1000.0
            time.sleep(s.min_sleep_s)

        for i in range(t.warmup_steps):
            record(i, cost(1) * (s.warmup_factor if i == 0 else 1.0), True)

        def advance(dt: float) -> None:
            now[0] += dt

        loop = OpenLoop(arrival_times(t.arrival_rate or 1.0, t.rate_requests, t.arrivals, t.seed),
                        max_batch=t.max_batch, clock=lambda: now[0], sleep=advance,
                        stop=lambda: self._cancel.is_set() and not s.ignore_cancel)
        i = t.warmup_steps
        while (take := loop.take()) is not None:
            if s.die_at_step is not None and i >= s.die_at_step:  # killed mid-schedule (out of memory, say)
                self._flush(list(records))
                raise _Died
            k = len(take.arrivals)
            record(i, cost(k), False, requests=k, queued=take.queued, backlog=take.backlog,
                   waits_ms=tuple(max(0.0, (now[0] - a) * 1000.0) for a in take.arrivals))
            loop.answered(now[0])
            i += 1
        self._flush(list(records))
        status = Status.CANCELLED if loop.ended == "stopped" else Status.COMPLETED
        summary = replace(summarize(records, run_id=job.run_id, lane=lane, device=lane, status=status,
                                    flops_per_batch=config.flops_per_batch, wall_s=now[0]),
                          others_cpu=0.0, load_avg=0.0, arrivals_ended=loop.ended)
        self._put(Bundle((SegmentEnded(job.run_id, lane, segment, summary, time.time()),)))
        return len(records), "cancel" if loop.ended == "stopped" else "budget", None, summary

    def _flush(self, pending: list) -> None:
        if pending:
            self._put(Bundle(tuple(pending)))
            pending.clear()

    def _steer_now(self):
        try:
            return self._steers.get_nowait()
        except queue.Empty:
            return None

    def _wait_turn(self):
        """Paused mid-segment: Resume or SwitchModel, or None on a stop."""
        return self._wait_for((Resume, SwitchModel))

    def _wait_for(self, kinds: tuple[type, ...]):
        """The next steering message of `kinds` (others are dropped, as a lane that waits ignores them), saying the
        lane is alive meanwhile; None on a stop."""
        beat = time.monotonic()
        while not (self._cancel.is_set() and not self.script.ignore_cancel):
            try:
                message = self._steers.get(timeout=0.01)
            except queue.Empty:
                if self._killed.is_set():
                    raise _Killed from None
                if time.monotonic() - beat > HEARTBEAT_S:
                    self._put(LaneAlive(LanePhase.WAITING))
                    beat = time.monotonic()
                continue
            if isinstance(message, kinds):
                return message
        return None


class _Failed(Exception):
    def __init__(self, partial: RunSummary | None) -> None:
        super().__init__("scripted failure")
        self.partial = partial


def cost_lanes(**scripts: LaneScript) -> ScriptedMachine:
    """A machine whose lanes are named by keyword (`cpu=LaneScript(...)`, `gpu0=…`)."""
    return ScriptedMachine({name: script for name, script in scripts.items()})


def gpu_like(fixed_ms: float = 2.0, gflops: float = 5000.0, **kw) -> LaneScript:
    """A lane with a GPU's shape: a large fixed cost per step, a high throughput."""
    return LaneScript(fixed_ms=fixed_ms, gflops=gflops, gpus=("Scripted GPU",), **kw)


def cpu_like(fixed_ms: float = 0.3, gflops: float = 50.0, **kw) -> LaneScript:
    """A lane with a CPU's shape: a small fixed cost per step, a low throughput."""
    return LaneScript(fixed_ms=fixed_ms, gflops=gflops, **kw)


def crossing_width(cpu: LaneScript, gpu: LaneScript, flops_of: Callable[[int], float]) -> float:
    """The width at which the two cost models give the same step time (bisection on a log scale)."""
    lo, hi = 1.0, 65536.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        f = flops_of(int(round(mid)))
        a = cpu.fixed_ms + f / (cpu.gflops * 1e6)
        b = gpu.fixed_ms + f / (gpu.gflops * 1e6)
        lo, hi = (mid, hi) if a < b else (lo, mid)
    return math.sqrt(lo * hi)
