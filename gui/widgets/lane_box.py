"""A lane's check box whose device name is cut with … to the room it has, so a long one never widens the side panel.

"cpu  ·  CPU (Intel(R) Xeon(R) Processor, 16 threads)" or a remote host's lane would otherwise set
the width of the whole left column, and at 1024 px take it from the plots. The lane's own name
always shows; text() and the tooltip keep the whole line.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QCheckBox, QSizePolicy, QStyle, QStyleOptionButton, QStylePainter, QWidget


class LaneBox(QCheckBox):
    """A check box for `text` that may shrink down to its first part, `keep` (the lane's name) and "…"."""

    def __init__(self, text: str, keep: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._keep = keep
        # A check box may not shrink below its text (Minimum); this one may, down to minimumSizeHint.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, self.sizePolicy().verticalPolicy())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        whole = super().minimumSizeHint()
        cut = whole.width() - self.fontMetrics().horizontalAdvance(self.text())
        cut += self.fontMetrics().horizontalAdvance(f"{self._keep}  ·  …")
        return QSize(min(whole.width(), cut), whole.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        option = QStyleOptionButton()
        self.initStyleOption(option)
        room = self.style().subElementRect(QStyle.SubElement.SE_CheckBoxContents, option, self).width()
        option.text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, room)
        QStylePainter(self).drawControl(QStyle.ControlElement.CE_CheckBox, option)
