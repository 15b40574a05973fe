"""The Sweep tab: time growing widths on the chosen lanes, find the crossover, fit and compare the cost model."""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable

from PySide6.QtCore import QThread, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ...core.files.findings import Findings
from ...core.files.noise import measured_noise, record_noise
from ...core.records import now_iso
from ...core.config import ConfigError, LaneSpec, RunConfig
from ...core.results import RunResult, by_batch_size
from ...core.study.ladder import ladder_heading, KnobSetting, ladder_lines, ladder_settings, rank_ladder, run_ladder
from ...core.paths import autosave_dir
from ...core.analysis.refinement import RefineTarget
from ...core.machine import HostInfo
from ...core.study.measured import Ledger, measured_here_since
from ...core.study.refined_sweep import along_batch, check_refinable, point_configs, run_refined_sweep
from ...core.study.saved import inspect_factory, inspecting_lane, with_factory
from ...core.engine.pool import LanePool
from ...core.study.sweep import (PointMeasured, SweepResult, SweepSpec, for_lanes, lane_points, rechecks, results_so_far,
                                 run_sweeps)
from ...core.files.sweeps.files import SweepFiles, run_rows, runs_behind
from ...core.files.sweeps.rows import SweepRow
from ...core.words.numbers import fmt_duration
from ..controller import cached_host_info
from ..widgets.file_dialogs import FileDialogs
from ..jobs import JobOutcome, JobRunner
from ..panels.lane_prices import LanePrices
from ..settings import AppSettings
from .form import PREFERRED_WIDTH, SweepForm
from .view import NO_SWEEP_YET, SweepView
from ..theme.scheme import status_style


def with_factory_widths(pool: LanePool, lanes: list[LaneSpec], specs: list[SweepSpec],
                        cancel: threading.Event) -> list[SweepSpec]:
    """`specs` with their model factory built and counted by a lane at every width they sweep (as the CLI's
    resolve_factory does before the first point): each point is timed with its own width's figures. A ConfigError
    for a width that cannot be built, or data that does not fit it; `specs` as they are without a factory."""
    factory = specs[0].base.model.factory
    if factory is None:
        return specs
    widths = [w for s in specs for w in s.widths]
    factory = inspect_factory(pool, inspecting_lane(lanes), factory, widths, cancel)
    for width in dict.fromkeys(widths):
        found = factory.at(width)
        if found is None:
            raise ConfigError(f"{factory.function}({width}) was not built: the sweep was stopped")
        problem = found.data_problem(specs[0].base.train.data)
        if problem:
            raise ConfigError(problem)
    return [dataclasses.replace(s, base=with_factory(s.base, factory)) for s in specs]


