"""A spin box that accepts any whole number typed, clamps one out of range, and says so."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox


def _whole(text: str) -> int | None:
    digits = text.replace(",", "").replace("\u202f", "").replace("\u00a0", "").replace(" ", "").strip()
    return int(digits) if digits.lstrip("-").isdigit() else None


class RangeSpinBox(QSpinBox):
    """A plain QSpinBox refuses the keystroke that leaves its range (99999 stays 9999) or quietly
    restores the old value (0): here the number is taken, clamped on Enter, and `clamped` says so."""

    clamped = Signal(str)  # a sentence: "99,999 is outside 1-16,384: set to 16,384"

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
