"""Stopping the command line on a signal without losing what was measured.

Ctrl-C (SIGINT), closing the terminal (SIGHUP) and `kill` (SIGTERM) all do the same: the work is
cancelled at the next batch end, everything measured is written, and the process exits with
128 + the signal's number (130, 129, 143). A second signal hurries the stop — lanes are closed at
once instead of finishing their batch — but never skips the writing. The handlers only set flags:
no KeyboardInterrupt can land in the middle of closing lanes or writing a file.
"""
from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any, Callable, TextIO, TypeVar
from .streams import STDERR

_Result = TypeVar("_Result")

STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                                 getattr(signal, "SIGHUP", None)) if s is not None)
NAMES = {signal.SIGINT: "Ctrl-C"} | {s: signal.Signals(s).name for s in STOP_SIGNALS if s != signal.SIGINT}


class StopSignals:
    """While active (a context manager), stop signals set `cancel`; `received` is the first signal's number.
    `measured`, where given, says whether anything was measured yet: a stop before then promises nothing."""

    def __init__(self, stream: TextIO = STDERR, measured: Callable[[], bool] | None = None) -> None:
        self.cancel = threading.Event()
        self.hurry = threading.Event()
        self.received: int | None = None
        self._stream = stream
        self._measured = measured
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        shield_resource_tracker()
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        # Once a stop signal came, the work is stopped, its files written and its lanes closed: the process is on
        # its way out with 128 + that signal's number. One more (an impatient second Ctrl-C, landing while the last
        # lines print or the interpreter shuts down) must not end it with another exit code, so stop signals are
        # ignored from here on: ignored, not handled, since the interpreter's shutdown puts Python handlers back
        # to the default, which a signal in its last milliseconds would meet.
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if self.received is None else signal.SIG_IGN)
        self._previous.clear()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        name = NAMES.get(signum, signum)
        nothing = self._measured is not None and not self._measured()
        if self.received is None:
            self.received = signum
            self._say(f"\nstopping ({name}): " + ("nothing was measured yet, so nothing will be written" if nothing
                                                  else "what was measured will be written…"))
            self.cancel.set()
        elif not self.hurry.is_set():
            self.hurry.set()
            self._say(f"\nstopping now ({name} again): closing the lanes"
                      + ("" if nothing else "; what was measured is still written…"))

    def _say(self, text: str) -> None:
        try:
            self._stream.write(text + "\n")
            self._stream.flush()
        except (OSError, ValueError):  # the terminal is gone (SIGHUP): nothing to tell
            pass

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal's number, or None when no signal came."""
        return None if self.received is None else 128 + self.received

    def run(self, work: Callable[[threading.Event], _Result], on_hurry: Callable[[], None] | None = None) -> _Result:
        """Run `work(cancel)` in a thread, waking here to let signals in, and return its result.

        `on_hurry` is called once (here, in the main thread) when a second signal asks to stop at once.
        """
        box: dict[str, Any] = {}
        finished = threading.Event()

        def target() -> None:
            try:
                box["result"] = work(self.cancel)
            except BaseException as exc:  # re-raised here, with its traceback
                box["error"] = exc
            finally:
                finished.set()

        threading.Thread(target=target, name="crossover-work", daemon=True).start()
        hurried = False
        while not finished.wait(0.1):
            if self.hurry.is_set() and not hurried:
                hurried = True
                if on_hurry is not None:
                    on_hurry()
        if "error" in box:
            raise box["error"]
        return box["result"]



def shield_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, deaf to SIGHUP.

    A closed terminal sends SIGHUP to the whole process group. The tracker ignores SIGINT and
    SIGTERM but not SIGHUP: it would die, and the one started in its place prints a traceback for
    every queue it never knew. An ignored signal stays ignored across exec, so it is started ignoring it.
    """
    if not hasattr(signal, "SIGHUP") or threading.current_thread() is not threading.main_thread():
        return
    from multiprocessing import resource_tracker

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, previous)
