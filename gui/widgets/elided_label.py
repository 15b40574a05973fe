"""A one-line label that cuts its text with … to the width it is given, and says the whole of it in its tooltip.

A QLabel is at least as wide as its text, so one long line (a message, a remote host's name) sets
the width of everything around it, or runs under its neighbours.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """set_whole(text) shows `text` on one line, cut with … where it does not fit; whole() returns it."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        # The layout decides the width, never the text.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._whole = ""
        self.set_whole(text)

    def set_whole(self, text: str) -> None:
        self._whole = " ".join(text.split())
        self.setToolTip(self._whole)
        self._elide()

    def whole(self) -> str:
        return self._whole

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = self.contentsRect().width()
        self.setText(self.fontMetrics().elidedText(self._whole, Qt.TextElideMode.ElideRight, room))