class SweepTab(QWidget):
    """Controls, picture, verdict and table of a width sweep; the window supplies lanes and the base model."""

    sweep_started = Signal()  # a sweep began: the window locks what would change it
    # list[SweepResult]: the sweep ended (finished or cancelled); empty on failure. object, not list: Signal(list)
    # would hand each slot a copy, converted through a QVariantList.
    sweep_ended = Signal(object)

    def __init__(self, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 base_config: Callable[[], RunConfig], busy: Callable[[], bool],
                 settings: AppSettings | None = None, prices: LanePrices | None = None,
                 dialogs: FileDialogs | None = None, findings: Findings | None = None,
                 parent: QWidget | None = None) -> None:
        """`dialogs`: the window's, so the tab's open and export dialogs start where its others last were;
        `findings`: the window's one answer per pair and kind of model, which a sweep measured here joins."""
        super().__init__(parent)
        self._settings = settings or AppSettings()
        self.view = SweepView(dialogs or FileDialogs(self._settings), prices, self._say, self._as_results,
                              findings if findings is not None else Findings())
        self._pool, self._lanes, self._base_config, self._busy = pool, lanes, base_config, busy
        self._runner = JobRunner("sweep", 100, self)
        self._runner.drained.connect(self._on_runner_drained)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        self._measured: list[PointMeasured] = []
        self._specs: list[SweepSpec] = []
        self._files: SweepFiles | None = None
        self.autosave_path = ""
        self._t0 = 0.0
        self.results: list[SweepResult] = []
        # Every point measured since the window opened (sweeps, ramps, sweep files written since), with its batches:
        # Refine takes a width measured before on the same lanes and settings instead of timing it again.
        self.ledger = Ledger()
        self._opened_at = time.time()
        self._ladder: list[KnobSetting] = []
        self._build()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.sweep_form = f = SweepForm(self._settings)
        f.run_button.clicked.connect(self.start)
        f.refine_button.clicked.connect(self.start_refine)
        f.ladder_button.clicked.connect(self.start_ladder)
        f.stop_button.clicked.connect(self.stop)
        layout = QHBoxLayout(self)
        left = QVBoxLayout()
        self.sweep_form.setMaximumWidth(PREFERRED_WIDTH)  # the picture and the table need the room
        left.addWidget(self.sweep_form)
        left.addStretch(1)
        layout.addLayout(left, 0)
        layout.addWidget(self.view, 1)

    def save_state(self) -> None:
        self.sweep_form.save()

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._runner.running

    def threads(self) -> list[QThread]:
        return self._runner.threads()

    def specs(self) -> list[SweepSpec]:
        """The sweep(s) the controls describe; raises ConfigError with a sentence for the user."""
        return self.sweep_form.specs(self._base_config())

    @Slot()
    def start(self) -> None:
        self._start(None)

    @Slot()
    def start_refine(self) -> None:
        """The sweep's widths, then more where the faster lane changes, until the answer is tight (core/study/refine.py)."""
        self._start(self.sweep_form.refine_target())

    @Slot()
    def start_ladder(self) -> None:
        """What would make the GPU win sooner: the sweep once per knob setting, ranked (core/study/ladder.py)."""
        self._start(None, ladder=True)

    def _start(self, target: RefineTarget | None, ladder: bool = False) -> None:
        if self.running or self._busy():
            return
        lanes = self._lanes()
        try:
            if not lanes:
                raise ConfigError("choose at least one lane in the Lanes panel")
            specs = [for_lanes(spec, lanes) for spec in self.specs()]
            if target is not None:
                check_refinable(lanes, specs)
            if ladder and specs[0].base.model.factory is not None:
                raise ConfigError("ranking knobs with your model factory is not built: sweep it along Widths")
            settings = ladder_settings(specs[0], lanes) if ladder else []
            specs = [s.spec for s in settings if not s.reason] or specs
        except ConfigError as exc:
            self._say(f"Cannot start the sweep: {exc}.", error=True)
            return
        self.save_state()
        coarse = point_configs(specs[0]) if target is not None else {}
        lent = len(self.ledger.lend(lanes, coarse))
        ledger = self.ledger.copy()  # the job thread's own: the window may add to this one meanwhile
        self._measured, self.results, self._specs = [], [], specs
        self._start_autosave(specs)
        self.view.empty_text = "Waiting for the first point…"
        self.view.set_rows([])
        total = lane_points(lanes, specs)
        self.sweep_form.start_progress(total, target)
        if lent:
            xs = "batch sizes" if along_batch(specs[0]) else "widths"
            self._say(f"Refining: {lent} of the {len(coarse)} {xs} were measured before on these "
                      "lanes with these settings and are taken as they are, not timed again…")
        else:
            again = max((rechecks(spec, lanes) for spec in specs), default=0) if target is None and not settings else 0
            last = {0: "", 1: " (the last: the middle point, again, for the run-to-run noise)",
                    2: " (the last two: points evenly spaced along the sweep, again, for the run-to-run noise)",
                    3: " (the last three: points evenly spaced along the sweep, again, for the run-to-run noise)"}
            self._say(f"Calibrating each lane, then {total} points, one at a time{', then refining' if target else ''}"
                      f"{last[again]}…")
        pool = self._pool()

        def work(cancel: threading.Event, put: Callable[[PointMeasured], None]) -> list[SweepResult]:
            if settings:
                return run_ladder(pool, settings, on_point=put, cancel=cancel)
            built = with_factory_widths(pool, lanes, specs, cancel)  # a factory's every width, before any point
            if cancel.is_set():
                return [SweepResult(spec, cancelled=True) for spec in specs]
            if target is not None:
                return [run_refined_sweep(pool, lanes, built[0], target, reuse=ledger, on_point=put, cancel=cancel)]
            return run_sweeps(pool, lanes, built, on_point=put, cancel=cancel)

        self._ladder = settings
        self._t0 = time.monotonic()
        self._runner.start(work)
        self.sweep_form.set_running(True)
        self.sweep_started.emit()

    def _start_autosave(self, specs: list[SweepSpec]) -> None:
        self.autosave_path = str(autosave_dir() / "sweeps" / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}.csv")
        try:
            (autosave_dir() / "sweeps").mkdir(parents=True, exist_ok=True)
            prices = self.view.overlays.prices_for(lane.name for lane in self._lanes())
            self._files = SweepFiles(self.autosave_path, cached_host_info(), specs, prices)
        except (OSError, ConfigError) as exc:
            self._files, self.autosave_path = None, ""
            self._say(f"Autosave is off for this sweep: {exc}", error=True)

    @Slot()
    def stop(self) -> None:
        if self.running:
            self._runner.cancel()
            self.sweep_form.progress_label.setText("Stopping after the point in progress…")

    def shutdown(self, timeout_ms: int = 1200) -> None:
        """Cancel and wait for the sweep (the window is closing); finished points stay in `results`
        and in the autosave. Call again after the lanes are closed: that ends a thread still waiting."""
        self._runner.shutdown(timeout_ms)
        self._runner.wait_stuck(timeout_ms)
        self._close_autosave()

    def _record_noise(self, outcome: JobOutcome) -> str:
        """A sweep that ended whole keeps its lanes' run-to-run noise for later runs here, as `sweep` does
        (core/files/noise.py): a sentence where it could not be kept, else ""."""
        if outcome.cancelled or outcome.error or not self.results or self._ladder:
            return ""
        base = self.results[0]
        _, why_not = record_noise(measured_noise([r.point() for r in base.rows], now_iso(), self.autosave_path,
                                                 base.spec.base.train.task))
        return f" Note: {why_not}." if why_not else ""

    def _close_autosave(self) -> None:
        if self._files is not None:
            self._files.close()
            if self._files.error:
                self._say(f"Autosave failed: {self._files.error}", error=True)
            self._files = None

    def _say(self, text: str, error: bool = False) -> None:
        self.sweep_form.progress_label.setStyleSheet(status_style(error))
        self.sweep_form.progress_label.setText(text)

    @Slot(list)
    def _on_runner_drained(self, points: list[PointMeasured]) -> None:
        for point in points:
            self._measured.append(point)
            if self._files is not None:
                self._files.add_point(point.rows, point.run)
            self.sweep_form.show_progress(point.done, point.total, time.monotonic() - self._t0)
        self.view.add_rows([row for point in points for row in point.rows])

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        self.results = list(outcome.result or self._as_results())
        for result in self.results:
            self.ledger.add(result.runs, result.calibration)
        if self._ladder:  # the answer to "what would make the GPU win sooner", under the verdict
            ranks = rank_ladder(self.results)
            self.view.notes = [ladder_heading(self._lanes(), ranks)] + ladder_lines(ranks, self._ladder)
        self._close_autosave()
        kept = self._record_noise(outcome)
        self.sweep_form.set_running(False)
        self.view.empty_text = "No point was measured." if not self.view.rows else NO_SWEEP_YET
        took = fmt_duration(time.monotonic() - self._t0)
        saved = f", saved to {self.autosave_path}" if self.autosave_path else ""
        if outcome.error:
            self._say(f"The sweep failed: {outcome.error}. {len(self.view.rows)} points measured are "
                      f"kept{saved}.", error=True)
        else:
            taken = sum(len(point.rows) for point in self._measured if point.reused)
            before = f" ({taken} of them taken as measured before, not timed again)" if taken else ""
            self._say(f"{'Stopped' if outcome.cancelled else 'Done'} after {took}: {len(self.view.rows)} points "
                      f"measured{before}{saved}.{kept}")
        self.view.redraw()
        self.sweep_ended.emit(self.results)

    # ------------------------------------------------------------------ files

    def open_csv(self, path: str) -> bool:
        """Show a saved sweep (not while one runs: its points would mix with the file's)."""
        if self.running:
            return False
        opened = self.view.open_csv(path)
        if opened:
            self._forget_sweep()
            self.view.redraw()  # without the forgotten sweep's refinement
            # Its points are lent to a refinement only if this machine measured them since the window opened.
            runs, host = runs_behind(path)
            self.ledger.add(measured_here_since(runs, host, HostInfo.from_json(cached_host_info()), self._opened_at))
        return opened

    def set_startable(self, ok: bool, why_not: str) -> None:
        """Whether a sweep, a refinement or the knob ladder can start now, and if not, why (the form's tooltips)."""
        self.sweep_form.set_startable(ok, why_not)

    def fit_model(self, saved: bool, factory: str | None) -> None:
        """Fit the form to the Model panel's model (SweepForm.fit_model)."""
        self.sweep_form.fit_model(saved, factory)

    def show_run(self, run: RunResult) -> bool:
        """Show a run measured in the window (a ramp) as the tab's sweep, to export or refine; not while a sweep
        runs. The form then describes it, and its points are lent to a refinement on the same lanes."""
        rows = run_rows(run)
        if not self.show_rows(rows):
            return False
        self.ledger.add([run])
        segments = [s for lane in run.lanes.values() for s in lane.segments]
        along = by_batch_size(segments)
        xs = tuple(dict.fromkeys(s.started.batch_size if along else s.started.widths[0]
                                 for s in sorted(segments, key=lambda s: s.index) if s.started.widths or along))
        train = run.config.train
        if len(xs) > 1:
            self.sweep_form.follow(xs, along, max(len(run.config.model.widths), 1),
                                   train.max_steps - train.warmup_steps if train.max_steps else None,
                                   train.max_seconds)
            self._say(f"Showing the ramp's {len(rows)} points; the form now describes it: Refine crossover refines "
                      "from them without timing them again.")
        return True

    def show_rows(self, rows: list[SweepRow]) -> bool:
        """Show points (a ramp's, read elsewhere) as the tab's sweep, to export; not while a sweep runs."""
        if self.running:
            return False
        self._forget_sweep()
        self.view.set_rows(rows)
        return True

    def _forget_sweep(self) -> None:
        """The tab shows other points now: the last sweep's results, specs and autosave are not theirs."""
        self._measured, self.results, self._specs, self.autosave_path = [], [], [], ""

    def export_csv(self, path: str) -> list[str]:
        return self.view.export_csv(path)

    def _as_results(self) -> list[SweepResult]:
        """What has been measured so far, as the engine's results (the final ones once it ended)."""
        if self.results:
            return self.results
        if not self._specs:  # a sweep opened from a file: its rows, without per-batch records
            rows = self.view.rows
            # A saved model's rows have no width (0, "as saved"): the spec names the widths there are, or none.
            widths = tuple(sorted({r.width for r in rows if r.width >= 1})) or (1,)
            return [SweepResult(SweepSpec(widths=widths), rows=list(rows))]
        return results_so_far(self._specs, self._measured)
