"""The Sweep tab: time growing widths on the chosen lanes, find the crossover, fit and compare the cost model."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from crossover_lab.core.config import ConfigError, LaneSpec, RunConfig
from crossover_lab.core.files import ExportError
from crossover_lab.core.paths import autosave_dir
from crossover_lab.core.refine_answer import RefineTarget
from crossover_lab.core.refine_sweep import check_refinable, run_refined_sweep
from crossover_lab.core.session import LanePool
from crossover_lab.core.sweep import PointMeasured, SweepResult, SweepSpec, results_so_far, run_sweeps
from crossover_lab.core.sweep_files import SweepFiles, export_sweep, read_sweep_rows
from crossover_lab.core.sweep_rows import SweepRow, group_rows
from crossover_lab.core.words import fmt_duration, refine_lines, sweep_lines
from crossover_lab.gui.controller import cached_host_info
from crossover_lab.gui.file_dialogs import FileDialogs
from crossover_lab.gui.jobs import JobOutcome, JobRunner
from crossover_lab.gui.settings import AppSettings
from crossover_lab.gui.sweep_form import SweepForm
from crossover_lab.gui.sweep_plot import SweepPlot, curves
from crossover_lab.gui.sweep_table import SweepTable


class SweepTab(QWidget):
    """Controls, picture, verdict and table of a width sweep; the window supplies lanes and the base model."""

    sweep_started = Signal()  # a sweep began: the window locks what would change it
    sweep_ended = Signal(object)  # list[SweepResult]: the sweep ended (finished or cancelled); empty on failure

    def __init__(self, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 base_config: Callable[[], RunConfig], busy: Callable[[], bool],
                 settings: AppSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings or AppSettings()
        self._dialogs = FileDialogs(self._settings)
        self._pool, self._lanes, self._base_config, self._busy = pool, lanes, base_config, busy
        self._runner = JobRunner("sweep", 100, self)
        self._runner.drained.connect(self._on_runner_drained)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        self._rows: list[SweepRow] = []
        self._measured: list[PointMeasured] = []
        self._specs: list[SweepSpec] = []
        self._files: SweepFiles | None = None
        self.autosave_path = ""
        self._t0 = 0.0
        self.results: list[SweepResult] = []
        self._build()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.sweep_form = f = SweepForm(self._settings)
        self.preset, self.widths, self.layers, self.batches = f.preset, f.widths, f.layers, f.batches
        self.steady, self.seconds, self.compare = f.steady, f.seconds, f.compare
        self.run_button, self.refine_button, self.stop_button = f.run_button, f.refine_button, f.stop_button
        self.progress, self.progress_label = f.progress, f.progress_label
        self.run_button.clicked.connect(self.start)
        self.refine_button.clicked.connect(self.start_refine)
        self.stop_button.clicked.connect(self.stop)

        self.plot = SweepPlot()
        self.verdict = QLabel("Run a sweep to see where the lanes cross.")
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.setStyleSheet("font-weight: 600;")
        self.table = SweepTable()
        self.export_csv_button = QPushButton("Export sweep CSV…", enabled=False,
                                             toolTip="One row per point and lane, as `python main.py analyze` reads")
        self.export_csv_button.clicked.connect(self._on_export_csv_clicked)
        self.export_png_button = QPushButton("Export picture…", enabled=False, toolTip="The sweep plot as PNG")
        self.export_png_button.clicked.connect(self._on_export_png_clicked)
        self.open_button = QPushButton("Open sweep CSV…", toolTip="Show a sweep saved earlier, on this machine or "
                                       "another (an autosave, an export, or docs/results)")
        self.open_button.clicked.connect(self._on_open_clicked)
        exports = QHBoxLayout()
        exports.addWidget(self.open_button)
        exports.addStretch(1)
        exports.addWidget(self.export_csv_button)
        exports.addWidget(self.export_png_button)

        right = QSplitter(Qt.Orientation.Vertical)
        top, bottom = QWidget(), QWidget()
        top_layout, bottom_layout = QVBoxLayout(top), QVBoxLayout(bottom)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.plot, 1)
        top_layout.addWidget(self.verdict)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.table, 1)
        bottom_layout.addLayout(exports)
        right.addWidget(top)
        right.addWidget(bottom)
        right.setSizes([520, 260])
        layout = QHBoxLayout(self)
        left = QVBoxLayout()
        self.sweep_form.setMaximumWidth(340)  # the picture and the table need the room
        left.addWidget(self.sweep_form)
        left.addStretch(1)
        layout.addLayout(left, 0)
        layout.addWidget(right, 1)

    def save_state(self) -> None:
        self.sweep_form.save()

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._runner.running

    def threads(self) -> list:
        return self._runner.threads()

    def specs(self) -> list[SweepSpec]:
        """The sweep(s) the controls describe; raises ConfigError with a sentence for the user."""
        return self.sweep_form.specs(self._base_config())

    @Slot()
    def start(self) -> None:
        self._start(None)

    @Slot()
    def start_refine(self) -> None:
        """The sweep's widths, then more where the faster lane changes, until the answer is tight (core/refine.py)."""
        self._start(self.sweep_form.refine_target())

    def _start(self, target: RefineTarget | None) -> None:
        if self.running or self._busy():
            return
        lanes = self._lanes()
        try:
            if not lanes:
                raise ConfigError("choose at least one lane in the Lanes panel")
            specs = self.specs()
            if target is not None:
                check_refinable(lanes, specs)
        except ConfigError as exc:
            self._say(f"Cannot start the sweep: {exc}.", error=True)
            return
        self.save_state()
        self._rows, self._measured, self.results, self._specs = [], [], [], specs
        self._start_autosave(specs)
        self.table.setRowCount(0)
        total = sum(len(s.points()) for s in specs) * len(lanes)
        self.sweep_form.start_progress(total, target)
        self._say(f"Calibrating each lane, then {total} points, one at a time{', then refining' if target else ''}…")
        pool = self._pool()

        def work(cancel: threading.Event, put: Callable[[Any], None]) -> list[SweepResult]:
            if target is not None:
                return [run_refined_sweep(pool, lanes, specs[0], target, on_point=put, cancel=cancel)]
            return run_sweeps(pool, lanes, specs, on_point=put, cancel=cancel)

        self._t0 = time.monotonic()
        self._runner.start(work)
        self.sweep_form.set_running(True)
        self.sweep_started.emit()

    def _start_autosave(self, specs: list[SweepSpec]) -> None:
        self.autosave_path = str(autosave_dir() / "sweeps" / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}.csv")
        try:
            (autosave_dir() / "sweeps").mkdir(parents=True, exist_ok=True)
            self._files = SweepFiles(self.autosave_path, cached_host_info(), specs)
        except (OSError, ConfigError) as exc:
            self._files, self.autosave_path = None, ""
            self._say(f"Autosave is off for this sweep: {exc}", error=True)

    @Slot()
    def stop(self) -> None:
        if self.running:
            self._runner.cancel()
            self.progress_label.setText("Stopping after the point in progress…")

    def shutdown(self, timeout_ms: int = 1200) -> None:
        """Cancel and wait for the sweep (the window is closing); finished points stay in `results`
        and in the autosave. Call again after the lanes are closed: that ends a thread still waiting."""
        self._runner.shutdown(timeout_ms)
        self._runner.wait_stuck(timeout_ms)
        self._close_autosave()

    def _close_autosave(self) -> None:
        if self._files is not None:
            self._files.close()
            if self._files.error:
                self._say(f"Autosave failed: {self._files.error}", error=True)
            self._files = None

    def _say(self, text: str, error: bool = False) -> None:
        self.progress_label.setStyleSheet("color: #b00020;" if error else "")
        self.progress_label.setText(text)

    @Slot(list)
    def _on_runner_drained(self, points: list[PointMeasured]) -> None:
        for point in points:
            self._measured.append(point)
            self._rows.extend(point.rows)
            for row in point.rows:
                self.table.add_row(row)
            if self._files is not None:
                self._files.add_point(point.rows, point.run)
            self.sweep_form.show_progress(point.done, point.total, time.monotonic() - self._t0)
        if points:
            self._redraw()

    @Slot(object)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        self.results = list(outcome.result or self._as_results())
        self._close_autosave()
        self.sweep_form.set_running(False)
        took = fmt_duration(time.monotonic() - self._t0)
        saved = f", saved to {self.autosave_path}" if self.autosave_path else ""
        if outcome.error:
            self._say(f"The sweep failed: {outcome.error}. {len(self._rows)} points measured are kept{saved}.",
                      error=True)
        else:
            self._say(f"{'Stopped' if outcome.cancelled else 'Done'} after {took}: {len(self._rows)} points "
                      f"measured{saved}.")
        self._redraw()
        self.sweep_ended.emit(self.results)

    # ------------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        groups = group_rows(self._rows)
        points, crossings = curves(groups)
        refined = next((r.refinement for r in self.results if r.refinement), None)
        self.plot.set_points(points, crossovers=refined.marked() if refined else crossings)
        lines = (refine_lines(refined) if refined else []) + sweep_lines(groups, crossings=refined is None)
        failed = [r for r in self._rows if r.status == "failed"]
        if failed:
            lines.append(f"{len(failed)} point(s) failed, e.g. {failed[0].lane} width {failed[0].width}: "
                         f"{failed[0].reason}")
        self.verdict.setText("\n".join(lines) if lines else "Waiting for the first point…")
        self.export_csv_button.setEnabled(bool(self._rows))
        self.export_png_button.setEnabled(bool(self._rows))

    # ------------------------------------------------------------------ opening a saved sweep

    @Slot()
    def _on_open_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Open sweep CSV", "Sweep CSV (*.csv)", str(autosave_dir() / "sweeps"))
        if path:
            self.open_csv(path)

    def open_csv(self, path: str) -> bool:
        """Show the points of a sweep CSV (plot, verdict, table); a sentence in the tab if it cannot."""
        if self.running:
            return False
        try:
            rows, reading = read_sweep_rows(path)
        except ConfigError as exc:
            self._say(f"Cannot open it: {exc}.", error=True)
            return False
        self._rows, self._measured, self.results, self._specs, self.autosave_path = rows, [], [], [], ""
        self.table.setRowCount(0)
        for row in rows:
            self.table.add_row(row)
        self._redraw()
        note = f" ({reading.drop_note()})" if reading.dropped else ""
        self._say(f"Showing {len(rows)} points from {path}{note}.", error=bool(reading.dropped))
        return True

    # ------------------------------------------------------------------ export

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path = self._dialogs.save_path(self, "Export sweep CSV", "sweep.csv", "CSV files (*.csv)", ".csv")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> list[str]:
        """The sweep CSV, its per-batch CSV and JSON sidecar; a sentence in the tab if it cannot."""
        try:
            paths = [str(p) for p in export_sweep(path, self._as_results(), cached_host_info())]
        except ExportError as exc:
            self._say(f"Export failed: {exc}. The sweep's points are still here.", error=True)
            return []
        self._say("Wrote " + ", ".join(paths) + ".")
        return paths

    def _as_results(self) -> list[SweepResult]:
        """What has been measured so far, as the engine's results (the final ones once it ended)."""
        if self.results:
            return self.results
        if not self._specs:  # a sweep opened from a file: its rows, without per-batch records
            return [SweepResult(SweepSpec(widths=tuple(sorted({r.width for r in self._rows})) or (1,)),
                                rows=list(self._rows))]
        return results_so_far(self._specs, self._measured)

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path = self._dialogs.save_path(self, "Export sweep picture", "sweep.png", "PNG images (*.png)", ".png")
        if path and not self.plot.grab().save(path):
            self._say(f"Export failed: cannot write {path}.", error=True)
