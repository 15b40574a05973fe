"""Lanes: one worker process per device profile; jobs in, events out, cancel, crash and leak recovery.

The parent never imports a deep-learning framework: a lane's process does, once, and trains
the jobs it is sent. Whatever happens there (an exception, out of memory, a segfault, a kill)
reaches the parent as a RunFailed with a reason, and the next job gets a fresh process.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import time
from typing import Any

from crossover_lab.core.analysis import summarize
from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.records import BatchTiming, LaneEvent, RunFailed, RunFinished, RunStarted

CANCEL_GRACE_S = 1.0  # after this, a lane that has not stopped is killed
# Recycle the process once it has grown this much past its size after the first run:
# TensorFlow never frees a trained model's variables and optimizer slots.
MEMORY_LIMIT_MB = 2000.0
START_TIMEOUT_S = 120.0

_ctx = mp.get_context("spawn")


def log_dir() -> str:
    """Where lanes write their framework logs and tracebacks ($CROSSOVER_HOME/logs)."""
    return os.path.join(crossover_home(), "logs")


def crossover_home() -> str:
    """The app's own folder for logs and autosaves: $CROSSOVER_HOME, else ~/.local/share/crossover."""
    return os.environ.get("CROSSOVER_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share"), "crossover")


def lane_log_path(name: str) -> str:
    return os.path.join(log_dir(), f"lane-{name.replace(':', '-')}.log")


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        signal = -code
        if signal == 9:
            return "the lane process was killed (signal 9), most likely for running out of memory"
        return f"the lane process died from signal {signal}"
    return f"the lane process exited unexpectedly (exit code {code})"


