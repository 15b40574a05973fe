"""Saved sweeps drawn over the Sweep tab's own: any number of files (this machine's, docs/results', a colleague's).

Each file's lanes are named `MACHINE/LANE` (core/files/sweeps/sets.py), so its curves get legend entries
of their own, with their device; a click on its × removes it. Crossovers are found across files.
"""
from __future__ import annotations

from typing import Iterable

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ...core.config import ConfigError
from ...core.analysis.costs import prices_of
from ...core.paths import autosave_dir
from ...core.files.sweeps.rows import SweepRow
from ...core.files.sweeps.sets import SweepSet, load_sets
from ..widgets.file_dialogs import FileDialogs
from ..panels.lane_prices import LanePrices
from ..widgets.layouts import empty_layout


class SweepOverlays(QWidget):
    """The sweeps added, one row each; `rows()` and `prices()` are what the tab draws and prices."""

    changed = Signal()  # a sweep was added or removed, or a lane's price changed: draw again

    def __init__(self, dialogs: FileDialogs, prices: LanePrices | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dialogs = dialogs
        self._prices = prices
        if prices is not None:
            prices.changed.connect(self.changed)
        self.sets: list[SweepSet] = []
        self.add_button = QPushButton("Add sweep CSV…")
        self.add_button.setToolTip("Draw a saved sweep over this one, from this machine or another; its lanes are "
                                   "named MACHINE/LANE")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.note = QLabel(wordWrap=True)
        self.note.setStyleSheet("color: #b00020;")
        self.note.hide()
        self._rows = QGridLayout()
        self._rows.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.add_button)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._rows)
        layout.addWidget(self.note)
        layout.addLayout(top)

    def rows(self) -> list[SweepRow]:
        return [row for s in self.sets for row in s.rows]

    def prices(self) -> dict[str, float]:
        """The lanes' prices as typed in the Lanes panel, and those recorded with each added sweep."""
        typed = self._prices.values() if self._prices is not None else {}
        return {**typed, **{lane: price for s in self.sets for lane, price in s.prices.items()}}

    def prices_for(self, lanes: Iterable[str]) -> dict[str, float]:
        """The prices of these lanes (what a sweep of them records in its sidecar)."""
        return prices_of(lanes, self.prices())

    def add_csv(self, path: str) -> bool:
        """Draw the sweep in `path` too; False (and the reason, in red) when it cannot be read."""
        try:
            (added,) = load_sets([path], taken={s.label for s in self.sets})
        except ConfigError as exc:
            self._say(f"Cannot add it: {exc}.")
            return False
        if not added.rows:
            self._say(f"Cannot add it: {path} holds no points that can be used.")
            return False
        self.sets.append(added)
        self._say(added.reading.drop_note())
        self._render()
        self.changed.emit()
        return True

    def remove(self, label: str) -> None:
        self.sets = [s for s in self.sets if s.label != label]
        self._render()
        self.changed.emit()

    def _say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    @Slot()
    def _on_add_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Add sweep CSV", "Sweep CSV (*.csv)", str(autosave_dir() / "sweeps"))
        if path:
            self.add_csv(path)

    def _render(self) -> None:
        empty_layout(self._rows)
        for i, s in enumerate(self.sets):
            label = QLabel(f"{s.label}: {'; '.join(s.devices) or 'no device named'} · {len(s.rows)} points",
                           wordWrap=True)
            label.setToolTip(s.path)
            remove = QPushButton("×")
            remove.setToolTip(f"Remove {s.label}'s sweep from the plot")
            remove.setMaximumWidth(28)
            remove.clicked.connect(lambda _=False, name=s.label: self.remove(name))
            self._rows.addWidget(label, i, 0)
            self._rows.addWidget(remove, i, 1)
