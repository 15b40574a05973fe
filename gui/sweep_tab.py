"""The Sweep tab: time growing widths on the chosen lanes, find the crossover, fit and compare the cost model."""
from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

from PySide6.QtCore import Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMessageBox, QProgressBar, QPushButton, QSpinBox,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.analysis import SweepPoint, analyze_points, describe_pair
from core.config import ConfigError, LaneSpec, RunConfig, parse_widths
from core.export import ExportError
from core.presets import SWEEP_PRESETS
from core.session import LanePool
from core.sweep import SweepResult, SweepSpec, group_rows, log_widths, with_knob, write_sweep_csv
from gui.lane_style import fmt_duration, fmt_num
from gui.settings import AppSettings
from gui.sweep_plot import SweepPlot, curves
from gui.sweep_worker import SweepWorker

COMPARE_CHOICES = ("none", "jit=on", "jit=off", "steps_per_execution=8", "batch_size=512", "feeding=device",
                   "mixed_precision=on")
TABLE_COLUMNS = ("variant", "lane", "width", "batch", "median ms", "p10-p90 ms", "GFLOP/s", "of peak", "status")


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
        self._t0 = 0.0
        self.results: list[SweepResult] = []
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._on_drain_timer_timeout)
        self._build()
        self._restore()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        form_box = QGroupBox("Sweep")
        form = QFormLayout(form_box)
        self.preset = QComboBox()
        self.preset.addItem("Custom", "")
        self.preset.addItem("Q&A seed: 1 layer, 25-1500 units, Nadam, batch 128", "qa")
        self.preset.addItem("Blog seed: 2 layers, 32-2000 units, Adam, batch 32", "blog")
        self.preset.setToolTip("Both seeds' experiments over a range of widths; Custom uses the Model panel's settings")
        self.preset.currentIndexChanged.connect(self._on_preset_changed)
        self.widths = QLineEdit(",".join(map(str, log_widths(16, 4096, 6))))
        self.widths.setToolTip("Hidden widths to time, comma-separated (every hidden layer gets the same width)")
        self.layers = QSpinBox(minimum=1, maximum=8, value=2, toolTip="Hidden layers, each of the swept width")
        self.batches = QLineEdit(placeholderText="the Model panel's batch size")
        self.batches.setToolTip("Also sweep these batch sizes, e.g. 32,128,512 (empty: the Model panel's)")
        self.steady = QSpinBox(minimum=3, maximum=10000, value=60,
                               toolTip="Steady (post-warm-up) batches per point at most")
        self.seconds = QDoubleSpinBox(minimum=0.2, maximum=600, value=3.0, decimals=1, suffix=" s",
                                      toolTip="Steady time per point at most: big models stop on time, small on count")
        self.compare = QComboBox(toolTip="Run the same sweep again with one setting changed, and show how the fixed "
                                         "overhead, the throughput and the crossover move")
        self.compare.addItems(COMPARE_CHOICES)
        for label, widget in (("Preset", self.preset), ("Widths", self.widths), ("Layers", self.layers),
                              ("Batch sizes", self.batches), ("Steady batches", self.steady),
                              ("Time per point", self.seconds), ("Compare with", self.compare)):
            form.addRow(label, widget)
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
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.export_csv_button = QPushButton("Export sweep CSV…", enabled=False,
                                             toolTip="One row per point and lane, as `python main.py analyze` reads")
        self.export_csv_button.clicked.connect(self._on_export_csv_clicked)
        self.export_png_button = QPushButton("Export picture…", enabled=False, toolTip="The sweep plot as PNG")
        self.export_png_button.clicked.connect(self._on_export_png_clicked)
        exports = QHBoxLayout()
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
        left.addWidget(form_box)
        left.addStretch(1)
        layout.addLayout(left, 0)
        layout.addWidget(right, 1)

    # ------------------------------------------------------------------ settings

    def _restore(self) -> None:
        s = self._settings
        self.widths.setText(s.text("sweep/widths", self.widths.text()))
        self.batches.setText(s.text("sweep/batches", ""))
        try:
            self.layers.setValue(int(s.text("sweep/layers", str(self.layers.value()))))
            self.steady.setValue(int(s.text("sweep/steady", str(self.steady.value()))))
            self.seconds.setValue(float(s.text("sweep/seconds", str(self.seconds.value()))))
        except ValueError:
            pass  # a hand-edited settings file: keep the defaults

    def save_settings(self) -> None:
        for key, value in (("widths", self.widths.text()), ("layers", self.layers.value()),
                           ("batches", self.batches.text()), ("steady", self.steady.value()),
                           ("seconds", self.seconds.value())):
            self._settings.set_text(f"sweep/{key}", str(value))

    @Slot(int)
    def _on_preset_changed(self, _index: int) -> None:
        name = self.preset.currentData()
        if name:
            layers, widths, _base = SWEEP_PRESETS[name]
            self.layers.setValue(layers)
            self.widths.setText(",".join(map(str, widths)))

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._thread is not None

    def thread(self) -> QThread | None:
        return self._thread[0] if self._thread is not None else None

    def specs(self) -> list[SweepSpec]:
        """The sweep(s) the controls describe; raises ConfigError with a sentence for the user."""
        name = self.preset.currentData()
        base = SWEEP_PRESETS[name][2] if name else self._base_config()
        spec = SweepSpec(widths=parse_widths(self.widths.text()), layers=self.layers.value(),
                         batch_sizes=parse_widths(self.batches.text()) if self.batches.text().strip() else (),
                         base=base, steady_steps=self.steady.value(), seconds_per_point=self.seconds.value())
        spec.points()  # validates every point's model now, not halfway through the sweep
        choice = self.compare.currentText()
        return [spec] + ([with_knob(spec, choice)] if choice != "none" else [])

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
            QMessageBox.warning(self, "Cannot start the sweep", str(exc))
            return
        self.save_settings()
        self._rows, self.results = [], []
        self.table.setRowCount(0)
        total = sum(len(s.points()) for s in specs) * len(lanes)
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.progress_label.setText(f"Calibrating each lane, then {total} points, one at a time…")
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

    def shutdown(self, timeout_ms: int = 2500) -> None:
        """Cancel and wait for the thread (the window is closing); finished points stay in `results`."""
        if self._thread is not None:
            self.stop()
            if self._thread[0].wait(timeout_ms):
                self._on_sweep_thread_finished()  # no event loop will deliver `finished` any more
        self._timer.stop()

    @Slot(str)
    def _on_worker_sweep_failed(self, reason: str) -> None:
        QMessageBox.warning(self, "The sweep failed", reason)

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
        cancelled = self._cancel is not None and self._cancel.is_set()
        self._cancel = None
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        took = fmt_duration(time.monotonic() - self._t0)
        self.progress_label.setText(f"{'Stopped' if cancelled else 'Done'} after {took}: "
                                    f"{len(self._rows)} points measured.")
        self._redraw(final=True)
        self.sweep_ended.emit(self.results)

    @Slot()
    def _on_drain_timer_timeout(self) -> None:
        new = False
        while True:
            try:
                kind, row, done, total = self._queue.get_nowait()
            except queue.Empty:
                break
            if kind == "point":
                self._rows.append(row)
                self._add_table_row(row)
                self.progress.setValue(done)
                elapsed = time.monotonic() - self._t0
                left = elapsed / done * (total - done) if done else float("nan")
                self.progress_label.setText(f"{done}/{total} points · about {fmt_duration(left)} left")
                new = True
        if new:
            self._redraw()

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

    def _add_table_row(self, row: dict[str, Any]) -> None:
        share = row.get("peak_share")
        values = (row["variant"], row["lane"], row["width"], row["batch_size"], fmt_num(row["median_ms"]),
                  f"{fmt_num(row['p10_ms'])}-{fmt_num(row['p90_ms'])}", fmt_num(row["gflops"]),
                  f"{100 * share:.0f}%" if isinstance(share, float) and share == share else "–", row["status"])
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, value in enumerate(values):
            item = QTableWidgetItem(str(value))
            if row["status"] == "failed":
                item.setToolTip(row.get("reason", ""))
            self.table.setItem(r, c, item)
        self.table.scrollToBottom()

    # ------------------------------------------------------------------ export

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep CSV", "sweep.csv", "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> None:
        try:
            write_sweep_csv(path, self._rows)
        except ExportError as exc:
            QMessageBox.warning(self, "Export failed", f"{exc}. The sweep's points are still here.")

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep picture", "sweep.png", "PNG images (*.png)")
        if path and not self.plot.grab().save(path):
            QMessageBox.warning(self, "Export failed", f"cannot write {path}")
