"""What each lane costs per hour, as the user typed it beside the lane: remembered, and read by the Sweep tab."""
from __future__ import annotations

import json

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QDoubleSpinBox, QWidget

from ..settings import AppSettings

KEY = "lanes/prices"


class LanePrices(QObject):
    """lane → dollars per hour; a lane without a price has none (not zero)."""

    changed = Signal()  # a price was set, changed or cleared

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._prices: dict[str, float] = {}

    def values(self) -> dict[str, float]:
        return dict(self._prices)

    def set(self, lane: str, price: float) -> None:
        """Set a lane's price; 0 clears it."""
        old = self._prices.get(lane)
        if price > 0:
            self._prices[lane] = float(price)
        else:
            self._prices.pop(lane, None)
        if self._prices.get(lane) != old:
            self.changed.emit()

    def field(self, lane: str, parent: QWidget | None = None) -> QDoubleSpinBox:
        """A spin box bound to `lane`'s price."""
        box = _PriceBox(self, lane, parent)
        box.setValue(self._prices.get(lane, 0.0))
        return box

    def save_state(self, settings: AppSettings) -> None:
        settings.set_text(KEY, json.dumps(self._prices))

    def restore_state(self, settings: AppSettings) -> None:
        try:
            saved = json.loads(settings.text(KEY, "{}") or "{}")
        except ValueError:
            saved = {}  # a hand-damaged entry: start without prices
        if isinstance(saved, dict):
            self._prices = {str(k): float(v) for k, v in saved.items() if isinstance(v, (int, float)) and v > 0}
            self.changed.emit()


class _PriceBox(QDoubleSpinBox):
    def __init__(self, prices: LanePrices, lane: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self._prices, self._lane = prices, lane
        self.setRange(0.0, 10000.0)
        self.setDecimals(2)
        self.setSingleStep(0.1)
        self.setPrefix("$")
        self.setSuffix("/h")
        self.setSpecialValueText("$ –/h")  # zero reads as "no price", not as free
        self.setAccessibleName(f"Price of {lane} per hour")
        self.setToolTip(f"What {lane} costs per hour (optional): the Sweep tab then shows the cost per "
                        "million samples and where the cheaper lane changes")
        self.valueChanged.connect(self._on_value_changed)

    @Slot(float)
    def _on_value_changed(self, value: float) -> None:
        self._prices.set(self._lane, value)
