"""The lane's child process: imports Keras on its backend once, then trains the jobs it is sent.

Nothing here runs in the parent. Jobs come in and answers go out as the typed messages of
core/messages.py: lane events travel in `Bundle`s, the rest answer the job they belong to.
"""
from __future__ import annotations

import gc
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from typing import Protocol

from .backends import configure_process, gpu_names, import_keras, keras_device, require_device, warm_framework
from ..machine import cpu_model
from ..config import CLASSES, INPUT_DIM, ConfigError, LaneSpec, RunConfig
from ..records import RunSettings
from .data import Dataset, load
from .anatomy import measure_anatomy
from .energy import LANE_ENERGY
from .run import EventSink, Flag, describe_error, json_safe, run_job
from .model import ModelShelf
from . import factory, saved
from ..messages import (ALIVE_PHASES, AnatomyJob, CalibrateJob, Calibrated, CloseLane, LaneAlive, LanePhase,
                        LaneStartFailed, LaneStatus, InspectJob, Inspected, PrepareJob, Prepared, ProbeJob, Probed, RunJob)
from .steering import Count, Jobs, Steering


def rss_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return float("nan")


HEARTBEAT_S = 2.0


class Heartbeat:
    """Says the lane is alive while it starts, and while a run prepares or finishes; silent while batches flow
    (their records speak then), so the app's watchdog catches a lane stuck in a step as well as a frozen one. It
    beats from the lane's first moment (once at once, then every HEARTBEAT_S), before the framework's import."""

    def __init__(self, events: EventSink, phase: LanePhase = LanePhase.IDLE) -> None:
        self.events = events
        self.phase = phase
        threading.Thread(target=self._beat, name="crossover-heartbeat", daemon=True).start()

    def _beat(self) -> None:
        while True:
            if self.phase in ALIVE_PHASES:
                self.events.put(LaneAlive(self.phase))
            time.sleep(HEARTBEAT_S)


def watch_parent() -> None:
    """Leave as soon as the app is gone, however it went (a SIGKILL too): a lane never outlives it."""
    parent = multiprocessing.parent_process()
    if parent is None:  # not a spawned child: the remote worker watches its SSH channel instead
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)  # nobody is left to report to

    threading.Thread(target=watch, name="crossover-parent-watch", daemon=True).start()


class LaneWorker:
    """State of one lane process: its backend, its cached data, its device."""

    def __init__(self, spec: LaneSpec, events: EventSink, cancel: Flag, steering: Steering,
                 heartbeat: Heartbeat | None = None) -> None:
        self.spec, self.events, self.cancel, self.steering = spec, events, cancel, steering
        # Importing a framework can take a while on a busy machine: the lane beats meanwhile.
        self.heartbeat = heartbeat or Heartbeat(events, LanePhase.PREPARING)
        self.heartbeat.phase = LanePhase.PREPARING
        self.settings = configure_process(spec)
        self.keras, backend_settings = import_keras(spec, self.settings["threads"])
        self.settings.update(backend_settings)
        self.settings.update(warm_framework(self.keras, spec))  # before the freeze: its runtime lives as long
        # What the import made lives as long as the lane: out of the collector's sight, a full collection after
        # each job walks only what that job made (0.01 s, not the 0.3 s a TensorFlow lane's whole heap took,
        # which the next lane's timed turn would share the cores with), and one during a step is as short.
        gc.freeze()
        self.settings["gc_frozen_objects"] = gc.get_freeze_count()  # recorded with every point, as any speed setting
        self.models = ModelShelf(self.keras)  # a model timed again skips its build and trace
        self.heartbeat.phase = LanePhase.IDLE
        events.put(LaneAlive(LanePhase.READY))  # up: from here on a job may take long without a heartbeat
        self._data_key: tuple | None = None
        self._data: Dataset | None = None

    def probe(self) -> Probed:
        try:
            names = gpu_names(self.spec.backend)
        except Exception as exc:  # a backend without GPU support raises here, not at import
            names, error = [], f"{type(exc).__name__}: {exc}"
        else:
            error = ""
        return Probed(self.spec.backend, tuple(names), cpu_model(), RunSettings.from_json(json_safe(self.settings)),
                      error)

    def prepare(self, job: PrepareJob) -> Prepared:
        """The data `job.config` trains on, loaded now and kept for its runs (self.data)."""
        t0 = time.perf_counter()
        try:
            self.data(job.config)
        except Exception as exc:  # the run that needs it says so again, in its own words
            return Prepared(time.perf_counter() - t0, describe_error(exc, self.spec.name))
        # The idle baseline, read now while no lane of the study trains (kept: the first segment takes it).
        idle = LANE_ENERGY.idle_w(self.spec) if job.idle else math.nan
        return Prepared(time.perf_counter() - t0, idle_w=idle)

    def data(self, config: RunConfig) -> Dataset:
        t = config.train
        stamp = None
        if t.data.endswith(".npz"):  # a file replaced at the same path must be read again
            try:
                st = os.stat(t.data)
                stamp = (st.st_mtime_ns, st.st_size)
            except OSError:
                stamp = None
        saved = config.model.figures  # a saved model's (or a factory's at this width) own shapes, else MNIST's
        if saved is None and config.model.factory is not None:  # never another shape's data
            raise ConfigError(f"{config.model.label()} was not inspected at its width: its data's shape is not known")
        problem = saved.data_problem(t.data) if saved is not None else ""
        if problem:
            raise ConfigError(problem)
        shape = (saved.features, saved.classes, saved.outputs) if saved is not None else (INPUT_DIM, CLASSES, 0)
        key = (t.data, t.samples, t.preprocessing, t.seed, stamp, shape)
        if key != self._data_key or self._data is None:
            self._data, self._data_key = load(t.data, t.samples, t.preprocessing, t.seed, *shape), key
        return self._data

    def run(self, job: RunJob) -> None:
        try:
            run_job(self, job)
        finally:
            self.keras.backend.clear_session()
            gc.collect()
            self.heartbeat.phase = LanePhase.IDLE
            self.events.put(LaneStatus(rss_mb()))

    def on_phase(self, phase: LanePhase) -> None:
        self.heartbeat.phase = phase


    def inspect(self, job: InspectJob) -> Inspected:
        """A user's saved model, loaded in safe mode and counted (core/lane/saved.py); a sentence if it cannot be."""
        try:
            if job.factory is not None:  # a user's function: this runs their code (core/lane/factory.py)
                return Inspected(factory.inspect(self.keras, job.factory, job.width))
            return Inspected(saved.inspect(self.keras, job.path, job.sha256, job.size_bytes))
        except ConfigError as exc:
            return Inspected(None, str(exc))
        except Exception as exc:  # a damaged file is a sentence, and the lane lives on
            traceback.print_exc()
            what = f"{job.factory.function}({job.width})" if job.factory is not None else "a Keras model"
            return Inspected(None, f"{os.path.basename(job.path)} could not be read as {what}: "
                                   f"{describe_error(exc, self.spec.name)}")
        finally:
            self.keras.backend.clear_session()
            gc.collect()

    def calibrate(self, size: int, seconds: float) -> Calibrated:
        """Achievable GFLOP/s: a size×size float32 matrix product, repeated for about `seconds`."""
        from .calibration import matmul_gflops

        try:
            with self.keras.device(keras_device(self.spec)):
                require_device(self.spec, self.settings["threads"])
                return Calibrated(size, matmul_gflops(self.keras, size, seconds))
        except Exception as exc:
            return Calibrated(size, math.nan, describe_error(exc, self.spec.name))


