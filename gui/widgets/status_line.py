"""The window's status message: one line cut to the room it has, and an error that goes once it is put right.

QStatusBar.showMessage draws a long message under the permanent widgets on its right and keeps
an error up after the user has fixed its cause. This label sits in the status bar instead: it
cuts the text with "…" at whatever width the bar gives it (the whole sentence is its tooltip),
and an error can name what it is `about` ("model", "lanes") so that `settle(about)` clears it
the moment that thing is valid again, without clearing an unrelated error (a failed autosave).
"""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from .elided_label import ElidedLabel
from ..theme.scheme import status_style

STATUS_MS = 8000  # how long a message that is not an error stays


class StatusLine(ElidedLabel):
    """say(text, error, about) shows a message; an error stays until the next message or settle(about)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setObjectName("statusMessage")
        self._error, self._about = False, ""
        self._expiry = QTimer(self)
        self._expiry.setSingleShot(True)
        self._expiry.timeout.connect(self.clear_message)

    def say(self, text: str, error: bool = False, about: str = "") -> None:
        """Show `text`: red and until replaced (or settled) when `error`, else for STATUS_MS."""
        self._error, self._about = error, about if error else ""
        self.setStyleSheet(status_style(error))
        self.set_whole(text)
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
        return self.whole()

    def is_error(self) -> bool:
        return self._error
