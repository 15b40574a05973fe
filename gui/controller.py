"""The controller: owns the lane pool, the run and discovery QThreads, the event queue and the session's runs.

Data flows one way: `start_run()` → a RunWorker in its QThread → lane events into a SimpleQueue →
the drain timer (25 Hz, GUI thread) folds them into `live` and emits `live_changed` → widgets draw.
Nothing flows back but "cancel" (a threading.Event).
"""
from __future__ import annotations

import datetime as _dt
import queue
import threading
import time
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from crossover_lab.core.config import LaneSpec, RunConfig
from crossover_lab.core.devices import LaneOption, unprobed_options
from crossover_lab.core.export import ExportError
from crossover_lab.core.session import LanePool, RunResult, new_run_id
from crossover_lab.gui import autosave
from crossover_lab.gui.live import LiveRun
from crossover_lab.gui.workers import DiscoverFn, DiscoveryWorker, RunWorker, cached_host_info

DRAW_INTERVAL_MS = 40  # 25 Hz: smooth to the eye, and a batch never costs the GUI thread a repaint
AUTOSAVE_INTERVAL_S = 10.0  # a crash mid-run loses at most this much (written from a background thread)
RUN_STOP_WAIT_MS = 1200  # on close: lanes stop at their next batch end; slower ones are killed with the pool
LANE_CLOSE_TIMEOUT_S = 0.3  # an idle lane leaves at once; a busy or importing one is killed


