"""A spin box that accepts any whole number typed, clamps one out of range, and says so."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QSpinBox, QWidget


def _whole(text: str) -> int | None:
    digits = text.replace(",", "").replace("\u202f", "").replace("\u00a0", "").replace(" ", "").strip()
    return int(digits) if digits.lstrip("-").isdigit() else None


class RangeSpinBox(QSpinBox):
    """A plain QSpinBox refuses the keystroke that leaves its range (99999 stays 9999) or quietly
    restores the old value (0): here the number is taken, clamped on Enter, and `clamped` says so."""

    clamped = Signal(str)  # a sentence: "99,999 is outside 1-16,384: set to 16,384"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # A number typed counts once it is whole (Enter, Tab, a click elsewhere, or Start: see commit_typing), never
        # digit by digit: typing 1024 into a running model's width switched the lanes to 10 when the keys came
        # slowly on a busy machine. The arrows and the wheel still count at once.
        self.setKeyboardTracking(False)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        state, fixed, fixed_pos = super().validate(text, pos)
        if state == QValidator.State.Invalid and _whole(text) is not None:
            return QValidator.State.Intermediate, text, pos
        return state, fixed, fixed_pos

    def fixup(self, text: str) -> str:
        n = _whole(text)
        if n is not None and not self.minimum() <= n <= self.maximum():
            value = min(max(n, self.minimum()), self.maximum())
            self.clamped.emit(f"{n:,} is outside {self.minimum():,}-{self.maximum():,}: set to {value:,}")
            return str(value)
        return super().fixup(text)


def commit_typing() -> None:
    """The number being typed in the focused spin box, taken now (as Enter would), for an action that reads the form
    while the cursor is still in a box (F5 right after typing a width)."""
    widget = QApplication.focusWidget()
    while widget is not None and not isinstance(widget, QAbstractSpinBox):
        widget = widget.parentWidget()
    if widget is not None:
        widget.interpretText()
