"""What the Sweep tab shows of a sweep: the picture, the verdict in words, the table, other sweeps overlaid,
and opening and exporting sweep files. It shows; the tab (gui/sweep/tab.py) measures."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from ...core.words.anatomy import floor_notes, floor_crossover_lines
from ...core.config import ConfigError
from ...core.files.atomic import ExportError
from ...core.paths import autosave_dir
from ...core.study.sweep import SweepResult
from ...core.files.sweeps.files import export_sweep, read_sweep_rows
from ...core.files.sweeps.rows import SweepRow, group_rows
from ...core.paths import PROG
from ...core.words.sweep import (answer_lines, busy_lines, cost_lines, picture_title, refine_lines,
                                  sweep_lines)
from ...core.analysis.verdict import crossovers_of
from ...core.files.findings import Findings
from ..controller import cached_host_info
from ..widgets.file_dialogs import FileDialogs
from ..panels.lane_prices import LanePrices
from .overlays import SweepOverlays
from .plot import SweepPlot, curves, energy_points
from .table import SweepTable
from ...core.records import Status

Say = Callable[..., None]  # say(text, error=False): a sentence under the sweep's controls
# Below this the ten tick labels of a 16-8,192 sweep run into each other; the Sweep tab scrolls instead.
PLOT_LEAST_WIDTH = 440


NO_SWEEP_YET = ("No sweep yet: press Run sweep (F5) or Refine crossover, or open a sweep CSV (one from the "
                "autosave folder, an export, or docs/results).")


ENERGY_TIP = ("Draw joules per million samples instead of time per batch, and where the lane that uses less energy "
              "per sample changes (the same rule as for time)")
NO_ENERGY_TIP = ("No point has energy measured: this machine has no counter Crossover can read (the Compare tab's "
                 "summary says why and how to enable it)")


class SweepView(QSplitter):
    """The picture and its verdict above, the table and the file buttons below."""

    def __init__(self, dialogs: FileDialogs, prices: LanePrices | None, say: Say,
                 results: Callable[[], list[SweepResult]], findings: Findings | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self._dialogs, self._say, self._results = dialogs, say, results
        self.findings = findings if findings is not None else Findings()
        self.rows: list[SweepRow] = []
        # Measured in this window (a sweep, a refinement, a ramp shown here): its points join the window's findings
        # and its verdict is their answer on its kinds of model. False for a file opened: it says its own.
        self.measured = True
        # What the verdict says with no point to show: the tab sets "Waiting for the first point…" while it sweeps.
        self.empty_text = NO_SWEEP_YET
        self.notes: list[str] = []  # lines of a knob ladder's answer, shown under the verdict
        self.overlays = SweepOverlays(dialogs, prices)  # other sweeps drawn over this one
        self.overlays.changed.connect(self.redraw)
        self.plot = SweepPlot()
        self.plot.setMinimumWidth(PLOT_LEAST_WIDTH)
        self.verdict = QLabel(self.empty_text)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.setStyleSheet("font-weight: 600;")
        self.table = SweepTable()
        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.setEnabled(False)
        self.export_csv_button.setToolTip(f"The sweep CSV (one row per point and lane, as `{PROG} analyze` reads), "
                                          "its per-batch CSV and JSON sidecar")
        self.export_csv_button.clicked.connect(self._on_export_csv_clicked)
        self.export_png_button = QPushButton("Export picture…")
        self.export_png_button.setEnabled(False)
        self.export_png_button.setToolTip("The sweep plot as a PNG for a slide: 1600×1000, titled, light")
        self.export_png_button.clicked.connect(self._on_export_png_clicked)
        self.energy_box = QCheckBox("Energy")
        self.energy_box.setEnabled(False)
        self.energy_box.setToolTip(NO_ENERGY_TIP)
        self.energy_box.toggled.connect(self.redraw)
        self.open_button = QPushButton("Open CSV…")
        self.open_button.setToolTip("Show a sweep saved earlier, on this machine or another (an autosave, an "
                                    "export, or docs/results)")
        self.open_button.clicked.connect(self._on_open_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(self.energy_box)
        buttons.addWidget(self.export_csv_button)
        buttons.addWidget(self.export_png_button)
        top, bottom = QWidget(), QWidget()
        top_layout, bottom_layout = QVBoxLayout(top), QVBoxLayout(bottom)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.plot, 1)
        top_layout.addWidget(self.verdict)
        top_layout.addWidget(self.overlays)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.table, 1)
        bottom_layout.addLayout(buttons)
        self.addWidget(top)
        self.addWidget(bottom)
        self.setSizes([520, 260])
        self.setChildrenCollapsible(False)

    # ------------------------------------------------------------------ what is shown

    def set_rows(self, rows: list[SweepRow], measured: bool = True) -> None:
        """Show these rows (a new sweep, a ramp, or a file: not `measured` here) instead of what was shown."""
        self.rows, self.notes, self.measured = [], [], measured
        self.table.setRowCount(0)
        self.add_rows(rows)

    def add_rows(self, rows: list[SweepRow] | tuple[SweepRow, ...]) -> None:
        self.rows.extend(rows)
        for row in rows:
            self.table.add_row(row)
        self.redraw()

    def findings_changed(self) -> None:
        """Points measured elsewhere in the window (a ramp, a run's held width) joined the findings: a sweep
        measured here says the answer they give now."""
        if self.measured and self.rows:
            self.redraw()

    @Slot()
    def redraw(self) -> None:
        groups = group_rows(self.rows + self.overlays.rows())
        energy = energy_points(groups)
        self.energy_box.setEnabled(bool(energy))
        self.energy_box.setToolTip(ENERGY_TIP if energy else NO_ENERGY_TIP)
        drawn = energy if energy and self.energy_box.isChecked() else groups
        refined = next((r.refinement for r in self._results() if r.refinement), None)
        answers = None
        if self.measured and self.rows and not self.overlays.rows():
            # Measured here: the window's one answer on these kinds of model (the ramp's points, an earlier
            # sweep's, pooled with these), as the map and the summary say it.
            self.findings.put(self.rows)  # the window's app model tells the other views (gui/app_model.py)
            answers = self.findings.answers_about(self.rows)
        given = answers is not None and drawn is groups  # the answers' crossings and fits, made once, are drawn
        points, crossings = curves(drawn, find=not given)
        fits = None
        if answers is not None and given:
            crossings = crossovers_of([a.verdict for a in answers], between=True)
            if len(groups) == 1:  # the lanes keep their own names on the plot: each one's fit
                fits = {lane: fit for a in answers for lane, fit in a.fits.items()}
        elif refined is not None and drawn is groups and not self.overlays.rows():
            crossings = refined.marked()  # a refined sweep's answer is its refinement's, as `analyze` reads it
        # The one rule's crossings: of time per batch, or of energy per sample.
        self.plot.set_points(points, crossovers=crossings, energy=drawn is energy, fits=fits)
        prices = self.overlays.prices()
        self.table.show_costs(self.rows, prices)
        # The one rule's sentence, then what a refinement left open and why it stopped: as `sweep` and `analyze` say it.
        said = answer_lines(answers) if answers else sweep_lines(groups)
        lines = (said + (refine_lines(refined) if refined else [])
                 + cost_lines(groups, prices) + floor_crossover_lines(groups) + floor_notes(groups)
                 + busy_lines(groups) + self.notes)
        failed = [r for r in self.rows if r.status == Status.FAILED]
        if failed:
            lines.append(f"{len(failed)} point(s) failed, e.g. {failed[0].lane} width {failed[0].width_label}: "
                         f"{failed[0].reason}")
        self.verdict.setText("\n".join(lines) if lines else self.empty_text)
        self.export_csv_button.setEnabled(bool(self.rows))
        self.export_png_button.setEnabled(bool(self.rows))

    # ------------------------------------------------------------------ files

    @Slot()
    def _on_open_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Open sweep CSV", "Sweep CSV (*.csv)", str(autosave_dir() / "sweeps"))
        if path:
            self.open_csv(path)

    def open_csv(self, path: str) -> bool:
        """Show the points of a sweep CSV; a sentence under the controls if it cannot."""
        try:
            rows, reading = read_sweep_rows(path)
        except ConfigError as exc:
            self._say(f"Cannot open it: {exc}.", error=True)
            return False
        self.set_rows(rows, measured=False)
        note = f" ({reading.drop_note()})" if reading.dropped else ""
        self._say(f"Showing {len(rows)} points from {path}{note}.", error=bool(reading.dropped))
        return True

    @Slot()
    def _on_export_csv_clicked(self) -> None:
        path = self._dialogs.save_path(self, "Export sweep CSV", "sweep.csv", "CSV files (*.csv)", ".csv")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> list[str]:
        """The sweep CSV, its per-batch CSV and JSON sidecar; a sentence under the controls if it cannot."""
        try:
            prices = self.overlays.prices_for({row.lane for row in self.rows})
            paths = [str(p) for p in export_sweep(path, self._results(), cached_host_info(), prices)]
        except ExportError as exc:
            self._say(f"Export failed: {exc}. The sweep's points are still here.", error=True)
            return []
        self._say("Wrote " + ", ".join(paths) + ".")
        return paths

    def picture_title(self) -> str:
        return picture_title(self.rows + self.overlays.rows(), cached_host_info())

    @Slot()
    def _on_export_png_clicked(self) -> None:
        path = self._dialogs.save_path(self, "Export sweep picture (drawn light, for slides)", "sweep.png",
                                       "PNG images (*.png)", ".png")
        if path and not self.plot.export_png(path, self.picture_title()):
            self._say(f"Export failed: cannot write {path}.", error=True)
