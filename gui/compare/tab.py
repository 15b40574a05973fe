"""The Compare tab: the live plot and the crossover map above, the summary and the run history below."""
from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QSplitter, QWidget

from ...core.analysis.fits import CostFit
from ...core.files.findings import Findings
from ...core.results import RunResult
from .crossover_map import CrossoverMap
from .history import HistoryPanel
from ..live_run import LiveRun
from .live_plot import LivePlot
from ..settings import AppSettings
from .summary import SummaryPanel
from ..widgets.file_dialogs import FileDialogs
from ..widgets.layouts import group


class CompareTab(QSplitter):
    """Four panels in resizable splitters; it remembers the splitters' positions."""

    def __init__(self, findings: Findings | None = None, parent: QWidget | None = None,
                 dialogs: FileDialogs | None = None) -> None:
        """`findings`: the window's one answer per pair and kind of model, shared with the Sweep tab; `dialogs`:
        the window's, for the map's predicted lanes from a profile file."""
        super().__init__(Qt.Orientation.Vertical, parent)
        self.plot = LivePlot()
        self.map = CrossoverMap(findings, dialogs=dialogs)
        self.plot.set_predicted(self.map.predicted)  # the map's predicted lanes, dashed on the run shown too
        self.summary = SummaryPanel()
        self.summary.findings = self.map.findings
        self.history = HistoryPanel()
        self.top_split = QSplitter(Qt.Orientation.Horizontal)
        self.top_split.addWidget(group("Live: ms per step (per call, for predict)", self.plot))
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
        self.map.points_changed.connect(self._on_map_points_changed)
        self.history.run_chosen.connect(self._on_history_run_chosen)
        self._running = False
        self.shown: LiveRun | None = None  # the run the plot and summary show (File > Export report reports it)

    def show_run(self, live: LiveRun) -> None:
        """A run began: the plot and the summary follow it."""
        self._running = True
        self.history.table.clearSelection()
        self.shown = live
        self.summary.set_fits(self._fits())
        self.plot.show_run(live)
        self.summary.show_run(live)
        self.map.follow(live)

    def run_ended(self, result: RunResult | None) -> int:
        """The live run ended: it joins the history, and its points the map (returned: how many)."""
        self._running = False
        self.plot.refresh()
        self.summary.run_ended()
        if result is None:
            self.map.follow(None)
            return 0
        self.history.add_run(result)
        return self.map.add_run(result)

    @Slot()
    def findings_changed(self) -> None:
        """Another view (the Sweep tab) added points to the window's findings: the map's answer and a ramp's
        headline say the new one."""
        self.map.refresh()
        self.summary.set_fits(self._fits())  # refreshes the summary

    def add_saved_runs(self, runs: list[RunResult]) -> None:
        for result in runs:
            self.history.add_run(result)
            self.map.add_run(result)

    @Slot(RunResult)
    def _on_history_run_chosen(self, result: RunResult) -> None:
        """Show a past run's per-batch plot and summary (not while a run trains: the plot follows that one)."""
        if self._running:
            return
        shown = LiveRun.of_result(result)
        assert isinstance(shown, LiveRun)  # of_result builds a `cls` (core types it as the base RunTracker)
        self.shown = shown
        self.summary.set_fits(self._fits())
        self.plot.show_run(shown)
        self.summary.show_run(shown)
        self.summary.run_ended()

    @Slot()
    def _on_map_points_changed(self) -> None:
        self.summary.set_fits(self._fits())

    def _fits(self) -> dict[str, CostFit]:
        """The cost fits of the shown run's kind of model, from the window's findings (none before any run)."""
        return self.map.findings.lane_fits(self.shown.result.config) if self.shown is not None else {}

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