class Lane:
    """A device profile's worker process. Use from one thread; `cancel()` may come from any."""

    def __init__(self, spec: LaneSpec, *, cancel_grace_s: float = CANCEL_GRACE_S,
                 memory_limit_mb: float = MEMORY_LIMIT_MB) -> None:
        self.spec = spec
        self.cancel_grace_s = cancel_grace_s
        self.memory_limit_mb = memory_limit_mb
        self._proc: Any = None
        self._jobs: Any = None
        self._events: Any = None
        self._cancel: Any = None
        self._job: dict[str, Any] | None = None
        self._records: list[BatchTiming] = []
        self._device = ""
        self._cancel_at: float | None = None
        self._recycle = False
        self._baseline_mb: float | None = None  # the process's size after its first run
        self._internal: list[dict[str, Any]] = []  # answers to probe/calibrate, read by request()
        self._lock = threading.Lock()
        self.processes_started = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the process if none runs (returns at once; it imports its backend in the background)."""
        if self.alive:
            return
        from crossover_lab.core.lane_worker import lane_main  # keeps the worker's imports out of the parent's start-up

        self._jobs, self._events, self._cancel = _ctx.Queue(), _ctx.Queue(), _ctx.Event()
        self._internal.clear()  # a previous process's answers must not answer this one's requests
        self._proc = _ctx.Process(target=lane_main,
                                  args=(self.spec, self._jobs, self._events, self._cancel, lane_log_path(self.name)),
                                  name=f"crossover-lane-{self.name}", daemon=True)
        self._proc.start()
        self._baseline_mb = None
        self.processes_started += 1

    def submit(self, run_id: str, config: RunConfig) -> None:
        if self.busy:
            raise RuntimeError(f"lane {self.name} is already running {self._job['run_id']}")
        if self._recycle:
            self.close()
            self._recycle = False
        self.start()
        self._cancel.clear()
        self._cancel_at = None
        self._records, self._device = [], self.spec.name
        self._job = {"run_id": run_id, "config": config, "submitted": time.monotonic()}
        self._jobs.put({"kind": "run", "run_id": run_id, "config": config.to_dict()})

    def cancel(self) -> None:
        """Ask the run to stop at its next batch end; poll() kills the process after the grace period."""
        with self._lock:
            if self._job is not None and self._cancel_at is None:
                self._cancel_at = time.monotonic()
                self._cancel.set()

    def poll(self, timeout: float = 0.05) -> list[LaneEvent]:
        """Events that arrived (waits up to `timeout` for the first); detects crashes and stuck cancels."""
        out: list[LaneEvent] = []
        events = self._events  # close() from another thread may drop it meanwhile
        if events is None:
            return out
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = events.get(timeout=max(0.0, deadline - time.monotonic()) if not out else 0)
            except queue.Empty:
                break
            except (EOFError, OSError):  # the queue's pipe broke with the process
                break
            out.extend(self._consume(item))
        if self._job is not None:
            out.extend(self._check_health())
        return out

    def _consume(self, item: Any) -> list[LaneEvent]:
        if isinstance(item, dict):
            kind = item.get("kind")
            if kind == "status":
                rss = item.get("rss_mb", 0.0)
                if self._baseline_mb is None:
                    self._baseline_mb = rss
                elif rss - self._baseline_mb > self.memory_limit_mb:
                    self._recycle = True
            elif kind == "start_failed" and self._job is not None:
                return [self._end_by_parent(self._job, "failed", f"the lane could not start: {item['reason']}")]
            if kind in ("probe", "calibration", "start_failed"):  # answers that request() waits for
                self._internal.append(item)
            return []
        events: list[LaneEvent] = []
        for event in item:
            if isinstance(event, BatchTiming):
                self._records.append(event)
            elif isinstance(event, RunStarted):
                self._device = event.device
            elif isinstance(event, (RunFinished, RunFailed)):
                self._job = None
                self._cancel_at = None
            events.append(event)
        return events

    def _check_health(self) -> list[LaneEvent]:
        job, proc, cancel_at = self._job, self._proc, self._cancel_at  # close() may clear them meanwhile
        if job is None:
            return []
        if proc is not None and not proc.is_alive():
            return [self._end_by_parent(job, "failed", _exit_reason(proc.exitcode))]
        if cancel_at is not None and time.monotonic() - cancel_at > self.cancel_grace_s:
            reason = f"stopped by killing the lane: it did not stop within {self.cancel_grace_s:.1f} s"
            return [self._end_by_parent(job, "cancelled", reason)]
        return []

    def _end_by_parent(self, job: dict[str, Any], status: str, reason: str) -> LaneEvent:
        """End the run from this side (the process died, or was too slow to stop): kill the process
        and summarise the records that arrived."""
        config: RunConfig = job["config"]
        summary = summarize(self._records, run_id=job["run_id"], lane=self.name, device=self._device,
                            status=status, reason=reason, flops_per_batch=config.flops_per_batch,
                            batch_size=config.train.batch_size, wall_s=time.monotonic() - job["submitted"])
        if status == "failed":
            event: LaneEvent = RunFailed(job["run_id"], self.name, reason, summary)
        else:
            event = RunFinished(job["run_id"], self.name, summary)
        self._job = None
        self._kill()
        return event

    def request(self, job: dict[str, Any], kind: str, timeout: float = START_TIMEOUT_S,
                cancel: threading.Event | None = None) -> dict[str, Any]:
        """Send an internal job (probe, calibrate) to an idle lane and wait for its answer.

        Returns {"kind": "start_failed", "reason": …} when the lane dies, is closed by another
        thread, does not answer within `timeout`, or `cancel` is set.
        """
        if self.busy:
            raise RuntimeError(f"lane {self.name} is busy")
        self.start()
        proc, jobs = self._proc, self._jobs
        jobs.put(job)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                return {"kind": "start_failed", "reason": "cancelled"}
            self.poll(0.1)
            for item in list(self._internal):
                if item.get("kind") in (kind, "start_failed"):
                    self._internal.remove(item)
                    return item
            if self._proc is not proc:
                return {"kind": "start_failed", "reason": "the lane was closed"}
            if not proc.is_alive():
                return {"kind": "start_failed", "reason": _exit_reason(proc.exitcode)}
        return {"kind": "start_failed", "reason": f"no answer within {timeout:.0f} s"}

    def probe(self, timeout: float = START_TIMEOUT_S, cancel: threading.Event | None = None) -> dict[str, Any]:
        return self.request({"kind": "probe"}, "probe", timeout, cancel)

    def calibrate(self, size: int = 2048, seconds: float = 1.0,
                  cancel: threading.Event | None = None) -> dict[str, Any]:
        answer = self.request({"kind": "calibrate", "size": size, "seconds": seconds}, "calibration",
                              cancel=cancel)
        if answer.get("kind") != "calibration":
            # A lane left mid-job (cancelled, closed) would answer a later request with this job's
            # result: start the next job from a fresh process instead.
            self.close(timeout=0.5)
        return answer

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.is_alive():
            proc.kill()
            proc.join(2.0)
        self._drop_queues()

    def _drop_queues(self) -> None:
        for q in (self._jobs, self._events):
            if q is not None:
                q.cancel_join_thread()
                q.close()
        self._jobs = self._events = None

    def close(self, timeout: float = 2.0) -> None:
        """Stop the process: politely if idle, by kill if it does not leave within `timeout`."""
        proc = self._proc
        if proc is None:
            return
        if self._job is not None:
            self.cancel()
        try:
            self._jobs.put(None)
        except (ValueError, OSError):
            pass
        proc.join(timeout)
        if proc.is_alive():
            proc.kill()
            proc.join(2.0)
        self._proc = None
        self._job = None
        self._drop_queues()
