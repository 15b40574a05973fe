"""The window's exports: timings of all runs or one run (the engine's CSV + JSON), the plot as PNG/SVG, and a
report to cite (core/report) of what the current tab shows."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtWidgets import QMessageBox, QWidget

from ...core.config import ConfigError
from ...core.files.predicted import AskedPrediction
from ...core.files.run_files import ExportError, export_runs
from ...core.results import RunResult
from ..controller import RunController
from ..widgets.file_dialogs import FileDialogs
from ..compare.live_plot import LivePlot
from ...core.plurals import plural


class WindowExports:
    """Each export has a plain method (path in, problem sentence or "" out) and an ask_… that opens a dialog."""

    def __init__(self, parent: QWidget, controller: RunController, plot: LivePlot, dialogs: FileDialogs,
                 say: Callable[..., None],
                 predictions: Callable[[], Sequence[AskedPrediction]] = lambda: ()) -> None:
        """`say(text, error=False)` puts a sentence in the window's status bar; `predictions()`: the window's
        predicted lanes, which every report it writes lists apart from what it measured."""
        self.parent, self.controller, self.plot, self.dialogs, self.say = parent, controller, plot, dialogs, say
        self.predictions = predictions

    def export_timings(self, path: str, runs: list[RunResult] | None = None) -> str:
        """Write every run since launch (or `runs`); returns "" on success, else why not."""
        runs = self.controller.runs if runs is None else runs
        if not runs:
            return "nothing to export yet: run a comparison first"
        try:
            priced = self.controller.prices_of({lane for run in runs for lane in run.lanes})
            extra = {"prices": priced} if priced else None
            csv_path, json_path = export_runs(path, runs, self.controller.host(), extra)
        except ExportError as exc:
            return str(exc)
        self.say(f"Wrote {len(runs)} {plural(len(runs), 'run')} to {csv_path} and {json_path.name}.")
        return ""

    def export_run(self, run_id: str, path: str) -> str:
        run = self.controller.run(run_id)
        return self.export_timings(path, [run]) if run else f"run {run_id} is no longer in the history"

    def export_plot(self, path: str) -> str:
        try:
            self.plot.export_image(path)
        except (OSError, RuntimeError, ValueError) as exc:
            return f"cannot write {path}: {exc}"
        if not os.path.exists(path):
            return f"cannot write {path} (is the folder there and writable?)"
        self.say(f"Saved the plot to {path}.")
        return ""

    def export_report(self, path: str, sources: Callable[[Path], list[Path]]) -> str:
        """The report at `path` of the files `sources(path)` writes beside it (so the report names files that stay
        where it says); "" on success, else why not."""
        try:
            files = sources(Path(path))
            from ...core.report.html import write_report  # Jinja2 and the report's words: loaded when first asked

            write_report(files, path, predictions=self.predictions())
        except (ExportError, ConfigError, OSError) as exc:
            return str(exc)
        self.say(f"Wrote the report to {path} (from {', '.join(f.name for f in files)}, beside it).")
        return ""

    # ------------------------------------------------------------------ with a file dialog

    def _report(self, problem: str) -> None:
        if problem:
            self.say(f"Export failed: {problem}", error=True)
            box = QMessageBox(QMessageBox.Icon.Warning, "Export failed", problem[:1].upper() + problem[1:] + ".",
                              QMessageBox.StandardButton.Ok, self.parent)
            box.setModal(False)
            box.show()

    def ask_export_timings(self) -> None:
        if not self.controller.runs:
            self._report("nothing to export yet: run a comparison first")
            return
        n = len(self.controller.runs)  # the session's runs: one run alone is the History's Export
        path = self.dialogs.save_path(self.parent, f"Export the timings of every run since launch ({n} "
                                      f"{plural(n, 'run')}; one run: its History menu)",
                                      "crossover-session-timings.csv", "CSV files (*.csv)", ".csv")
        if path:
            self._report(self.export_timings(path))

    def ask_export_run(self, run_id: str) -> None:
        path = self.dialogs.save_path(self.parent, "Export run", f"crossover-{run_id}.csv", "CSV files (*.csv)",
                                      ".csv")
        if path:
            self._report(self.export_run(run_id, path))

    def ask_export_plot(self, kind: str) -> None:
        # A dark window still exports a light picture (LivePlot.export_image): the title says so before it surprises.
        path = self.dialogs.save_path(self.parent, f"Export plot as {kind.upper()} (drawn light, for slides)",
                                      f"crossover-plot.{kind}", f"{kind.upper()} files (*.{kind})", f".{kind}")
        if path:
            self._report(self.export_plot(path))

    def ask_export_report(self, sources: Callable[[Path], list[Path]], what: str) -> None:
        path = self.dialogs.save_path(self.parent, f"Export report of the {what}", f"crossover-{what}-report.html",
                                      "HTML files (*.html)", ".html")
        if path:
            self._report(self.export_report(path, sources))
