"""The run history: every run of the session (and restored ones), with per-run export and delete."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal, Slot
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QMenu, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from ...core.results import RunResult, by_batch_size
from ...core.words.numbers import fmt_num, local_time
from ...core.words.run import verdict_lines
from ..resources import icon
from ...core.config import Task
from ...core.records import Status

COLUMNS = ("Time", "Model", "Lanes", "Status", "Summary")


def run_status(result: RunResult) -> str:
    """completed, cancelled, or failed (with how many lanes) — the worst of the lanes."""
    states = [lane.status for lane in result.lanes.values()]
    failed = sum(state == Status.FAILED for state in states)  # a Status is a str enum: it equals its word
    if failed:
        return "failed" if failed == len(states) else f"{failed} of {len(states)} lanes failed"
    if Status.CANCELLED in states or Status.RUNNING in states:
        return str(Status.CANCELLED)
    return str(Status.COMPLETED)


def run_summary_text(result: RunResult) -> str:
    """Each lane's median step time, then the verdict: what the run found, in one line."""
    parts = [f"{name} {fmt_num(lane.summary.median_ms)} ms" for name, lane in result.lanes.items()
             if lane.summary is not None and lane.summary.n_batches]
    lines = verdict_lines([lane.summary for lane in result.lanes.values() if lane.summary is not None],
                          task=result.config.train.task, noise=result.run_noise)
    return " · ".join(parts + lines) or next((lane.failure for lane in result.lanes.values() if lane.failure), "")


def model_words(result: RunResult) -> str:
    """The model and batch, or a ramp's widths in order: "784-128-10 · batch 128", "ramp 16 → 256 · batch 128",
    "changed while training: 128 → 512 · batch 32" (widths dragged during the run); a predict run says so
    ("784-128-10 · batch 8 · predict")."""
    cfg = result.config
    task = " · predict" if cfg.train.task == Task.PREDICT else ""
    segments = max((lane.segments for lane in result.lanes.values()), key=len, default=[])
    if len(segments) > 1:
        # A ramp's segments each end with their budget; a width dragged while it trained ends one "switched".
        dragged = any(s.ended is not None and s.ended.summary.status == Status.SWITCHED for s in segments)
        if by_batch_size(segments):  # through batch sizes at one model: "ramp batch 1 → 8 → 64 · 784-128-10"
            return ("changed while training: " if dragged else "ramp ") + "batch " + \
                " → ".join(f"{s.started.batch_size:,}" for s in segments) + f" · {cfg.model.label()}{task}"
        return ("changed while training: " if dragged else "ramp ") + " → ".join(s.label for s in segments) + \
            f" · batch {cfg.train.batch_size}{task}"
    return f"{cfg.model.label()} · batch {cfg.train.batch_size}{task}"


class HistoryPanel(QWidget):
    """A table, newest run first; the buttons and the context menu act on the selected run."""

    run_chosen = Signal(RunResult)  # the user picked this run (its plot and summary are shown)
    export_requested = Signal(str)  # run_id: export this run's per-batch CSV and JSON sidecar
    delete_requested = Signal(str)  # run_id: forget this run (history, map and autosave)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Run history, newest first")
        self.table.setTabKeyNavigation(False)  # read-only: Tab goes on to the next control, the arrows move within
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu_requested)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.table.setToolTip("Click a run to see its per-batch plot and summary again.")
        self._runs: dict[str, RunResult] = {}
        self.export_button = QPushButton(icon("export"), "Export run…")
        self.export_button.setToolTip("Write the selected run's per-batch CSV and its JSON sidecar.")
        self.delete_button = QPushButton(icon("delete"), "Delete run")
        self.delete_button.setToolTip("Forget the selected run: history, map points and its autosave.")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.delete_button.clicked.connect(self._on_delete_clicked)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self._on_table_selection_changed()

    def add_run(self, result: RunResult) -> None:
        """Insert a run at the top (or refresh its row if it is there already)."""
        self.remove_run(result.run_id)
        self._runs[result.run_id] = result
        cells = (local_time(result.started_at), model_words(result),
                 ", ".join(result.lanes), run_status(result), run_summary_text(result))
        self.table.insertRow(0)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, result.run_id)
            item.setToolTip(f"run {result.run_id}: {text}")
            self.table.setItem(0, col, item)

    def _run_id_at(self, row: int) -> str:
        item = self.table.item(row, 0)
        assert item is not None  # add_run fills every cell of the rows it inserts
        return item.data(Qt.ItemDataRole.UserRole)

    def remove_run(self, run_id: str) -> None:
        for row in range(self.table.rowCount()):
            if self._run_id_at(row) == run_id:
                self.table.removeRow(row)
                break
        self._runs.pop(run_id, None)

    def run_ids(self) -> list[str]:
        return [self._run_id_at(r) for r in range(self.table.rowCount())]

    def selected_run_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self._run_id_at(rows[0].row()) if rows else None

    @Slot()
    def _on_table_selection_changed(self) -> None:
        run_id = self.selected_run_id()
        self.export_button.setEnabled(run_id is not None)
        self.delete_button.setEnabled(run_id is not None)
        if run_id in self._runs:
            self.run_chosen.emit(self._runs[run_id])

    @Slot()
    def _on_export_clicked(self) -> None:
        run_id = self.selected_run_id()
        if run_id:
            self.export_requested.emit(run_id)

    @Slot()
    def _on_delete_clicked(self) -> None:
        run_id = self.selected_run_id()
        if run_id:
            self.delete_requested.emit(run_id)

    @Slot(QPoint)
    def _on_table_context_menu_requested(self, pos: QPoint) -> None:
        item = self.table.itemAt(pos)
        if item is None:
            return
        run_id = item.data(Qt.ItemDataRole.UserRole)
        menu = QMenu(self)
        menu.addAction(icon("export"), "Export run…", lambda: self.export_requested.emit(run_id))
        menu.addAction(icon("delete"), "Delete run", lambda: self.delete_requested.emit(run_id))
        menu.exec(self.table.viewport().mapToGlobal(pos))
