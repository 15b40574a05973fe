"""The main window: composes the panels, wires them to the controller, and handles start, stop and close."""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Slot
from PySide6.QtGui import QCloseEvent, QDesktopServices, QGuiApplication, QShowEvent
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QMessageBox, QSplitter, QToolBar

from ...core.files.findings import Findings
from ...core.files.device_profile import DeviceProfile
from ...core.presets import WINDOW_DEFAULT
from ...core.files import autosave
from ...core.files.atomic import ExportError, atomic_write_text
from ...core.files.run_files import export_runs
from ...core.json_data import json_clean
from ...core.words.anatomy import anatomy_json
from ...core.config import RunConfig
from ...core.engine.devices import LaneOption
from ...core.engine.machine_load import LoadWatch, busy_start_words, busy_words
from ...core.paths import compile_cache_dir, guide_path, log_dir_problem
from ...core.words.numbers import fmt_count, local_time
from ...core.results import RunResult
from ..app_model import AppModel, Change
from .about import GUIDE_URL, show_about
from .actions import Actions, build_actions
from ..compare.tab import CompareTab
from ..controller import DiscoverFn, RunController, cached_host_info
from .exporting import WindowExports
from ..widgets.file_dialogs import FileDialogs
from ..panels.lanes import machine_text
from ..live_run import LiveRun
from ..widgets.page_tabs import PageTabs
from .calibrate_dialog import CalibrateDialog
from .profile_dialog import ProfileDialog
from .recovery import RecoveryOffer
from .run_desk import Holder, RunDesk
from ..resources import icon
from ..settings import AppSettings
from ..panels.side import SidePanel
from ..widgets.status_line import StatusLine
from ..widgets import plain_text, wheel_guard
from ..sweep.tab import SweepTab
from ..theme.scheme import Theme
from ..why.tab import WhyView

LEAST_SIZE = QSize(900, 600)  # below this the pages would mostly be scroll bars
# The Compare tab scrolls below this rather than squeeze its live plot until the hint beside the
# plot's controls (gui/compare/live_plot.py) reads one word per line.
COMPARE_LEAST = QSize(700, 500)


LOAD_INTERVAL_MS = 2000  # how often the status bar checks for other work on the machine


PRESTART_AFTER_SHOWN_MS = 150  # the window paints first; then its lanes import their frameworks


