"""The Compare tab's headline: the answer in one sentence a room reads, one short line of how sure below it, and the
whole sentence (the statistics, what they rest on, the rule's calibration) on hover and in the report."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ...core.words.headline import headline


class Headline(QWidget):
    """`set_said(whole)` shows the sentence without its parentheses large, and "How sure: …" small below it;
    `said()` is the whole sentence, as the map, the Sweep tab and the report say it."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown = QLabel()
        self.shown.setObjectName("verdictLabel")
        self.shown.setWordWrap(True)
        self.shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sure = QLabel()
        self.sure.setObjectName("hintLabel")
        self.sure.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.shown)
        layout.addWidget(self.sure)
        self._said = ""
        self.set_said(text)

    def set_said(self, whole: str) -> None:
        if whole == self._said and self.shown.text():
            return
        self._said = whole
        plain, sure = headline(whole)
        self.shown.setText(plain)
        self.sure.setText(f"How sure: {sure}. Hover for what it rests on." if sure else "")
        self.sure.setVisible(bool(sure))
        tip = whole if plain != whole else ""
        self.shown.setToolTip(tip)
        self.sure.setToolTip(tip)

    # The summary sets and reads its headline as it did a label's text: the whole sentence.
    setText = set_said  # noqa: N815 (Qt's name)

    def said(self) -> str:
        return self._said

    def text(self) -> str:
        """What the room reads (the whole sentence is `said()`)."""
        return self.shown.text()