class RunController(QObject):
    """Runs comparisons without blocking the window, and keeps what they measured."""

    # list[LaneOption]: every lane this machine offers, available or not (after the discovery thread ended)
    devices_discovered = Signal(object)
    discovery_failed = Signal(str)  # why GPUs could not be listed; the CPU lanes stay usable
    run_started = Signal(object)  # LiveRun: the run that just began; its lanes wait for their first events
    live_changed = Signal()  # the live run took in events; from the drain timer, at most 25 times a second
    # RunResult: the run ended, completed or cancelled (a lane's failure is in its LaneResult); its thread has ended
    run_finished = Signal(object)
    run_failed = Signal(str, str)  # run_id, reason: the run could not be carried out; what it measured is in `runs`
    autosave_failed = Signal(str)  # why the autosave folder could not be written

    def __init__(self, parent: QObject | None = None, *, discover_fn: DiscoverFn | None = None,
                 autosave_runs: bool = True) -> None:
        super().__init__(parent)
        self.pool = LanePool()
        self.options: list[LaneOption] = unprobed_options()
        self.runs: list[RunResult] = []
        self.live: LiveRun | None = None
        self.discovering = False
        self._discover_fn = discover_fn
        self._autosave = autosave_runs
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self._timer = QTimer(self)
        self._timer.setInterval(DRAW_INTERVAL_MS)
        self._timer.timeout.connect(self._on_drain_timer_timeout)
        self._cancel: threading.Event | None = None
        self._run: tuple[QThread, RunWorker] | None = None
        self._run_outcome: tuple[RunResult | None, str] = (None, "")
        self._discovery: tuple[QThread, DiscoveryWorker] | None = None
        self._discovered: list[LaneOption] | None = None
        self._stop_discovery = threading.Event()
        self._last_autosave = 0.0
        self._saver = autosave.BackgroundSaver()
        self._closed = False
        self._stuck: list[tuple[QThread, QObject]] = []

    # ------------------------------------------------------------------ state

    @property
    def running(self) -> bool:
        """True from start_run() until the run's thread has ended."""
        return self._run is not None

    @property
    def stopping(self) -> bool:
        return self.running and self._cancel is not None and self._cancel.is_set()

    def threads(self) -> list[QThread]:
        """The worker threads alive now (for tests and for the close)."""
        pairs = [self._run, self._discovery, *self._stuck]
        return [pair[0] for pair in pairs if pair is not None and pair[0].isRunning()]

    # ------------------------------------------------------------------ devices

    def discover_devices(self) -> None:
        """List the GPUs in the background; `devices_discovered` comes once the thread has ended."""
        if self._discovery is not None or self._closed:
            return
        thread = QThread()
        thread.setObjectName("crossover-discovery")
        worker = DiscoveryWorker(self.pool, self._stop_discovery, self._discover_fn)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.devices_discovered.connect(self._on_discovery_devices_discovered)
        worker.discovery_failed.connect(self._on_discovery_failed)
        thread.finished.connect(self._on_discovery_thread_finished)
        self._discovery = (thread, worker)
        self.discovering = True
        thread.start()

    def prestart(self, specs: list[LaneSpec]) -> None:
        """Start these lanes' processes now, so the first run doesn't wait for a framework import."""
        if self.running or self._closed:
            return
        for spec in specs:
            self.pool.get(spec).start()

    @Slot(object)
    def _on_discovery_devices_discovered(self, options: list[LaneOption]) -> None:
        self._discovered = options

    @Slot(str)
    def _on_discovery_failed(self, reason: str) -> None:
        if not self._closed:
            self.discovery_failed.emit(reason)

    @Slot()
    def _on_discovery_thread_finished(self) -> None:
        if self._discovery is None:
            return
        self._discovery[0].wait()
        self._discovery = None  # Python owns thread and worker (no parent): this deletes them
        self.discovering = False
        if self._discovered is not None and not self._closed:
            self.options = self._discovered
            self.devices_discovered.emit(self.options)

    # ------------------------------------------------------------------ runs

    def start_run(self, config: RunConfig, specs: list[LaneSpec], schedule: str) -> LiveRun:
        """Begin a comparison in a worker thread; returns at once with the live run."""
        if self.running:
            raise RuntimeError("a run is already in progress")
        if self._closed:
            raise RuntimeError("the controller has been shut down")
        run_id = new_run_id()
        self._cancel = threading.Event()
        started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
        self.live = LiveRun(run_id, config, specs, schedule, started_at)
        self._run_outcome = (None, "")
        thread = QThread()
        thread.setObjectName(f"crossover-run-{run_id}")
        worker = RunWorker(self.pool, list(specs), config, schedule, run_id, self._events.put, self._cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.run_finished.connect(self._on_worker_run_finished)
        worker.run_failed.connect(self._on_worker_run_failed)
        thread.finished.connect(self._on_run_thread_finished)
        self._run = (thread, worker)
        self._last_autosave = time.monotonic()
        thread.start()
        self._timer.start()
        self.run_started.emit(self.live)
        return self.live

    def stop(self) -> None:
        """Cancel the run: lanes stop at their next batch end, or are killed 1 s later."""
        if self._cancel is not None:
            self._cancel.set()

    def _drain(self) -> bool:
        events = []
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                break
        return bool(events) and self.live is not None and self.live.apply(events)

    @Slot()
    def _on_drain_timer_timeout(self) -> None:
        if self._drain():
            self.live_changed.emit()
        if self.running and self._autosave and time.monotonic() - self._last_autosave >= AUTOSAVE_INTERVAL_S:
            self._last_autosave = time.monotonic()
            self._saver.save(self.live.result, self.host())
        if self._saver.error:
            self.autosave_failed.emit(self._saver.error)
            self._saver.error = ""

    @Slot(object)
    def _on_worker_run_finished(self, result: RunResult) -> None:
        self._run_outcome = (result, "")

    @Slot(str)
    def _on_worker_run_failed(self, reason: str) -> None:
        self._run_outcome = (None, reason)

    @Slot()
    def _on_run_thread_finished(self) -> None:
        if self._run is None or self._closed:
            return
        self._run[0].wait()
        self._run = None  # Python owns thread and worker (no parent): this deletes them
        self._timer.stop()
        self._drain()
        result, failure = self._run_outcome
        final = self.live.finish(result, failure)
        self.runs.append(final)
        self._save(final)
        self.live_changed.emit()
        if result is None:
            self.run_failed.emit(final.run_id, failure or "the run ended without a result")
        else:
            self.run_finished.emit(final)

    # ------------------------------------------------------------------ the session's runs

    def host(self) -> dict[str, Any]:
        return cached_host_info()

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

    def _save(self, result: RunResult) -> None:
        """The final save of a run, in this thread, after any periodic one still writing."""
        if not self._autosave:
            return
        self._saver.wait()
        try:
            autosave.save_run(result, self.host())
        except ExportError as exc:
            self.autosave_failed.emit(str(exc))

    # ------------------------------------------------------------------ closing

    def shutdown(self) -> None:
        """Stop everything within about 2.5 s: cancel the run, save it, close every lane, end the threads."""
        if self._closed:
            return
        self._closed = True
        self._stop_discovery.set()
        self.stop()
        self._timer.stop()
        if self._run is not None:
            thread, worker = self._run
            thread.wait(RUN_STOP_WAIT_MS)
            self._drain()
            if self.live is not None and not self.live.finished:
                result = worker.result if not thread.isRunning() else None
                failure = worker.failure or "the window was closed during the run"
                final = self.live.finish(result, "" if result else failure)
                self.runs.append(final)
                self._save(final)
        self.pool.close(LANE_CLOSE_TIMEOUT_S)  # also ends a probe in progress
        for thread in self.threads():
            thread.wait(1000)
        self.pool.close(LANE_CLOSE_TIMEOUT_S)  # a probe that started during the first close
        # Never drop a running QThread's last reference: Qt would abort the process.
        self._stuck += [pair for pair in (self._run, self._discovery) if pair is not None and pair[0].isRunning()]
        self._run = self._discovery = None
