"""The live summary: per-lane median, samples/s, GFLOP/s and progress, the verdict in words, and why."""
from __future__ import annotations


from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from crossover_lab.core.analysis import CostFit, has_steady
from crossover_lab.core.anatomy import AnatomyPoint
from crossover_lab.core.anatomy_run import anatomy_key
from crossover_lab.core.anatomy_words import CLOCKS, NOT_MEASURED, PIPELINED_CLOCK, SYNCED_CLOCK, clock_note
from crossover_lab.core.config import RunConfig
from crossover_lab.core.records import RunSummary
from crossover_lab.core.words import explain, fmt_duration, fmt_num, verdict_lines
from crossover_lab.gui.lane_style import lane_color
from crossover_lab.gui.lanes_panel import contention_note
from crossover_lab.gui.live import LiveRun
from crossover_lab.gui.theme import scheme_colors

TEXT_INTERVAL_MS = 250  # figures in words change slowly; the plot has its own faster timer
# One column per lane, one row per figure: two or three lanes read side by side in a narrow panel.
ROWS = ("Device", "Status", "Median ms/batch, synced", "p10–p90 ms/batch", "Samples/s", "GFLOP/s", "Data", "Progress",
        "Pipelined ms/step")


class SummaryPanel(QWidget):
    """Reads the live run on its own 4 Hz timer; `refresh()` redraws at once."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(len(ROWS), 0)
        self.table.setVerticalHeaderLabels(ROWS)
        self.table.setAccessibleName("Summary: one column per lane")
        self.table.setTabKeyNavigation(False)  # read-only: Tab goes on to the next control, the arrows move within
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Steady-state figures (warm-up batches left out), updated as batches arrive.")
        self.verdict = QLabel("No run yet.")
        self.verdict.setObjectName("verdictLabel")
        self.verdict.setWordWrap(True)
        self.explanation = QLabel("")
        self.explanation.setObjectName("explanationLabel")
        self.explanation.setWordWrap(True)
        self.problems = QLabel("")
        self.problems.setObjectName("problemLabel")
        self.problems.setWordWrap(True)
        self.problems.hide()
        self.note = QLabel("")
        self.note.setObjectName("warningLabel")
        self.note.setWordWrap(True)
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.verdict)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.problems)
        layout.addWidget(self.note)
        layout.addWidget(self.explanation)
        self._live: LiveRun | None = None
        self._fits: dict[str, CostFit] = {}
        self._anatomy: tuple[RunConfig | None, dict[str, AnatomyPoint]] = (None, {})  # the Why tab's last
        for name, clock in (("Median ms/batch, synced", SYNCED_CLOCK), ("Pipelined ms/step", PIPELINED_CLOCK)):
            self.table.verticalHeaderItem(ROWS.index(name)).setToolTip(f"The {clock}: {CLOCKS[clock]}.")
        self._timer = QTimer(self)
        self._timer.setInterval(TEXT_INTERVAL_MS)
        self._timer.timeout.connect(self._on_text_timer_timeout)

    def show_run(self, live: LiveRun) -> None:
        self._live = live
        note = contention_note(live.specs, live.result.schedule)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.table.setColumnCount(len(live.lanes))
        for col, name in enumerate(live.lanes):
            swatch = QPixmap(12, 12)
            swatch.fill(lane_color(name))
            self.table.setHorizontalHeaderItem(col, QTableWidgetItem(QIcon(swatch), name))
            for row in range(len(ROWS)):
                self.table.setItem(row, col, QTableWidgetItem(""))
        self.refresh()
        self._timer.start()

    def set_fits(self, fits: dict[str, CostFit]) -> None:
        """Cost fits from the crossover map (lanes with ≥2 sizes), for the explanation."""
        self._fits = dict(fits)
        self.refresh()

    # ---------------------------------------------------------------- the two clocks (the Why tab measures)

    def set_anatomy(self, config: RunConfig, points: dict[str, AnatomyPoint]) -> None:
        """The anatomy of `config` per lane: its pipelined clock is shown while the live run trains that model."""
        self._anatomy = (anatomy_key(config), dict(points))
        self.refresh()

    def anatomy(self) -> dict[str, AnatomyPoint]:
        """The lanes' anatomies of the live run's model, if the Why tab measured that model."""
        config, points = self._anatomy
        live = self._live
        return points if live is not None and config is not None and anatomy_key(live.config) == config else {}

    def _pipelined_text(self, lane: str) -> str:
        rung = (point := self.anatomy().get(lane)) and point.rung("fit_pipelined")
        return fmt_num(rung.median_ms) if rung else NOT_MEASURED

    def run_ended(self) -> None:
        self.refresh()
        self._timer.stop()

    @Slot()
    def _on_text_timer_timeout(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        live = self._live
        if live is None:
            return
        summaries, problems = [], []
        for col, (name, lane) in enumerate(live.lanes.items()):
            s = live.summary(name)
            summaries.append(s)
            total = live.total_steps(name)
            state = lane.status
            last = lane.records[-1] if lane.records else None
            if state == "waiting":
                progress = "waiting for its turn" if live.result.schedule == "sequential" else "starting the lane…"
            elif total and last is not None:
                per_epoch = max(total // max(live.config.train.epochs, 1), 1)
                progress = f"epoch {last.epoch}/{live.config.train.epochs} · batch {last.batch}/{per_epoch}"
                if state == "running":
                    progress += f" · {fmt_duration(live.time_left(name))} left"
            else:
                progress = f"step {last.step}" if last is not None else "loading data…"
            settings = lane.started.settings if lane.started else {}
            data = settings.get("data_source", "…")  # synthetic stand-in or real MNIST: the user must see which
            cells = (live.device(name) or "…", state, fmt_num(s.median_ms),
                     f"{fmt_num(s.p10_ms)}–{fmt_num(s.p90_ms)}", fmt_num(s.samples_per_s), fmt_num(s.gflops),
                     data, progress)
            for row, text in enumerate(cells):
                item = self.table.item(row, col)
                if item.text() != text:
                    item.setText(text)
            self.table.item(ROWS.index("Data"), col).setToolTip(settings.get("data_description", ""))
            self.table.item(ROWS.index("Pipelined ms/step"), col).setText(self._pipelined_text(name))
            status = self.table.item(1, col)
            # No colour of its own unless failed: the table's text colour reads in light and dark.
            status.setData(Qt.ItemDataRole.ForegroundRole, QColor(scheme_colors().error) if state == "failed" else None)
            status.setToolTip(lane.failure or s.reason or state)
            if state == "failed":
                problems.append(f"{name} failed: {lane.failure}")
        if live.failure:
            problems.insert(0, f"The run failed: {live.failure}")
        self.problems.setText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self._update_words(summaries)

    def _update_words(self, summaries: list[RunSummary]) -> None:
        lines = verdict_lines(summaries)
        if lines:
            clocks = clock_note({s.lane: s.median_ms for s in summaries}, self.anatomy())
            self.verdict.setText(" · ".join(line + "." for line in lines) + f" {clocks[:1].upper()}{clocks[1:]}.")
        elif len(summaries) < 2:
            self.verdict.setText("Choose two lanes for a verdict.")
        else:
            self.verdict.setText("Waiting for steady batches on both lanes…")
        usable = [s for s in summaries if has_steady(s)]
        if len(usable) >= 2:
            text = explain(usable[0], usable[1], self._fits)
            self.explanation.setText(text)
            self.explanation.setToolTip(text)
        else:
            self.explanation.setText("")
