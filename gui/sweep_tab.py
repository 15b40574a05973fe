"""The Sweep tab: time growing widths on the chosen lanes, find the crossover, fit and compare the cost model."""
from __future__ import annotations

import os
import queue
import threading
import time
from typing import Any, Callable

from PySide6.QtCore import Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSplitter, QVBoxLayout,
                               QWidget)

from crossover_lab.core.analysis import SweepPoint, analyze_points, describe_pair
from crossover_lab.core.config import ConfigError, LaneSpec, RunConfig
from crossover_lab.core.export import ExportError
from crossover_lab.core.session import LanePool, RunResult
from crossover_lab.core.sweep import SweepResult, SweepSpec, export_sweep, group_rows, read_sweep_rows
from crossover_lab.gui.lane_style import fmt_duration, fmt_num
from crossover_lab.gui.settings import AppSettings
from crossover_lab.gui.sweep_form import SweepForm
from crossover_lab.gui.sweep_plot import SweepPlot, curves
from crossover_lab.gui.sweep_table import SweepTable
from crossover_lab.gui.autosave import autosave_dir
from crossover_lab.gui.sweep_worker import SweepWorker
from crossover_lab.gui.workers import cached_host_info



class SweepTab(QWidget):
    """Controls, picture, verdict and table of a width sweep; the window supplies lanes and the base model."""

    sweep_started = Signal()  # a sweep began: the window locks what would change it
    sweep_ended = Signal(object)  # list[SweepResult]: the sweep ended (finished or cancelled); empty on failure

    def __init__(self, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 base_config: Callable[[], RunConfig], busy: Callable[[], bool],
                 settings: AppSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings or AppSettings()
        self._pool, self._lanes, self._base_config, self._busy = pool, lanes, base_config, busy
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._cancel: threading.Event | None = None
        self._thread: tuple[QThread, SweepWorker] | None = None
        self._rows: list[dict[str, Any]] = []
        self._runs: list[tuple[str, RunResult]] = []  # (variant, per-batch records of one point)
        self._specs: list[SweepSpec] = []
        self._stuck: list[tuple[QThread, SweepWorker]] = []  # never drop a running QThread (Qt would abort)
        self.autosave_path = ""
        self._t0 = 0.0
        self.results: list[SweepResult] = []
        self._failure = ""
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._on_drain_timer_timeout)
        self._build()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.sweep_form = SweepForm(self._settings)
        form = self.sweep_form.form
        f = self.sweep_form
        self.preset, self.widths, self.layers, self.batches = f.preset, f.widths, f.layers, f.batches
        self.steady, self.seconds, self.compare = f.steady, f.seconds, f.compare
        self.run_button = QPushButton("Run sweep", toolTip="Time every width on every selected lane, one at a time")
        self.run_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop", toolTip="Stop after the point in progress (Esc); finished points stay",
                                       enabled=False)
        self.stop_button.clicked.connect(self.stop)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        form.addRow(buttons)
        self.progress = QProgressBar(textVisible=True)
        self.progress.setFormat("%v / %m points")
        self.progress_label = QLabel("Lanes come from the Lanes panel: one after another, never side by side.")
        self.progress_label.setWordWrap(True)
        form.addRow(self.progress)
        form.addRow(self.progress_label)

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
        exports = QHBoxLayout()
        self.open_button = QPushButton("Open sweep CSV…", toolTip="Show a sweep saved earlier, on this machine or "
                                       "another (an autosave, an export, or docs/results)")
        self.open_button.clicked.connect(self._on_open_clicked)
        exports.addWidget(self.open_button)
        exports.addStretch(1)
        exports.addWidget(self.export_csv_button)
        exports.addWidget(self.export_png_button)

        right = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.plot, 1)
        top_layout.addWidget(self.verdict)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
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

    # ------------------------------------------------------------------ settings

    def save_settings(self) -> None:
        self.sweep_form.save()

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._thread is not None

    def thread(self) -> QThread | None:
        return self._thread[0] if self._thread is not None else None

    def specs(self) -> list[SweepSpec]:
        """The sweep(s) the controls describe; raises ConfigError with a sentence for the user."""
        return self.sweep_form.specs(self._base_config())

    @Slot()
    def start(self) -> None:
        if self.running or self._busy():
            return
        lanes = self._lanes()
        try:
            if not lanes:
                raise ConfigError("choose at least one lane in the Lanes panel")
            specs = self.specs()
        except ConfigError as exc:
            self._say(f"Cannot start the sweep: {exc}.", error=True)
            return
        self.save_settings()
        self._rows, self._runs, self.results, self._specs = [], [], [], specs
        self.autosave_path = str(autosave_dir() / "sweeps" / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}.csv")
        self.table.setRowCount(0)
        total = sum(len(s.points()) for s in specs) * len(lanes)
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self._say(f"Calibrating each lane, then {total} points, one at a time…")
        self._cancel = threading.Event()
        thread = QThread()
        thread.setObjectName("crossover-sweep")
        worker = SweepWorker(self._pool(), lanes, specs, self._queue.put, self._cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.sweep_failed.connect(self._on_worker_sweep_failed)
        thread.finished.connect(self._on_sweep_thread_finished)
        self._thread = (thread, worker)
        self._t0 = time.monotonic()
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        thread.start()
        self._timer.start()
        self.sweep_started.emit()

    @Slot()
    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.progress_label.setText("Stopping after the point in progress…")

    def shutdown(self, timeout_ms: int = 1200) -> None:
        """Cancel and wait for the thread (the window is closing); finished points stay in `results`
        and in the autosave. Call again after the lanes are closed: that ends a thread still waiting."""
        if self._thread is not None:
            self.stop()
            if self._thread[0].wait(timeout_ms):
                self._on_sweep_thread_finished()  # no event loop will deliver `finished` any more
            else:
                self._stuck.append(self._thread)
                self._thread = None
        for thread, _worker in self._stuck:
            thread.wait(timeout_ms)
        self._timer.stop()

    @Slot(str)
    def _on_worker_sweep_failed(self, reason: str) -> None:
        self._failure = reason

    def _say(self, text: str, error: bool = False) -> None:
        self.progress_label.setStyleSheet("color: #b00020;" if error else "")
        self.progress_label.setText(text)

    @Slot()
    def _on_sweep_thread_finished(self) -> None:
        if self._thread is None:
            return
        thread, worker = self._thread
        thread.wait()
        self._thread = None
        self._timer.stop()
        self._on_drain_timer_timeout()
        self.results = list(worker.results)
        self._autosave()
        cancelled = self._cancel is not None and self._cancel.is_set()
        self._cancel = None
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        took = fmt_duration(time.monotonic() - self._t0)
        failure, self._failure = self._failure, ""
        if failure:
            self._say(f"The sweep failed: {failure}. {len(self._rows)} points measured are kept.", error=True)
        else:
            self._say(f"{'Stopped' if cancelled else 'Done'} after {took}: {len(self._rows)} points measured, "
                      f"saved to {self.autosave_path}.")
        self._redraw(final=True)
        self.sweep_ended.emit(self.results)

    @Slot()
    def _on_drain_timer_timeout(self) -> None:
        new = False
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item[0] == "run":
                self._runs.append((item[1], item[2]))
            elif item[0] == "point":
                _kind, row, done, total = item
                self._rows.append(row)
                self.table.add_row(row)
                self.progress.setValue(done)
                elapsed = time.monotonic() - self._t0
                left = elapsed / done * (total - done) if done else float("nan")
                self.progress_label.setText(f"{done}/{total} points · about {fmt_duration(left)} left")
                new = True
        if new:
            self._redraw()
            self._autosave()

    # ------------------------------------------------------------------ drawing

    def _groups(self) -> dict[str, list[SweepPoint]]:
        return group_rows(self._rows)

    def _redraw(self, final: bool = False) -> None:
        points, crossings = curves(self._groups())
        self.plot.set_points(points, crossovers=crossings)
        lines = []
        groups = self._groups()
        for label, pts in groups.items():
            lanes = sorted({p.lane for p in pts})
            pairs = [describe_pair(pts, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
            fits = analyze_points(pts)["lanes"]
            fit_text = "; ".join(f"{lane}: {fmt_num(f['overhead_ms'])} ms fixed + {fmt_num(f['gflops'])} GFLOP/s"
                                 for lane, f in fits.items() if f["overhead_ms"] is not None)
            prefix = f"{label}: " if len(groups) > 1 else ""
            lines.append(prefix + ("; ".join(pairs) or "one lane: nothing to cross")
                         + (f". Fits: {fit_text}." if fit_text else ""))
        failed = [r for r in self._rows if r["status"] == "failed"]
        if failed:
            lines.append(f"{len(failed)} point(s) failed, e.g. {failed[0]['lane']} width {failed[0]['width']}: "
                         f"{failed[0]['reason']}")
        self.verdict.setText("\n".join(lines) if lines else "Waiting for the first point…")
        self.export_csv_button.setEnabled(bool(self._rows))
        self.export_png_button.setEnabled(bool(self._rows))


    # ------------------------------------------------------------------ opening a saved sweep

    @Slot()
    def _on_open_clicked(self) -> None:
        folder = str(autosave_dir() / "sweeps")
        path, _ = QFileDialog.getOpenFileName(self, "Open sweep CSV", folder, "Sweep CSV (*.csv)")
        if path:
            self.open_csv(path)

    def open_csv(self, path: str) -> bool:
        """Show the points of a sweep CSV (plot, verdict, table); a sentence in the tab if it cannot."""
        if self.running:
            return False
        try:
            rows = read_sweep_rows(path)
        except ConfigError as exc:
            self._say(f"Cannot open it: {exc}.", error=True)
            return False
        self._rows, self._runs, self.results, self._specs, self.autosave_path = rows, [], [], [], ""
        self.table.setRowCount(0)
        for row in rows:
            self.table.add_row(row)
        self._redraw(final=True)
        self._say(f"Showing {len(rows)} points from {path}.")
        return True

    # ------------------------------------------------------------------ export

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep CSV", "sweep.csv", "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> list[str]:
        """The sweep CSV, its per-batch CSV and JSON sidecar; a sentence in the tab if it cannot."""
        try:
            paths = export_sweep(path, self._as_results(), cached_host_info())
        except ExportError as exc:
            self._say(f"Export failed: {exc}. The sweep's points are still here.", error=True)
            return []
        self._say("Wrote " + ", ".join(paths) + ".")
        return paths

    def _as_results(self) -> list[SweepResult]:
        """What has been measured so far, as the engine's results (the final ones once it ended)."""
        if self.results:
            return self.results
        return [SweepResult(spec, points=[r for r in self._rows if r["variant"] == spec.variant],
                            runs=[run for variant, run in self._runs if variant == spec.variant])
                for spec in self._specs]

    def _autosave(self) -> None:
        """Every point lands on disk as it arrives: a close or a crash loses no finished point."""
        if not self._rows or not self.autosave_path:
            return
        try:
            os.makedirs(os.path.dirname(self.autosave_path), exist_ok=True)
            export_sweep(self.autosave_path, self._as_results(), cached_host_info())
        except (ExportError, OSError) as exc:
            self._say(f"Autosave failed: {exc}", error=True)

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep picture", "sweep.png", "PNG images (*.png)")
        if path and not self.plot.grab().save(path):
            self._say(f"Export failed: cannot write {path}.", error=True)
