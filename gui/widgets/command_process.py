"""One of Crossover's own commands (`main.py profile …`, `main.py calibrate …`) run from the window as a process of its
own: the window's process never imports a framework, and the command already says its progress, keeps what it
measured when stopped and writes its file. Its lines arrive one by one; Stop is Ctrl-C (the point being measured
ends, what was measured is kept), sent again after a while as a second Ctrl-C if the command has not ended.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Sequence

from PySide6.QtCore import QObject, QProcess, QTimer, Signal, Slot

from ...core.paths import PACKAGE_DIR

HURRY_AFTER_MS = 10_000  # a stop not heard within this long is sent again (as a second Ctrl-C: hurry)
EXIT_STOPPED = 130

CommandFn = Callable[[Sequence[str]], list[str]]


def crossover_command(args: Sequence[str]) -> list[str]:
    """This Python running Crossover's command line with `args`."""
    return [sys.executable, str(PACKAGE_DIR / "main.py"), *args]


class CommandProcess(QObject):
    """Runs a command, says each line it prints (`line`), and its exit code once it has ended (`ended`: -1 for a
    crash); `not_started` when it could not be run at all."""

    line = Signal(str)
    ended = Signal(int)
    not_started = Signal(str)  # the program that could not be run

    def __init__(self, command: CommandFn = crossover_command, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._command = command
        self._process: QProcess | None = None
        self._pending = ""
        self._hurry = QTimer(self)
        self._hurry.setSingleShot(True)
        self._hurry.timeout.connect(lambda: self._signal(signal.SIGINT))  # a second Ctrl-C: stop now, keeping

    @property
    def running(self) -> bool:
        return self._process is not None

    def start(self, args: Sequence[str]) -> None:
        if self._process is not None:
            return
        program, *rest = self._command(args)
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._on_ready_read)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(lambda error: self._on_error(error, program))
        self._process, self._pending = process, ""
        process.start(program, rest)

    def halt(self) -> None:
        """Ask the command to stop as Ctrl-C does; again after HURRY_AFTER_MS if it has not ended."""
        if self._process is None:
            return
        self._signal(signal.SIGINT)
        self._hurry.start(HURRY_AFTER_MS)

    def shutdown(self, wait_ms: int = 3000) -> None:
        """The window is quitting: stop the command and wait for it a moment (a second stop if it has not ended),
        so that what it measured is kept and no lane is left running."""
        process = self._process
        if process is None:
            return
        self.halt()
        if not process.waitForFinished(wait_ms):
            self._signal(signal.SIGINT)
            process.waitForFinished(wait_ms)

    def _signal(self, which: signal.Signals) -> None:
        pid = self._process.processId() if self._process is not None else 0
        if pid:
            try:
                os.kill(pid, which)
            except OSError:
                pass

    @Slot()
    def _on_ready_read(self) -> None:
        if self._process is None:
            return
        text = self._pending + bytes(self._process.readAllStandardOutput().data()).decode("utf-8", "replace")
        *lines, self._pending = text.replace("\r", "\n").split("\n")
        for line in lines:
            if line.rstrip():
                self.line.emit(line.rstrip())

    @Slot(int, QProcess.ExitStatus)
    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self._on_ready_read()
        if self._pending.rstrip():
            self.line.emit(self._pending.rstrip())
        self._pending = ""
        self._hurry.stop()
        self._process = None
        self.ended.emit(code if status == QProcess.ExitStatus.NormalExit else -1)

    def _on_error(self, error: QProcess.ProcessError, program: str) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._process = None
            self.not_started.emit(program)
