"""The window's status message: one line elided to the room it has, and an error that goes once it is put right.

QStatusBar.showMessage draws a long message under the permanent widgets on its right and keeps
an error up after the user has fixed its cause. This label sits in the status bar instead: it
cuts the text with "…" at whatever width the bar gives it (the whole sentence is its tooltip),
and an error can name what it is `about` ("model", "lanes") so that `settle(about)` clears it
the moment that thing is valid again, without clearing an unrelated error (a failed autosave).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from crossover_lab.gui.theme import status_style

STATUS_MS = 8000  # how long a message that is not an error stays


class StatusLine(QLabel):
    """say(text, error, about) shows a message; an error stays until the next message or settle(about)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusMessage")
        self.setTextFormat(Qt.TextFormat.PlainText)
        # The bar decides the width, never the text: a long sentence must not push the machine label out.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._message, self._error, self._about = "", False, ""
        self._expiry = QTimer(self)
        self._expiry.setSingleShot(True)
        self._expiry.timeout.connect(self.clear_message)

    def say(self, text: str, error: bool = False, about: str = "") -> None:
        """Show `text`: red and until replaced (or settled) when `error`, else for STATUS_MS."""
        self._message, self._error, self._about = " ".join(text.split()), error, about if error else ""
        self.setStyleSheet(status_style(error))
        self.setToolTip(self._message)
        self._elide()
        if error:
            self._expiry.stop()
        else:
            self._expiry.start(STATUS_MS)

    def settle(self, about: str) -> None:
        """What an error was `about` is valid now: the error goes (any other message stays)."""
        if self._error and about and self._about == about:
            self.clear_message()

    def clear_message(self) -> None:
        self.say("")
        self._expiry.stop()

    def message(self) -> str:
        """The whole message, as said (the label may show it cut short)."""
        return self._message

    def is_error(self) -> bool:
        return self._error

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = self.contentsRect().width()
        self.setText(self.fontMetrics().elidedText(self._message, Qt.TextElideMode.ElideRight, room))
