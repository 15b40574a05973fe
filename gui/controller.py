"""The controller: owns the lane pool, the run and discovery jobs, the live run, its autosave and the session's runs.

Data flows one way: `start_run()` → the conductor in a JobRunner thread → lane events into the
runner's queue → its drain timer (25 Hz, GUI thread) folds them into `live` and emits
`live_changed` → widgets draw. Nothing flows back but "cancel".
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Iterable, Mapping, Sequence

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..core.files import autosave
from ..core.json_data import JsonValue
from ..core.config import LaneSpec, RunConfig, Schedule
from ..core.analysis.costs import prices_of
from ..core.engine.devices import LaneOption, discover, host_info, unprobed_options
from ..core.files.atomic import ExportError
from ..core.files.live import BackgroundWriter, RunFiles
from ..core.records import LaneEvent, now_iso
from ..core.engine.remote.channel import RemoteSettings
from ..core.engine.pool import LanePool, conduct
from ..core.engine.conductor import RunControl
from ..core.results import RunResult, new_run_id
from .jobs import JobOutcome, JobRunner
from .live_run import LiveRun

DRAW_INTERVAL_MS = 40  # 25 Hz: smooth to the eye, and a batch never costs the GUI thread a repaint
RUN_STOP_WAIT_MS = 1200  # on close: lanes stop at their next batch end; slower ones are killed with the pool
LANE_CLOSE_TIMEOUT_S = 0.3  # an idle lane leaves at once; a busy or importing one is killed

DiscoverFn = Callable[[LanePool, threading.Event], list[LaneOption]]


@functools.lru_cache(maxsize=1)
def cached_host_info() -> dict[str, JsonValue]:
    """host_info() once per process: it asks nvidia-smi, which can take a moment where there is one."""
    return host_info()


def discover_lanes(pool: LanePool, stop: threading.Event) -> list[LaneOption]:
    """core.devices.discover; closing the window sets `stop`, which ends a probe in progress."""
    return discover(pool, cancel=stop)


class RunController(QObject):
    """Runs comparisons without blocking the window, and keeps what they measured."""

    # list[LaneOption]: every lane this machine offers, available or not (after the discovery thread ended).
    # object, not list: Signal(list) would hand each slot a copy, converted through a QVariantList.
    devices_discovered = Signal(object)
    discovery_failed = Signal(str)  # why GPUs could not be listed; the CPU lanes stay usable
    run_started = Signal(LiveRun)  # the run that just began; its lanes wait for their first events
    live_changed = Signal()  # the live run took in events; from the drain timer, at most 25 times a second
    # The run ended, completed or cancelled (a lane's failure is in its LaneResult); its thread has ended
    run_finished = Signal(RunResult)
    run_failed = Signal(str, str)  # run_id, reason: the run could not be carried out; what it measured is in `runs`
    autosave_failed = Signal(str)  # why the autosave folder could not be written

    def __init__(self, parent: QObject | None = None, *, discover_fn: DiscoverFn | None = None,
                 autosave_runs: bool = True) -> None:
        super().__init__(parent)
        self.pool = LanePool()
        self.options: list[LaneOption] = unprobed_options()
        self.runs: list[RunResult] = []
        self.live: LiveRun | None = None
        self._discover_fn = discover_fn or discover_lanes
        self._autosave = autosave_runs
        self._writer = BackgroundWriter("crossover-autosave")
        self._files: RunFiles | None = None  # the live run's autosave: records reach it within a second
        self.prices: Callable[[], Mapping[str, float]] = dict  # each lane's $/h, recorded with its runs
        self._control: RunControl | None = None
        self._closed = False
        self._runner = JobRunner("run", DRAW_INTERVAL_MS, self)
        self._runner.drained.connect(self._on_runner_drained)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        self._discovery = JobRunner("discovery", 200, self)
        self._discovery.job_ended.connect(self._on_discovery_job_ended)

    # ------------------------------------------------------------------ state

    @property
    def running(self) -> bool:
        """True from start_run() until the run's thread has ended."""
        return self._runner.running

    @property
    def stopping(self) -> bool:
        return self._runner.cancelled

    @property
    def discovering(self) -> bool:
        return self._discovery.running

    def threads(self) -> list[QThread]:
        """The worker threads alive now (for tests and for the close)."""
        return self._runner.threads() + self._discovery.threads()

    # ------------------------------------------------------------------ devices

    def discover_devices(self) -> None:
        """List the GPUs in the background; `devices_discovered` comes once the thread has ended."""
        if self.discovering or self._closed:
            return
        pool, find = self.pool, self._discover_fn

        def work(cancel: threading.Event) -> list[LaneOption]:
            cached_host_info()  # here rather than in the GUI thread at the first export
            return find(pool, cancel)

        self._discovery.start_quiet(work)

    def set_remote(self, settings: RemoteSettings) -> None:
        """How lanes on other machines are reached (each host's Python), from their next start."""
        self.pool.remote = settings

    def prestart(self, specs: list[LaneSpec]) -> None:
        """Start these lanes' processes now, so the first run doesn't wait for a framework import."""
        if self.running or self._closed:
            return
        for spec in specs:
            self.pool.get(spec).start()

    def lane_up(self, name: str) -> bool | None:
        """Whether the lane `name` has loaded its framework; None where no such lane was started. Read, never waited
        on: the lane's own thread sets it."""
        return next((lane.up for lane in self.pool.lanes() if lane.name == name), None)

    @Slot(JobOutcome)
    def _on_discovery_job_ended(self, outcome: JobOutcome) -> None:
        if self._closed or outcome.cancelled:
            return
        if outcome.error:
            self.discovery_failed.emit(f"GPUs could not be listed: {outcome.error}")
            return
        self.options = outcome.result
        self.devices_discovered.emit(self.options)

    # ------------------------------------------------------------------ runs

    def start_run(self, config: RunConfig, specs: list[LaneSpec], schedule: Schedule,
                  plan: Sequence[RunConfig] = ()) -> LiveRun:
        """Begin a comparison (or a ramp through `plan`) in a worker thread; returns at once with the live run."""
        if self.running:
            raise RuntimeError("a run is already in progress")
        if self._closed:
            raise RuntimeError("the controller has been shut down")
        run_id = new_run_id()
        live = self.live = LiveRun(run_id, plan[0] if plan else config, specs, schedule, now_iso(), plan)
        pool, lanes, control = self.pool, list(specs), RunControl()
        self._control = control
        self._files = None
        if self._autosave:
            try:
                autosave.autosave_dir().mkdir(parents=True, exist_ok=True)
                priced = self.prices_of(spec.name for spec in specs)
                self._files = RunFiles(autosave.run_path(run_id), cached_host_info(), writer=self._writer,
                                       claim=False, extra={"autosave": True, **({"prices": priced} if priced else {})})
                self._files.begin([live.result])
            except (OSError, ExportError) as exc:
                self.autosave_failed.emit(str(exc))

        def work(_cancel: threading.Event, put: Callable[[LaneEvent], None]) -> None:
            # The events are folded once, into `live`, on the GUI thread as they are drained.
            conduct(pool, lanes, tuple(plan) or (config,), schedule, run_id, put, control)

        self._runner.start(work, control.cancel)
        self.run_started.emit(live)
        return live

    def stop(self) -> None:
        """Cancel the run: lanes stop at their next batch end, or are killed 1 s later."""
        self._runner.cancel()

    def switch_model(self, config: RunConfig) -> bool:
        """Go on with this model while the run trains (each lane at its next batch); False when none runs."""
        if not self.running or self._runner.cancelled or self._control is None:
            return False
        self._control.switch(config)
        return True

    @Slot(list)
    def _on_runner_drained(self, events: list[LaneEvent]) -> None:
        live = self.live
        if live is None or not live.apply(events):
            return
        if self._files is not None:
            self._files.take([e for e in events if getattr(e, "run_id", None) == live.run_id], [live.result])
        if self._writer.error:
            self.autosave_failed.emit(self._writer.error)
            self._writer.error = ""
        self.live_changed.emit()

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        if self._closed or self.live is None:
            return
        final = self._finish(outcome)
        self.live_changed.emit()
        if outcome.error:
            self.run_failed.emit(final.run_id, outcome.error)
        else:
            self.run_finished.emit(final)

    def _finish(self, outcome: JobOutcome | None, closing: str = "") -> RunResult:
        live = self.live
        assert live is not None  # called only while there is a live run to finish
        failure = (outcome.error if outcome is not None else "") or closing
        final = live.finish(failure)
        self.runs.append(final)
        if self._files is not None:
            try:
                self._files.finish([final])
            except ExportError as exc:
                self.autosave_failed.emit(str(exc))
            self._files = None
        return final

    # ------------------------------------------------------------------ the session's runs

    def host(self) -> dict[str, JsonValue]:
        return cached_host_info()

    def prices_of(self, lanes: Iterable[str]) -> dict[str, float]:
        """The $/h of those of `lanes` that have one (what a run's sidecar records)."""
        return prices_of(lanes, self.prices())

    def add_runs(self, runs: list[RunResult]) -> None:
        """Runs read back from the autosave folder join this session's history."""
        known = {r.run_id for r in self.runs}
        self.runs.extend(r for r in runs if r.run_id not in known)

    def run(self, run_id: str) -> RunResult | None:
        return next((r for r in self.runs if r.run_id == run_id), None)

    def delete_run(self, run_id: str) -> None:
        """Forget a run, here and in the autosave folder."""
        self.runs = [r for r in self.runs if r.run_id != run_id]
        autosave.delete_run(run_id)

    # ------------------------------------------------------------------ closing

    def shutdown(self) -> None:
        """Stop everything within about 2.5 s: cancel the run, save it, close every lane, end the threads."""
        if self._closed:
            return
        self._closed = True
        self._discovery.cancel()
        outcome = self._runner.shutdown(RUN_STOP_WAIT_MS) if self.running else None
        live = self.live
        if live is not None and not live.finished:
            self._finish(outcome, "the window was closed during the run")
        self.pool.close(LANE_CLOSE_TIMEOUT_S)  # also ends a probe in progress
        self._discovery.shutdown(1000)
        for runner in (self._runner, self._discovery):
            runner.wait_stuck(1000)
        self.pool.close(LANE_CLOSE_TIMEOUT_S)  # a probe that started during the first close
        self._writer.close(5.0)
