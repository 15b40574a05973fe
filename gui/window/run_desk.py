"""Starting and stopping what the window measures (a run, a ramp, a sweep), and which controls may be used meanwhile.

The window composes the panels; this class decides, from the controller's and the Sweep tab's
lifecycle signals, what is allowed now and what the status bar says about it.
"""
from __future__ import annotations

from enum import Enum
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QMessageBox

from ...core.config import ConfigError, FactoryModel, LaneSpec, RunConfig, Schedule, parse_int_list
from ...core.study.saved import with_factory
from ...core.results import RunResult
from ...core.study.sweep import SweepResult, parse_sweep_widths, ramp_plan
from ...core.engine.devices import LaneOption, memory_problem
from ...core.words.run import run_outcome
from ..app_model import AppModel, Change
from .actions import Actions
from ..compare.tab import CompareTab
from ..controller import RunController
from ..live_run import LiveRun
from ..compare.live_plot import SCHEDULE_WORDS
from .live_switch import LiveSwitch
from .model_file import ModelFileOpener
from ..panels.side import SidePanel
from ..widgets.range_spin import commit_typing
from ..widgets.tips import say_why_not
from ..widgets.status_line import StatusLine
from ..sweep.tab import SweepTab
from ..why.tab import WhyView
from ...core.plurals import plural


class Holder(str, Enum):
    """What can hold the lanes: one at a time, and everything that would start another asks `holders()`."""

    RUN = "a run"
    SWEEP = "a sweep"
    WHY = "the Why tab's study"
    PREPARING = "a model factory's widths being built for a run"
    MODEL_FILE = "your model file being read"


