"""A dialog that runs one of Crossover's commands (the profile and calibrate dialogs of gui/window/): the runner
(gui/widgets/command_process.py) wired to the dialog's own line, end and not-started handlers, a close while it
measures that stops it and closes once it has ended, and a stop and wait when the window quits."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog, QPushButton, QWidget

from .command_process import CommandFn, CommandProcess


class CommandDialog(QDialog):
    """A subclass gives `_read_line(line)`, `_on_ended(code)` (calling `_ended(code)` first), `_on_not_started(program)`,
    `halt()` and a `stop` button."""

    stop: QPushButton

    def __init__(self, command: CommandFn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._command = command  # read at each start: a test may stand another command in
        self.runner = CommandProcess(lambda args: self._command(args), self)
        self.runner.line.connect(self._read_line)
        self.runner.ended.connect(self._on_ended)
        self.runner.not_started.connect(self._on_not_started)
        self.exit_code: int | None = None
        self._close_when_done = False

    @property
    def running(self) -> bool:
        return self.runner.running

    def _read_line(self, line: str) -> None:
        raise NotImplementedError

    def _on_ended(self, code: int) -> None:
        raise NotImplementedError

    def _on_not_started(self, program: str) -> None:
        raise NotImplementedError

    def halt(self) -> None:
        raise NotImplementedError

    def _ended(self, code: int) -> None:
        """The command ended with `code`: kept, and the dialog closes now if a close waited for it."""
        if self._close_when_done:
            self._close_when_done = False
            QTimer.singleShot(0, self.close)
        self.exit_code = code

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        """Closing while it measures stops it (what was measured is kept); the dialog closes once it has ended,
        and the window stays live meanwhile."""
        if self.runner.running:
            if self.stop.isEnabled():
                self.halt()
            self._close_when_done = True
            event.ignore()
            return
        super().closeEvent(event)

    def shutdown(self, wait_ms: int = 3000) -> None:
        """The window is quitting: stop the command and wait for it a moment (a second stop if it has not ended),
        so that what it measured is kept and no lane is left running."""
        self.runner.shutdown(wait_ms)
