"""Small builders of a form's fields: a spin box of whole numbers or decimals, a combo box of words or of titles."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox

from ..widgets.range_spin import RangeSpinBox


def int_spin(lo: int, hi: int, tip: str) -> RangeSpinBox:
    spin = RangeSpinBox()
    spin.setRange(lo, hi)
    spin.setGroupSeparatorShown(True)
    spin.setToolTip(tip)
    return spin


def double_spin(lo: float, hi: float, step: float, decimals: int, tip: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setDecimals(decimals)
    spin.setRange(lo, hi)
    spin.setSingleStep(step)
    spin.setKeyboardTracking(False)  # a number typed counts once whole, as in RangeSpinBox
    spin.setToolTip(tip)
    return spin


def combo(items: tuple[str, ...], tip: str) -> QComboBox:
    box = QComboBox()
    box.addItems(items)
    box.setToolTip(tip)
    return box


def titled_combo(titles: dict[str, str], names: tuple[str, ...] | None = None) -> QComboBox:
    """A box of `titles`' titles, each holding its name as its data (`names`: these of them, in this order)."""
    box = QComboBox()
    for name in names or tuple(titles):
        box.addItem(titles[name], name)
    return box