class MainWindow(QMainWindow):
    """Crossover's window. `discover_fn`, `prestart` and `offer_recovery` exist for tests and --screenshot.

    `offer_recovery=None` offers autosaved runs back unless CROSSOVER_NO_RESTORE_PROMPT=1.
    """

    actions: Actions  # the window's commands (window.actions.start…): see __init__

    def __init__(self, *, discover_fn: DiscoverFn | None = None, prestart: bool = True,
                 offer_recovery: bool | None = None, settings: AppSettings | None = None) -> None:
        super().__init__()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            wheel_guard.install(app)  # before the panels are polished: a wheel over a setting scrolls the column
            plain_text.install(app)  # every label and tooltip plain text: a file's text is never HTML here
        self.setWindowTitle("Crossover — where a GPU starts to beat a CPU")
        self.setWindowIcon(icon("crossover"))
        self.settings = settings or AppSettings()
        self.theme = Theme(self.settings, self)  # before the panels: they are built in the remembered scheme
        self.controller = RunController(self, discover_fn=discover_fn)
        self._prestart = prestart
        self._prestart_pending = False  # the lanes are started once the window is on the screen
        self.close_seconds = 0.0  # how long the last close took (the close must end within 3 s)
        self.dialogs = FileDialogs(self.settings)
        self.profile_dialog: ProfileDialog | None = None  # Run > Measure a device profile, once opened
        self.calibrate_dialog: CalibrateDialog | None = None  # Run > Calibrate the rule here, once opened
        self.side = SidePanel(self.dialogs)
        # The window's one state (gui/app_model.py): the model set up, the lanes chosen and the findings, one answer
        # per pair of lanes and kind of model from every completed point measured since the window opened. The map,
        # the headline, the Sweep tab and the report all render it; a view is told when it changes.
        self.app = AppModel(self.side.model_panel.current(), self.side.model_panel.problem(), Findings(),
                            defer=lambda tell: QTimer.singleShot(0, self, tell))
        self.findings = self.app.findings
        self.compare = CompareTab(self.findings, dialogs=self.dialogs)
        self.sweep = SweepTab(lambda: self.controller.pool, lambda: list(self.app.lanes),
                              lambda: self.app.config or RunConfig(),
                              lambda: self.desk.lanes_busy(Holder.SWEEP),
                              settings=self.settings, prices=self.side.lanes_panel.prices, dialogs=self.dialogs,
                              findings=self.findings)
        self.sweep.sweep_started.connect(lambda: self._say_busy_start("this sweep"))
        self.controller.run_started.connect(lambda _live: self._say_busy_start("this run"))
        self.why = WhyView(lambda: self.controller.pool, lambda: list(self.app.lanes), lambda: self.app.config,
                           lambda: self.desk.lanes_busy(Holder.WHY), self.compare.summary.set_anatomy,
                           measured=self.findings.measured)
        # The name hides QWidget.actions(), which the window never calls; tests and callers read window.actions,
        # so it stays until they move to another name.
        self.actions = build_actions(self, self.theme)  # pyright: ignore[reportIncompatibleMethodOverride]
        self.actions.presentation.toggled.connect(self._on_presentation_toggled)
        self.status = StatusLine()
        self.statusBar().addWidget(self.status, 1)
        self.desk = RunDesk(self.app, self.controller, self.side, self.compare, self.sweep, self.why, self.actions,
                            self.status,
                            lambda: self.tabs.currentWidget() is self.sweep, self.save_state, self)
        self.exports = WindowExports(self, self.controller, self.compare.plot, self.dialogs, self.say,
                                     predictions=self.compare.map.asked_predictions)
        self.compare.summary.prices = self.controller.prices = self.side.lanes_panel.prices.values  # cost per sample, recorded
        self.side.lanes_panel.prices.changed.connect(self.compare.summary.refresh)
        self.compare.summary.lane_up = self.controller.lane_up  # while the lanes start, what each is doing
        self.side.start_button.setToolTip(self.actions.start.toolTip())
        self.side.stop_button.setToolTip(self.actions.stop.toolTip())
        self._compose()
        self._connect()
        self.side.lanes_panel.set_options(self.controller.options, searching=True)
        self._restore_state()
        if self.theme.presentation:  # remembered from the last session
            self._on_presentation_toggled(True)
        self.app.set_lanes(self.side.lanes_panel.selected_specs())
        self.compare.map.set_model(self.app.config)
        self.desk.update_controls()
        self.busy_label = QLabel("")  # while a run goes: other work on this machine's cores, when there is some
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setStyleSheet("font-weight: 600;")  # the scheme's own text colour: readable in both
        self.busy_label.setToolTip("Measured every 2 s from the CPU time of processes other than Crossover and its "
                                   "lanes. Figures measured while other work shares the cores may not hold.")
        self.busy_label.hide()
        self.statusBar().addPermanentWidget(self.busy_label)
        self._load = LoadWatch()
        self._load_timer = QTimer(self)
        self._load_timer.setInterval(LOAD_INTERVAL_MS)
        self._share, self._started_busy = math.nan, False  # other work's share of the cores, last 2 s
        self._load_timer.timeout.connect(self._on_load_timer_timeout)
        self._load_timer.start()
        self.host_label = QLabel(machine_text(None))
        self.statusBar().addPermanentWidget(self.host_label)
        self.recovery = RecoveryOffer.install(self.statusBar(), self.restore_runs, offer_recovery)
        if log_dir_problem():  # lanes still run; their logs go to the terminal that started the app
            self.say(log_dir_problem()[:1].upper() + log_dir_problem()[1:] + ".", error=True)
        self.controller.discover_devices()

    def measuring(self) -> bool:
        """A run, a ramp, a sweep or a Why study is measuring: a busy machine is said while one is."""
        return self.desk.measuring()

    @Slot()
    def _on_load_timer_timeout(self) -> None:
        share = self._load.share()  # read every time, so the first reading of a run compares like with like
        self._share = share
        text = busy_words(share, os.getloadavg()[0]) if self.measuring() else ""
        if text != self.busy_label.text() and not (self._started_busy and not text):
            self.busy_label.setText(text)
            self.busy_label.setVisible(bool(text))
        self._started_busy = False  # the start's words stand until the first reading of the study itself

    def _say_busy_start(self, what: str) -> None:
        """A study starts: where the last 2 s were busy, say so now, before its first figure."""
        text = busy_start_words(self._share, os.getloadavg()[0], what)
        if text:
            self.busy_label.setText(text)
            self.busy_label.setVisible(True)
            self._started_busy = True

    # ------------------------------------------------------------------ layout, wiring, state

    def _compose(self) -> None:
        self.tabs = PageTabs()
        self.tabs.add_page(self.compare, "Compare", "Train one model on the chosen lanes and watch every batch",
                           COMPARE_LEAST)
        self.tabs.add_page(self.sweep, "Sweep", "Time growing widths on the chosen lanes and find where they cross")
        self.tabs.add_page(self.why, "Why", "Where a step's time goes on each lane")
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.addWidget(self.side)
        self.main_split.addWidget(self.tabs)
        # The side panel takes a quarter of any change of the window's width (within its least and most
        # width), the pages the rest: at 1024 px both still fit.
        self.main_split.setStretchFactor(0, 1)
        self.main_split.setStretchFactor(1, 3)
        self.main_split.setSizes([400, 1040])
        self.main_split.setChildrenCollapsible(False)
        self.setCentralWidget(self.main_split)
        self.setMinimumSize(LEAST_SIZE)
        self.resize(1440, 900)
        self.fit_screen()

    def _connect(self) -> None:
        a, c, d = self.actions, self.controller, self.desk
        a.start.triggered.connect(d.start_run)
        a.ramp.triggered.connect(d.start_ramp)
        a.stop.triggered.connect(d.stop)
        self.side.start_button.clicked.connect(d.start_run)
        self.side.stop_button.clicked.connect(d.stop)
        a.export_timings.triggered.connect(self.exports.ask_export_timings)
        a.export_png.triggered.connect(lambda: self.exports.ask_export_plot("png"))
        a.export_svg.triggered.connect(lambda: self.exports.ask_export_plot("svg"))
        a.export_report.triggered.connect(lambda: self.exports.ask_export_report(self.report_sources, self.report_what()))
        a.clear_map.triggered.connect(self.compare.map.clear)
        a.reset.triggered.connect(self.reset_to_defaults)
        a.clear_compiled.triggered.connect(self.clear_compiled_cache)
        a.quit.triggered.connect(self.close)
        a.about.triggered.connect(lambda: show_about(self, c.host(), c.options))
        a.guide.triggered.connect(self._open_guide)
        a.profile.triggered.connect(self.open_profile_dialog)
        a.calibrate.triggered.connect(self.open_calibrate_dialog)
        c.devices_discovered.connect(self._on_controller_devices_discovered)
        c.discovery_failed.connect(self._on_controller_discovery_failed)
        c.live_changed.connect(self.compare.plot.refresh)
        c.autosave_failed.connect(lambda reason: self.say(f"Autosave failed: {reason}", error=True))
        self.side.model_panel.input_adjusted.connect(self._on_model_panel_input_adjusted)
        panel = self.side.model_panel
        panel.config_changed.connect(lambda config: self.app.set_config(config, "" if config else panel.problem()))
        self.app.subscribe(lambda _: self.compare.map.set_model(self.app.config), Change.CONFIG)  # predicted lanes
        self.app.subscribe(lambda _: self._on_findings_changed(), Change.FINDINGS)
        self.compare.map.predicted.said.connect(lambda text, problem: self.say(text, error=problem))
        self.compare.map.predicted.host = cached_host_info  # a profile of other versions says so
        self.side.lanes_panel.selection_changed.connect(self._on_lanes_panel_selection_changed)
        self.side.lanes_panel.remote_changed.connect(c.set_remote)
        self.compare.history.export_requested.connect(self.exports.ask_export_run)
        self.compare.history.delete_requested.connect(self._on_history_delete_requested)

    def _restore_state(self) -> None:
        self.side.model_panel.restore_state(self.settings)
        self.side.lanes_panel.restore_state(self.settings)
        self.compare.restore_state(self.settings)
        for key, restore in (("window/geometry", self.restoreGeometry), ("window/split_main", self.main_split.restoreState)):
            state = self.settings.state(key)
            if state is not None:
                restore(state)
        self.fit_screen()  # a geometry saved on a larger screen opens inside this one

    @Slot(bool)
    def _on_presentation_toggled(self, on: bool) -> None:
        """The presentation view hides what a room does not read (the toolbar, the History); the theme has made the
        fonts, the plots' ticks and the headline large."""
        for bar in self.findChildren(QToolBar):
            bar.setVisible(not on)
        box = self.compare.history.parentWidget()  # its "History" group in the Compare tab
        if box is not None:
            box.setVisible(not on)

    def fit_screen(self) -> None:
        """Keep the window inside the screen's available area (1024×700 included): never larger than it, never
        partly off it, so the map, the History and the status bar are on screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None or QGuiApplication.platformName() == "offscreen":  # no real screen: a picture's size
            return
        area = screen.availableGeometry()
        if area.width() < 200 or area.height() < 200:  # an offscreen platform's odd screen: nothing to fit
            return
        frame = self.frameGeometry().size() - self.geometry().size()  # the title bar and borders
        width = min(self.width(), area.width() - frame.width())
        height = min(self.height(), area.height() - frame.height())
        if self.minimumWidth() > width or self.minimumHeight() > height:
            self.setMinimumSize(min(self.minimumWidth(), width), min(self.minimumHeight(), height))
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        x = min(max(self.x(), area.left()), area.right() + 1 - width - frame.width())
        y = min(max(self.y(), area.top()), area.bottom() + 1 - height - frame.height())
        if (x, y) != (self.x(), self.y()):
            self.move(x, y)

    def save_state(self) -> None:
        """Every panel's part of the window state, for the next launch."""
        self.side.model_panel.save_state(self.settings)
        self.side.lanes_panel.save_state(self.settings)
        self.compare.save_state(self.settings)
        self.sweep.save_state()
        self.settings.set_state("window/geometry", self.saveGeometry())
        self.settings.set_state("window/split_main", self.main_split.saveState())
        self.settings.sync()

    def say(self, text: str, error: bool = False, about: str = "") -> None:
        """A message in the status bar; an error stays until the next message, or until what it is
        `about` ("model", "lanes") is valid again (gui/widgets/status_line.py)."""
        self.status.say(text, error, about)

    # ------------------------------------------------------------------ running (see gui/window/run_desk.py)

    @property
    def config(self) -> RunConfig | None:
        return self.app.config

    def start_run(self) -> LiveRun | None:
        return self.desk.start_run()

    def start_when_ready(self) -> None:
        self.desk.start_when_ready()

    @Slot(str)
    def _on_history_delete_requested(self, run_id: str) -> None:
        """Delete only when the user says so: the run's records go from the history, the map and the disk."""
        run = self.controller.run(run_id)
        what = f"the run of {local_time(run.started_at)}" if run is not None else f"run {run_id}"
        box = QMessageBox(QMessageBox.Icon.Question, "Delete run",
                          f"Delete {what}? Its points leave the crossover map and its autosaved files are removed; "
                          "export it first to keep a copy.", QMessageBox.StandardButton.Cancel, self)
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() is delete:
            self.delete_run(run_id)

    def delete_run(self, run_id: str) -> None:
        self.controller.delete_run(run_id)
        self.compare.history.remove_run(run_id)
        self.compare.map.remove_run(run_id)
        self.say(f"Deleted run {run_id}.")

    def report_what(self) -> str:
        """What File > Export report reports: the current tab's run, sweep or anatomy."""
        page = self.tabs.currentWidget()
        return "sweep" if page is self.sweep else "anatomy" if page is self.why else "run"

    def report_sources(self, target: Path) -> list[Path]:
        """Write what the current tab shows beside `target` (REPORT-run.csv, -sweep.csv or -anatomy.json, with
        their sidecars): the files the report reads and names. ExportError when there is nothing to report."""
        what, stem = self.report_what(), target.with_suffix("")
        if what == "sweep":
            if not self.sweep.view.rows:
                raise ExportError("no sweep to report: run a sweep or open one in the Sweep tab first")
            written = self.sweep.export_csv(f"{stem}-sweep.csv")
            if not written:
                raise ExportError("the sweep's files could not be written (the Sweep tab says why)")
            return [Path(written[0])]
        if what == "anatomy":
            points = self.why.points_for(self.config) or next(reversed(self.why.measured.values()), {})
            if not points:
                raise ExportError("no anatomy to report: press Measure why in the Why tab first")
            path = Path(f"{stem}-anatomy.json")
            atomic_write_text(path, json.dumps(json_clean(anatomy_json(list(points.values()))), indent=1) + "\n")
            return [path]
        live = self.compare.shown
        if live is None or not live.result.lanes:
            raise ExportError("no run to report: start a run, or choose one in the History")
        runs = self.answer_runs(live.result)
        lanes = {lane for run in runs for lane in run.lanes}
        csv_path, _ = export_runs(f"{stem}-run.csv", runs, self.controller.host(),
                                  {"prices": p} if (p := self.controller.prices_of(lanes)) else None)
        return [csv_path]

    def answer_runs(self, shown: RunResult) -> list[RunResult]:
        """The runs the window's answer rests on (every run whose points the findings hold, in the order they ran)
        and the run shown: what a report of the Compare tab reads, so that it says what the headline says, over
        the same widths."""
        ids = self.findings.run_ids
        runs = [run for run in self.controller.runs if run.run_id in ids or run.run_id == shown.run_id]
        return runs if any(run.run_id == shown.run_id for run in runs) else runs + [shown]

    def clear_compiled_cache(self) -> None:
        """File > Clear compiled cache: empty the JAX lanes' persistent compilation cache (not while anything runs:
        a lane may be writing to it)."""
        if self.desk.measuring():
            self.say("Wait until the run, sweep or anatomy in progress has ended: its lanes may be writing "
                     "compiled programs.", error=True)
            return
        folder = compile_cache_dir()
        files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
        size = sum(p.stat().st_size for p in files)
        try:
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.say(f"Cannot clear {folder}: {exc.strerror or exc}.", error=True)
            return
        self.say(f"Cleared the compiled cache: {len(files)} file(s), {size / 1e6:.1f} MB, from {folder}.")

    def reset_to_defaults(self) -> None:
        self.side.model_panel.set_config(WINDOW_DEFAULT)
        self.side.lanes_panel.reset_selection()
        self.side.lanes_panel.set_schedule(None)
        if not self.sweep.running:  # the Sweep form too (a saved model's batch sizes stayed, and timed 32 points)
            self.sweep.sweep_form.reset()
        self.say("Settings reset to their defaults.")

    # ------------------------------------------------------------------ controller and panel slots

    @Slot(object)
    def _on_controller_devices_discovered(self, options: list[LaneOption]) -> None:
        self.side.lanes_panel.set_options(options)
        self.host_label.setText(machine_text(options))
        if self.desk.start_after_discovery:
            self.desk.start_after_discovery = False
            self.desk.start_run()

    @Slot(str)
    def _on_controller_discovery_failed(self, reason: str) -> None:
        self.side.lanes_panel.set_options(self.controller.options)
        self.say(reason, error=True)

    @Slot(str)
    def _on_model_panel_input_adjusted(self, text: str) -> None:
        # The clamped value's own config_changed comes right after this sentence and would settle
        # it unseen: say it once that is through, so the user's next edit is what clears it.
        QTimer.singleShot(0, self, lambda: self.say(text, error=True, about="model"))

    def _on_findings_changed(self) -> None:
        """Points joined or left the findings (a run's segment, a ramp, a sweep, a refinement, a run deleted): every
        view says the answer now."""
        self.compare.findings_changed()
        self.sweep.view.findings_changed()

    @Slot()
    def _on_lanes_panel_selection_changed(self) -> None:
        self.app.set_lanes(self.side.lanes_panel.selected_specs())
        if self.side.lanes_panel.selected_specs():
            self.status.settle("lanes")
        if self._prestart and not self.controller.running:
            if self.isVisible():
                self.controller.prestart(self.side.lanes_panel.selected_specs())
            else:  # lanes importing a framework would compete with the window's first paint for the cores
                self._prestart_pending = True
        self.desk.update_controls()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if self._prestart_pending:
            self._prestart_pending = False
            QTimer.singleShot(PRESTART_AFTER_SHOWN_MS, self, self._prestart_now)

    def _prestart_now(self) -> None:
        if self._prestart and not self.controller.running and self.side.lanes_panel.selected_specs():
            self.controller.prestart(self.side.lanes_panel.selected_specs())

    # ------------------------------------------------------------------ restoring runs, closing

    def restore_runs(self, run_ids: list[str]) -> list[RunResult]:
        """Read autosaved runs back into the history and the map."""
        runs, problems = autosave.load_runs(run_ids)
        self.controller.add_runs(runs)
        self.compare.add_saved_runs(runs)
        if problems:
            self.say(" ".join(problems), error=True)
        else:
            self.say(f"Restored {fmt_count(len(runs), 'run')} from {autosave.autosave_dir()}.")
        return runs

    def open_profile_dialog(self) -> ProfileDialog:
        """Run > Measure a device profile: the dialog (one per window), with the lanes chosen here (this machine's:
        a remote lane is profiled on its own machine)."""
        if self.profile_dialog is None:
            lanes = [name for name in self.side.lanes_panel.selected_names() if "/" not in name and "@" not in name]
            self.profile_dialog = ProfileDialog(lanes, self.dialogs, self._add_profile_lanes, self)
        self.profile_dialog.show()
        self.profile_dialog.raise_()
        return self.profile_dialog

    def open_calibrate_dialog(self) -> CalibrateDialog:
        """Run > Calibrate the rule here: the dialog (one per window), offering this machine's chosen lanes."""
        if self.calibrate_dialog is None:
            lanes = [s.name for s in self.app.lanes if not s.host and not s.twin]
            self.calibrate_dialog = CalibrateDialog(lanes, self)
        self.calibrate_dialog.show()
        self.calibrate_dialog.raise_()
        return self.calibrate_dialog

    def _add_profile_lanes(self, profile: DeviceProfile) -> None:
        for lane in dict.fromkeys(x.lane for x in profile.lanes):
            self.compare.map.predicted.add(profile, lane)
        self.tabs.setCurrentWidget(self.compare)

    def _open_guide(self) -> bool:
        """Help > Guide: the guide's window page in the system's viewer, or where to find the guide."""
        page = guide_path()
        if page is None or not QDesktopServices.openUrl(QUrl.fromLocalFile(str(page))):
            self.status.say(f"The guide: {GUIDE_URL}" + (f" ({page})" if page else ""))
            return False
        return True

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        started = time.monotonic()
        self.save_state()
        if self.profile_dialog is not None:
            self.profile_dialog.shutdown()  # the profile command keeps the sweeps it measured
        if self.calibrate_dialog is not None:
            self.calibrate_dialog.shutdown()  # the sweeps that finished are counted and kept
        self.sweep.shutdown()
        self.why.shutdown()
        self.desk.model_file.shutdown()
        self.side.lanes_panel.shutdown()
        self.controller.shutdown()  # closes the lanes: a sweep thread still waiting on one ends now
        self.sweep.shutdown()
        self.theme.detach()
        self.close_seconds = time.monotonic() - started
        event.accept()
