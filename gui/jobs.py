"""One background job at a time: a QThread, a cancel flag, a queue drained by a timer, and a typed outcome.

A job is a plain function `work(cancel, put)` that blocks its thread (a run, a sweep, a device
probe). What it `put`s arrives on the GUI thread in batches, from a timer, through `drained`;
when it returns, `job_ended` carries a JobOutcome. A thread that will not stop when the window
closes is kept (Qt aborts the process if a running QThread is dropped) and reported by `threads()`.
"""
from __future__ import annotations

import queue
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from ..core.config import ConfigError

Result = TypeVar("Result")
# work(cancel, put) -> its result; `put` takes anything (each job's work says what it puts).
Work = Callable[[threading.Event, Callable[[object], None]], Any]


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended: its return value, or the sentence saying why it could not be carried out."""

    result: Any = None
    error: str = ""
    cancelled: bool = False


class _Worker(QObject):
    """Lives in the job's thread; runs the work once and quits the thread."""

    def __init__(self, work: Work, cancel: threading.Event, put: Callable[[object], None]) -> None:
        super().__init__()
        self._work, self._cancel, self._put = work, cancel, put
        self.outcome: JobOutcome | None = None  # read by the GUI thread once the thread has ended

    @Slot()
    def run(self) -> None:
        try:
            result = self._work(self._cancel, self._put)
            self.outcome = JobOutcome(result, cancelled=self._cancel.is_set())
        except ConfigError as exc:
            self.outcome = JobOutcome(error=str(exc), cancelled=self._cancel.is_set())
        except Exception as exc:  # a message for the user; the traceback for a bug report
            traceback.print_exc()
            self.outcome = JobOutcome(error=f"internal error: {type(exc).__name__}: {exc}",
                                      cancelled=self._cancel.is_set())
        finally:
            QThread.currentThread().quit()


class JobRunner(QObject):
    """Runs one job at a time off the GUI thread; see the module docstring."""

    drained = Signal(list)  # what the job put since the last drain, in order (on the GUI thread)
    job_ended = Signal(JobOutcome)  # the job returned, and its thread has ended

    def __init__(self, name: str, drain_ms: int = 40, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._name = name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._timer = QTimer(self)
        self._timer.setInterval(drain_ms)
        self._timer.timeout.connect(self.drain)
        self._job: tuple[QThread, _Worker] | None = None
        self._cancel = threading.Event()
        self._stuck: list[tuple[QThread, _Worker]] = []

    @property
    def running(self) -> bool:
        return self._job is not None

    @property
    def cancelled(self) -> bool:
        return self.running and self._cancel.is_set()

    def start(self, work: Work, cancel: threading.Event | None = None) -> None:
        """Run `work(cancel, put)`; `cancel` is the flag `cancel()` sets (a new one unless given)."""
        if self._job is not None:
            raise RuntimeError(f"{self._name}: a job is already running")
        self._cancel = cancel or threading.Event()
        thread = QThread()
        thread.setObjectName(f"crossover-{self._name}")
        worker = _Worker(work, self._cancel, self._queue.put)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        thread.finished.connect(self._on_thread_finished)
        self._job = (thread, worker)
        thread.start()
        self._timer.start()

    def start_quiet(self, work: Callable[[threading.Event], Result], cancel: threading.Event | None = None) -> None:
        """Run `work(cancel)`, a job that puts nothing on the way (a probe, a model file's inspection): its result
        comes with job_ended."""
        self.start(lambda flag, _put: work(flag), cancel)

    def cancel(self) -> None:
        self._cancel.set()

    @Slot()
    def drain(self) -> None:
        items = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if items:
            self.drained.emit(items)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._end()

    def _end(self) -> JobOutcome | None:
        if self._job is None:
            return None
        thread, worker = self._job
        thread.wait()
        self._job = None  # Python owns thread and worker (no parent): this deletes them
        self._timer.stop()
        self.drain()
        outcome = worker.outcome or JobOutcome(error="the job ended without a result", cancelled=True)
        self.job_ended.emit(outcome)
        return outcome

    def shutdown(self, wait_ms: int) -> JobOutcome | None:
        """Cancel and wait up to `wait_ms` (the window is closing). Returns the outcome if the job ended;
        a thread still running is kept and waited for again by `wait_stuck()`."""
        if self._job is None:
            return None
        self.cancel()
        thread = self._job[0]
        if thread.wait(wait_ms):
            return self._end()  # no event loop will deliver `finished` any more
        self._stuck.append(self._job)
        self._job = None
        self._timer.stop()
        self.drain()
        return None

    def wait_stuck(self, wait_ms: int) -> None:
        for thread, _worker in self._stuck:
            thread.wait(wait_ms)

    def threads(self) -> list[QThread]:
        """The job threads alive now (for tests and for the close)."""
        pairs = ([self._job] if self._job else []) + self._stuck
        return [thread for thread, _ in pairs if thread.isRunning()]
