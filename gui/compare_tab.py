"""The Compare tab: the live plot and the crossover map above, the summary and the run history below."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QSplitter, QVBoxLayout, QWidget

from crossover_lab.gui.crossover_map import CrossoverMap
from crossover_lab.gui.history_panel import HistoryPanel
from crossover_lab.gui.live_plot import LivePlot
from crossover_lab.gui.settings import AppSettings
from crossover_lab.gui.summary_panel import SummaryPanel


def group(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(6, 6, 6, 6)
    layout.addWidget(widget)
    return box


class CompareTab(QSplitter):
    """Four panels in resizable splitters; it remembers the splitters' positions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.plot = LivePlot()
        self.map = CrossoverMap()
        self.summary = SummaryPanel()
        self.history = HistoryPanel()
        self.top_split = QSplitter(Qt.Orientation.Horizontal)
        self.top_split.addWidget(group("Live: ms per batch", self.plot))
        self.top_split.addWidget(group("Crossover map", self.map))
        self.top_split.setSizes([640, 420])
        self.bottom_split = QSplitter(Qt.Orientation.Horizontal)
        self.bottom_split.addWidget(group("Summary", self.summary))
        self.bottom_split.addWidget(group("History", self.history))
        self.bottom_split.setSizes([600, 460])
        self.addWidget(self.top_split)
        self.addWidget(self.bottom_split)
        self.setSizes([470, 380])
        for split in self.splitters():
            split.setChildrenCollapsible(False)

    def splitters(self) -> tuple[QSplitter, ...]:
        return (self, self.top_split, self.bottom_split)

    def save_state(self, settings: AppSettings) -> None:
        for name, split in zip(("compare", "top", "bottom"), self.splitters()):
            settings.set_state(f"window/split_{name}", split.saveState())
        self.plot.save_state(settings)

    def restore_state(self, settings: AppSettings) -> None:
        for name, split in zip(("compare", "top", "bottom"), self.splitters()):
            state = settings.state(f"window/split_{name}")
            if state is not None:
                split.restoreState(state)
        self.plot.restore_state(settings)
