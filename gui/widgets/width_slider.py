"""Hidden-layer widths: a logarithmic slider that snaps to round values, paired with an exact spin box."""
from __future__ import annotations

import bisect
import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QSlider, QSpinBox, QWidget

from ...core.config import MAX_LAYERS, MAX_WIDTH, MIN_WIDTH
from .range_spin import RangeSpinBox
from .signals import signals_blocked


def round_widths(lo: int = MIN_WIDTH, hi: int = MAX_WIDTH) -> tuple[int, ...]:
    """Round widths from `lo` to `hi`: 1-1.5-2-2.5-3-4-5-6-7.5-8 per decade, and the powers of two ≥ 16.

    Neighbours differ by 2-50% (by 2x only among the smallest widths), so equal slider steps
    are roughly equal steps in log(width).
    """
    values = {int(m * 10 ** e) for e in range(6) for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8)
              if float(m * 10 ** e).is_integer()}
    values |= {2 ** n for n in range(4, 15)}
    return tuple(sorted(v for v in values if lo <= v <= hi))


ROUND_WIDTHS = round_widths()


def nearest_position(width: int) -> int:
    """The slider position closest to `width` in log scale."""
    i = bisect.bisect_left(ROUND_WIDTHS, width)
    if i == 0:
        return 0
    if i >= len(ROUND_WIDTHS):
        return len(ROUND_WIDTHS) - 1
    below, above = ROUND_WIDTHS[i - 1], ROUND_WIDTHS[i]
    return i - 1 if math.log(width / below) <= math.log(above / width) else i


class LayerWidths(QWidget):
    """One row per hidden layer (up to 8): the slider to explore, the spin box for an exact width."""

    widths_changed = Signal()  # the visible widths changed (read them with widths())
    value_clamped = Signal(str)  # a typed width was out of range and was clamped: the sentence says how

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setColumnStretch(1, 1)
        self._labels: list[QLabel] = []
        self.sliders: list[QSlider] = []
        self.spins: list[QSpinBox] = []
        self._count = 1
        for i in range(MAX_LAYERS):
            label = QLabel(f"Layer {i + 1}")
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, len(ROUND_WIDTHS) - 1)
            slider.setPageStep(3)  # Page Up/Down: three round widths; the arrow keys: one
            slider.setAccessibleName(f"Layer {i + 1} width")
            slider.setAccessibleDescription("Moves through round widths; the box after it holds the exact width.")
            slider.setToolTip(f"Width of hidden layer {i + 1}: drag through round values from {MIN_WIDTH} "
                              f"to {MAX_WIDTH} (logarithmic); type an exact value in the box.")
            spin = RangeSpinBox()
            spin.setRange(MIN_WIDTH, MAX_WIDTH)
            spin.setGroupSeparatorShown(True)
            spin.setAccelerated(True)
            spin.setToolTip(f"Exact width of hidden layer {i + 1} ({MIN_WIDTH}-{MAX_WIDTH} neurons).")
            spin.setAccessibleName(f"Layer {i + 1} exact width")
            # A drag changes the model once, where it is let go: the box shows each width passed meanwhile, but the
            # lanes are not switched to every one of them (a drag 128 → 4,000 went through 13 models in a second).
            slider.setTracking(False)
            slider.sliderMoved.connect(lambda pos, i=i: self._on_slider_dragged(i, pos))
            slider.valueChanged.connect(lambda pos, i=i: self._on_slider_moved(i, pos))
            spin.valueChanged.connect(lambda value, i=i: self._on_spin_changed(i, value))
            spin.clamped.connect(lambda text, i=i: self.value_clamped.emit(f"Width of layer {i + 1}: {text}."))
            grid.addWidget(label, i, 0)
            grid.addWidget(slider, i, 1)
            grid.addWidget(spin, i, 2)
            self._labels.append(label)
            self.sliders.append(slider)
            self.spins.append(spin)
        self.set_widths((128,))

    def widths(self) -> tuple[int, ...]:
        return tuple(spin.value() for spin in self.spins[:self._count])

    def set_widths(self, widths: tuple[int, ...]) -> None:
        """Show len(widths) layers with these widths."""
        self._count = max(1, min(len(widths), MAX_LAYERS))
        for i, width in enumerate(widths[:MAX_LAYERS]):
            self._set_row(i, width)
        self._show_rows()
        self.widths_changed.emit()

    def set_first_label(self, text: str) -> None:
        """The first row's name ("Layer 1"; "Width" for a model built from one width)."""
        self._labels[0].setText(text)

    def set_count(self, count: int) -> None:
        """Show `count` layers; a layer added copies the width of the last one shown, so adding
        layers never slips in a 1-unit bottleneck or a width left over from an earlier model."""
        count = max(1, min(count, MAX_LAYERS))
        last = self.spins[self._count - 1].value()
        for i in range(self._count, count):
            self._set_row(i, last)
        self._count = count
        self._show_rows()
        self.widths_changed.emit()

    def _show_rows(self) -> None:
        for i in range(MAX_LAYERS):
            for widget in (self._labels[i], self.sliders[i], self.spins[i]):
                widget.setVisible(i < self._count)

    def _set_row(self, i: int, width: int) -> None:
        with signals_blocked(self.sliders[i], self.spins[i]):
            self.spins[i].setValue(width)
            self.sliders[i].setValue(nearest_position(width))

    def _on_slider_dragged(self, i: int, position: int) -> None:
        """While the slider is held: the box previews the width under it; nothing changes until it is let go."""
        with signals_blocked(self.spins[i]):
            self.spins[i].setValue(ROUND_WIDTHS[position])

    def _on_slider_moved(self, i: int, position: int) -> None:
        with signals_blocked(self.spins[i]):
            self.spins[i].setValue(ROUND_WIDTHS[position])
        self.widths_changed.emit()

    def _on_spin_changed(self, i: int, value: int) -> None:
        # The slider follows to the nearest round value; the spin box keeps the exact one.
        with signals_blocked(self.sliders[i]):
            self.sliders[i].setValue(nearest_position(value))
        self.widths_changed.emit()
