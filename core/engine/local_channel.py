"""How a local lane's process is started and spoken to: a spawned child, a queue each way, a cancel flag.

core/engine/lanes.py decides what to say and when; this module only carries messages (core/messages.py)
to and from one process, and reports how that process ended.
"""
from __future__ import annotations

import multiprocessing as mp
import queue
from pathlib import Path
from typing import Any

from ..analysis.anatomy import AnatomyMeasured
from ..config import LaneSpec
from ..messages import Answer, Job, Steer

_ctx = mp.get_context("spawn")


def exit_reason(code: int | None) -> str:
    """How a lane process ended, as a sentence."""
    if code is not None and code < 0:
        if -code == 9:
            return "the lane process was killed (signal 9), most likely for running out of memory"
        return f"the lane process died from signal {-code}"
    return f"the lane process exited unexpectedly (exit code {code})"


class LocalChannel:
    """One lane process on this machine; starting it returns at once (it imports its backend meanwhile)."""

    def __init__(self, spec: LaneSpec, log_path: Path | None) -> None:
        from ..lane.worker import local_lane_main

        self._jobs: Any = _ctx.Queue()
        self._events: Any = _ctx.Queue()
        self._cancel: Any = _ctx.Event()
        self._attention: Any = _ctx.RawValue("q", 0)  # steering messages sent (core/lane/steering.py)
        self._proc = _ctx.Process(target=local_lane_main, name=f"crossover-lane-{spec.name}", daemon=True,
                                  args=(spec, self._jobs, self._events, self._cancel,
                                        str(log_path) if log_path else None, self._attention))
        self._proc.start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return self._proc.is_alive()

    def exit_reason(self) -> str:
        return exit_reason(self._proc.exitcode)

    def send(self, job: Job | Steer) -> bool:
        """Queue a job; False when the channel is already closed."""
        try:
            self._jobs.put(job)
            return True
        except (ValueError, OSError):
            return False

    def steer(self, message: Steer) -> bool:
        """A message for the run in progress, read between two of its steps."""
        if not self.send(message):
            return False
        self._attention.value += 1  # after the put: the lane reads the queue once it sees the count move
        return True

    def receive(self, timeout: float) -> Answer | AnatomyMeasured | None:
        """The next message, waiting up to `timeout`; None when none came. Raises EOFError once broken."""
        try:
            return self._events.get(timeout=timeout) if timeout > 0 else self._events.get_nowait()
        except queue.Empty:
            return None
        except (OSError, ValueError) as exc:  # the pipe broke with the process, or was closed here
            raise EOFError(str(exc)) from None

    def set_cancel(self, on: bool) -> None:
        if on:
            self._cancel.set()
        else:
            self._cancel.clear()

    def join(self, timeout: float) -> bool:
        """Wait for the process to leave; True when it has."""
        self._proc.join(timeout)
        return not self._proc.is_alive()

    def kill(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(2.0)

    def close(self) -> None:
        """Drop the queues (the process must be gone or going): no feeder thread may block the exit."""
        for q in (self._jobs, self._events):
            q.cancel_join_thread()
            q.close()