MAX_LOG_BYTES = 4 << 20  # a lane's log beyond this is moved aside (one older log kept) when a lane starts


def rotate_log(log_path: str, limit: int = MAX_LOG_BYTES) -> None:
    """Keep a lane's log from growing without bound: past `limit`, it becomes LOG.1 (replacing the one before)."""
    try:
        if os.stat(log_path).st_size > limit:
            os.replace(log_path, log_path + ".1")
    except OSError:
        pass  # no log yet, or another lane of the same name moved it first


def redirect_output(log_path: str | None) -> None:
    """Send the framework's chatter and tracebacks to the lane's log file, not the user's terminal."""
    if not log_path:
        return
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    rotate_log(log_path)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


class QueueSink(EventSink, Protocol):
    """A multiprocessing queue's end: its feeder thread must write what was put before the process ends."""

    def close(self) -> None: ...

    def join_thread(self) -> None: ...


def local_lane_main(spec: LaneSpec, jobs: Jobs, events: QueueSink, cancel: Flag, log_path: str | None = None,
                    attention: Count | None = None) -> None:
    """lane_main in a process of its own on this machine: once it returns, every answer put is written to the
    app and the process ends at once. Tearing its framework down saves nothing and costs time the user waits
    for (a TensorFlow lane's interpreter shutdown took about 1 s, a JAX lane's 0.5 s)."""
    lane_main(spec, jobs, events, cancel, log_path, attention)
    try:
        events.close()
        events.join_thread()  # the answers reach the pipe
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # the lane's log
            except (OSError, ValueError):
                pass
        os._exit(0)


def lane_main(spec: LaneSpec, jobs: Jobs, events: EventSink, cancel: Flag, log_path: str | None = None,
              attention: Count | None = None) -> None:
    """Entry point of the lane process (multiprocessing, spawn); `attention` counts the steering
    messages put on `jobs` (core/lane/steering.py)."""
    heartbeat = Heartbeat(events, LanePhase.PREPARING)  # alive from the first moment, before any import or log
    redirect_output(log_path)
    watch_parent()
    # Ctrl-C, a closed terminal and a TERM to the process group (what `timeout`, systemd and `kill -TERM -PGID`
    # send) reach every process of the group: the parent decides how to stop runs (cancel at the next batch
    # end, then write), so the lane must not die from them first. The parent closes a lane with CloseLane,
    # and kills it (SIGKILL) only when it does not go; a lane whose parent is gone ends itself (watch_parent).
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    steering = Steering(jobs, attention)
    try:
        worker = LaneWorker(spec, events, cancel, steering, heartbeat)
    except Exception as exc:
        heartbeat.phase = LanePhase.IDLE
        traceback.print_exc()
        events.put(LaneStartFailed(describe_error(exc, spec.name)))
        return
    while True:
        match steering.receive():
            case CloseLane():
                return
            case RunJob() as job:
                worker.run(job)
            case ProbeJob():
                events.put(worker.probe())
            case PrepareJob() as job:
                events.put(worker.prepare(job))
            case CalibrateJob(size=size, seconds=seconds):
                events.put(worker.calibrate(size, seconds))
            case AnatomyJob() as job:
                events.put(measure_anatomy(worker, job, describe_error))
            case InspectJob() as job:
                events.put(worker.inspect(job))
            case _:
                pass  # a new model or a next segment for a run that has already ended