class RunDesk(QObject):
    """Start, Ramp and Stop for the window; `config` is the model panel's last valid configuration. It owns the
    answer to "who holds the lanes" (`holders`, `lanes_busy`), which every job asks before it starts."""

    def __init__(self, app: AppModel, controller: RunController, side: SidePanel, compare: CompareTab, sweep: SweepTab, why: WhyView,
                 actions: Actions, status: StatusLine, on_sweep_tab: Callable[[], bool],
                 save_state: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller, self.side, self.compare, self.sweep, self.actions = controller, side, compare, sweep, actions
        self.why = why
        self.status, self.say = status, status.say
        self._on_sweep_tab, self._save_state = on_sweep_tab, save_state
        self.app = app
        self.start_after_discovery = False
        self.ramp_after_discovery: str | None = None  # --ramp's widths, while discovery may change the lanes
        self.preparing = False  # a lane builds the model factory's widths a run or ramp will time, before it starts
        self.live_switch = LiveSwitch(app, side.model_panel, controller, status.say, self)
        self.ask: Callable[[str], bool] = self._ask  # a question with Yes and No; tests answer it themselves
        self.model_file = ModelFileOpener(side.model_panel, lambda: controller.pool, lambda: list(self.app.lanes),
                                          lambda: self.lanes_busy(Holder.MODEL_FILE, Holder.PREPARING),
                                          status.say, self)
        c = controller
        c.run_started.connect(self._on_controller_run_started)
        c.run_finished.connect(self._on_controller_run_finished)
        c.run_failed.connect(self._on_controller_run_failed)
        # Queued: the window's own slot shows the discovered lanes first, and the ramp runs on those.
        c.devices_discovered.connect(self._on_controller_devices_discovered, Qt.ConnectionType.QueuedConnection)
        app.subscribe(lambda _: self._on_config_changed(), Change.CONFIG)
        side.ramp_requested.connect(self.start_ramp)
        sweep.sweep_started.connect(self._on_sweep_started)
        sweep.sweep_ended.connect(self._on_sweep_ended)
        for signal in (why.measure_started, why.measure_ended):  # the Why tab's measurement holds the lanes too
            signal.connect(lambda *_: self.update_controls())
        sweep.sweep_form.along.currentIndexChanged.connect(lambda *_: self.update_controls())  # greys Widths, Layers
        why.measure_ended.connect(lambda *_: self._lanes_free())

    def holders(self) -> list[Holder]:
        """Whatever holds the lanes now (at most one, but a reader never assumes so)."""
        held = {Holder.RUN: self.controller.running, Holder.SWEEP: self.sweep.running, Holder.WHY: self.why.running,
                Holder.PREPARING: self.preparing, Holder.MODEL_FILE: self.model_file.running}
        return [holder for holder, holding in held.items() if holding]

    def lanes_busy(self, *asking: Holder) -> bool:
        """Whether something other than `asking` holds the lanes: what a job asks before it starts."""
        return any(holder not in asking for holder in self.holders())

    def measuring(self) -> bool:
        """A run, a sweep or a Why study measures now (a busy machine is said while one does)."""
        return any(h in (Holder.RUN, Holder.SWEEP, Holder.WHY) for h in self.holders())

    def _ask(self, text: str) -> bool:
        window = self.side.window()
        answer = QMessageBox.question(window, "Not enough memory", text,
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    # ------------------------------------------------------------------ starting and stopping

    def _ready(self) -> tuple[RunConfig, list[LaneSpec]] | None:
        """The configuration and the chosen lanes, if a run can start now; else None, and the status bar says why."""
        commit_typing()  # F5 with the cursor still in a width box: the width typed, not the one before it
        if self.lanes_busy(Holder.MODEL_FILE):  # a model file being read goes on; a run waits for its figures below
            return None
        specs = list(self.app.lanes)
        if self.config is None:
            self.say(f"Cannot start: {self.side.model_panel.problem()}.", error=True, about="model")
            return None
        if not specs:
            self.say("Cannot start: choose at least one lane.", error=True, about="lanes")
            return None
        return self.config, specs

    def _fits(self, configs: list[RunConfig], specs: list[LaneSpec]) -> bool:
        """Whether to start: yes when the largest model fits this machine's memory on its CPU lanes, else what the
        user answers when asked (the lanes could take the machine's memory, and the window with it)."""
        problem = memory_problem(configs, specs)
        if not problem:
            return True
        if self.ask(f"The {problem[:1].lower()}{problem[1:]}.\n\nStart anyway? The lanes may run out of memory; "
                    "the window stays, and what was measured is kept."):
            return True
        self.say(f"Not started: {problem}.", error=True, about="model")
        return False

    def start_run(self) -> LiveRun | None:
        """Start the configured run on the chosen lanes (or the sweep, on its tab); the status bar says why not."""
        if self._on_sweep_tab():
            commit_typing()
            self.sweep.start()
            return None
        ready = self._ready()
        if ready is None:
            return None
        config, specs = ready
        return self._start(config, specs, ())

    def _start(self, config: RunConfig, specs: list[LaneSpec], plan: Sequence[RunConfig]) -> LiveRun | None:
        """Start `config` (or a ramp through `plan`) once it fits; a model factory's widths the run will time are
        built and counted by a lane first, off the GUI thread (then the run starts, and None is returned now)."""
        timed = list(plan) or [config]
        factory = config.model.factory
        if factory is not None and (self.model_file.running or any(c.model.figures is None for c in timed)):
            self.preparing = True
            self.update_controls()
            self.model_file.build(factory, [c.model.widths[0] for c in timed],
                                  lambda found, error: self._on_factory_built(config, specs, plan, found, error))
            return None
        if self.model_file.running:  # a lane builds a factory's width: a run beside it would share that lane
            self.say("Wait a moment: a lane is building your model; start again once it has.", error=True)
            return None
        if not self._fits(timed, specs):
            return None
        if config.train.arrival_rate is not None and plan:
            self.say("A ramp at a rate is not built: sweep the rates with `sweep --task predict --arrival-rates …`, "
                     "or run one rate.", error=True)
            return None
        self._save_state()
        # Requests at a rate are served by one lane at a time: a lane's requests would queue while another had its turn.
        schedule = Schedule.SEQUENTIAL if config.train.arrival_rate is not None else self.side.lanes_panel.schedule()
        return self.controller.start_run(config, specs, schedule, plan)

    def _on_factory_built(self, config: RunConfig, specs: list[LaneSpec], plan: Sequence[RunConfig],
                          found: FactoryModel | None, error: str) -> None:
        """The widths a run or ramp will time are built (or could not be): start it with each one's own figures."""
        self.preparing = False
        self.update_controls()
        if found is None:
            self.say(f"Not started: {error}.", error=True, about="model")
            return
        config, plan = with_factory(config, found), tuple(with_factory(c, found) for c in plan)
        for c in plan or (config,):
            figures = c.model.figures
            problem = "not built" if figures is None else figures.data_problem(c.train.data)
            if problem:
                self.say(f"Not started: {problem}.", error=True, about="model")
                return
        self._start(config, specs, plan)

    @Slot()
    def start_ramp(self, typed: str | bool | None = None) -> LiveRun | None:
        """One run stepping every lane through the ramp's widths (each hidden layer that wide), or through its
        batch sizes at the model's widths (Ramp batch sizes, and always for a saved model). `typed`: the ramp's
        field as the user typed it ("16,64,256"), or --ramp's; read here, where a mistake is said."""
        text = typed if isinstance(typed, str) else self.side.ramp_widths.text()
        ready = self._ready()
        if ready is None:
            return None
        config, specs = ready
        along_batch = self.side.ramp_along() == "batch"
        if config.model.saved is not None and not along_batch:
            self.say("Cannot ramp: a saved model has no width to step through; choose Ramp batch sizes.", error=True)
            return None
        try:
            plan = ramp_plan(config, (), batch_sizes=parse_int_list(text, "batch size")) if along_batch else \
                ramp_plan(config, parse_sweep_widths(text))
        except ConfigError as exc:
            self.say(f"Cannot ramp: {exc}.", error=True)
            return None
        return self._start(config, specs, plan)

    def start_when_ready(self, ramp: str | None = None) -> None:
        """Start a run (or a ramp through `ramp`'s widths) now, or once discovery is done when it may change
        the lanes (--run, --ramp)."""
        lanes = self.side.lanes_panel
        if self.controller.discovering and (lanes.wanted_names() is None or lanes.pending()):
            # The default may become CPU against a GPU.
            if ramp is None:
                self.start_after_discovery = True
            else:
                self.ramp_after_discovery = ramp
        elif ramp is None:
            self.start_run()
        else:
            self.start_ramp(ramp)

    def stop(self) -> None:
        if self.preparing:  # a lane builds what the run would time: the run does not start
            self.model_file.stop_builds()
        self.why.stop()
        if self.sweep.running:
            self.sweep.stop()
        if self.controller.running:
            self.controller.stop()
            self.say("Stopping… lanes end at their next batch, or are stopped within a second.")
            self.update_controls()

    def update_controls(self) -> None:
        holders = self.holders()
        sweeping = Holder.SWEEP in holders or Holder.WHY in holders  # both hold the lanes; Stop ends either
        running = bool({Holder.RUN, Holder.SWEEP, Holder.WHY, Holder.PREPARING} & set(holders))
        ready = self.config is not None and bool(self.app.lanes)
        why_not = ("" if not running and ready else
                   "A run or a sweep is in progress: Stop (Esc) ends it." if running else
                   "Choose at least one lane that can run (Lanes panel)." if self.config is not None else
                   "The model has a setting to put right first (the status bar says which).")
        for action in (self.actions.start, self.actions.ramp):
            action.setEnabled(not running and ready)
            say_why_not(action, why_not)  # a disabled control says why
        self.side.set_startable(not running and ready, why_not)
        self.sweep.set_startable(not running and ready, why_not)
        saved = self.config is not None and self.config.model.saved is not None
        factory = self.config.model.factory if self.config is not None else None
        self.sweep.fit_model(saved, factory.function if factory is not None else None)
        self.side.fit_model(saved, running)
        # The model stays open while a run trains (a change goes to it live); not while a sweep does.
        self.side.model_panel.setEnabled(not sweeping)
        self.side.lanes_panel.setEnabled(not running)
        stoppable = sweeping or (running and not self.controller.stopping)
        self.actions.stop.setEnabled(stoppable)
        self.side.stop_button.setEnabled(stoppable)
        self.actions.reset.setEnabled(not running)

    # ------------------------------------------------------------------ what happened

    @Slot(LiveRun)
    def _on_controller_run_started(self, live: LiveRun) -> None:
        self.compare.show_run(live)
        lanes = ", ".join(live.lanes)
        if len(live.lanes) > 1:
            lanes += f" ({SCHEDULE_WORDS[live.result.schedule]})"
        if len(live.plan) > 1:
            widths = ", ".join(str(c.model.widths[0]) for c in live.plan)
            self.say(f"Ramping {lanes} through widths {widths}… (Esc stops)")
        else:
            self.say(f"Running {live.config.model.label()} on {lanes}; change a width to change the model as it "
                     "trains (Esc stops).")
        self.update_controls()

    def _lanes_free(self) -> None:
        """What measured has ended: the model factory's width that waited for the lanes is built now."""
        if not self.measuring():
            self.side.model_panel.lanes_free()

    @Slot(RunResult)
    def _on_controller_run_finished(self, result: RunResult) -> None:
        added = self.compare.run_ended(result)
        self.say(*run_outcome({name: lane.status for name, lane in result.lanes.items()},
                              {name: lane.failure for name, lane in result.lanes.items()}, added))
        if any(len(lane.segments) > 1 for lane in result.lanes.values()):
            self.sweep.show_run(result)  # a ramp is a demo-sized sweep: there to export, or to refine from
        self.update_controls()
        self._lanes_free()

    @Slot(str, str)
    def _on_controller_run_failed(self, run_id: str, reason: str) -> None:
        self.compare.run_ended(self.controller.run(run_id))
        self.say(f"The run failed: {reason}", error=True)
        self.update_controls()
        self._lanes_free()

    @Slot(object)
    def _on_controller_devices_discovered(self, _options: list[LaneOption]) -> None:
        if self.ramp_after_discovery is not None:
            typed, self.ramp_after_discovery = self.ramp_after_discovery, None
            self.start_ramp(typed)

    @property
    def config(self) -> RunConfig | None:
        """The model panel's last valid configuration (the app model's), None while a setting is invalid."""
        return self.app.config

    def _on_config_changed(self) -> None:
        config = self.app.config
        if config is None:
            problem = self.app.problem or self.side.model_panel.problem()
            self.say(f"{problem[:1].upper()}{problem[1:]}.", error=True, about="model")
        else:
            self.status.settle("model")
            self.why.set_task(config.train.task)
        self.update_controls()

    @Slot()
    def _on_sweep_started(self) -> None:
        self.say("Sweeping… lanes run one after another (Esc stops after the point in progress).")
        self.update_controls()

    @Slot(object)
    def _on_sweep_ended(self, results: list[SweepResult]) -> None:
        # What the tab's table, progress and last sentence count: every measurement, a point measured again once
        # more (a sweep's results keep one pooled row for it, a refinement's a row per measurement).
        points = len(self.sweep.view.rows)
        self.say(f"Sweep ended: {points} {plural(points, 'point')} measured.")
        self.update_controls()
        self._lanes_free()
