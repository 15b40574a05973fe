"""How a lane hears, between two steps, that the app wants something changed (a new model, the next segment).

The app puts the message on the lane's job queue and counts it on a shared counter. The lane
reads the counter after every step (a plain memory read, not a lock or a system call: the
per-step cost of listening stays below a microsecond) and reads the queue only when it moved.
"""
from __future__ import annotations

import collections
import queue
from typing import Protocol, Union

from ..messages import Finish, Job, Pause, Proceed, Resume, Steer, SwitchModel

STEERS = (SwitchModel, Proceed, Finish, Pause, Resume)
Message = Union[Job, Steer]  # what comes down a lane's job queue


class Jobs(Protocol):
    """The lane's job queue: a multiprocessing queue (a local lane) or a queue.Queue (a remote lane's worker)."""

    def get(self, block: bool = True, timeout: float | None = None) -> Message: ...

    def get_nowait(self) -> Message: ...


class Count(Protocol):
    """Steering messages sent: a shared RawValue (a local lane) or a Counter."""

    value: int


class Counter:
    """A counter for lanes in this process (a remote lane's worker); local lanes use a shared RawValue."""

    def __init__(self) -> None:
        self.value = 0


class Steering:
    """The lane's side: `asked()` after each step, `receive()` to take the next message."""

    def __init__(self, jobs: Jobs, attention: Count | None) -> None:
        self._jobs = jobs
        self._attention: Count = attention if attention is not None else Counter()
        self._seen = 0
        self._held: collections.deque[Message] = collections.deque()  # jobs that came while a run was listening

    def asked(self) -> bool:
        """Whether a steering message has been sent that this lane has not read yet."""
        return self._attention.value > self._seen

    def receive(self, timeout: float | None = None) -> Message | None:
        """The next message (a held job first); None when none came within `timeout` (0: don't wait)."""
        if self._held:
            return self._held.popleft()
        return self._take(timeout)

    def steer(self, timeout: float | None = None) -> Steer | None:
        """The next steering message, keeping any other job (CloseLane) for the lane's loop to take."""
        while True:
            message = self._take(timeout)
            if message is None or isinstance(message, STEERS):
                return message
            self._held.append(message)

    def _take(self, timeout: float | None) -> Message | None:
        try:
            if timeout is not None and timeout <= 0:
                message = self._jobs.get_nowait()
            else:
                message = self._jobs.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(message, STEERS):
            self._seen += 1
        return message
