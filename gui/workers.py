"""The QObjects that live in worker QThreads: one runs a comparison, one discovers devices.

They never touch widgets. Per-batch events go into the controller's queue (`put`), drawn by
its timer; only lifecycle signals cross to the GUI thread, named in the past tense.
"""
from __future__ import annotations

import functools
import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from crossover_lab.core.config import ConfigError, LaneSpec, RunConfig
from crossover_lab.core.devices import LaneOption, discover, host_info
from crossover_lab.core.session import LanePool, RunResult, run_comparison

DiscoverFn = Callable[[LanePool, threading.Event], list[LaneOption]]


@functools.lru_cache(maxsize=1)
def cached_host_info() -> dict[str, Any]:
    """host_info() once per process: it asks nvidia-smi, which can take a moment where there is one."""
    return host_info()


def discover_lanes(pool: LanePool, stop: threading.Event) -> list[LaneOption]:
    """core.devices.discover; closing the window sets `stop`, which ends a probe in progress."""
    return discover(pool, cancel=stop)


class DiscoveryWorker(QObject):
    """Asks each installed backend, in a lane process, which GPUs it can use."""

    devices_discovered = Signal(object)  # list[LaneOption]: every lane the machine offers, available or not
    discovery_failed = Signal(str)  # a sentence: why the GPUs could not be listed (CPU lanes still work)

    def __init__(self, pool: LanePool, stop: threading.Event, discover_fn: DiscoverFn | None = None) -> None:
        super().__init__()
        self._pool, self._stop = pool, stop
        self._discover = discover_fn or discover_lanes

    @Slot()
    def run(self) -> None:
        try:
            cached_host_info()  # here rather than in the GUI thread at the first export
            options = self._discover(self._pool, self._stop)
        except Exception as exc:  # a probe broken by a close, or a backend that fails oddly
            if not self._stop.is_set():
                traceback.print_exc()
                self.discovery_failed.emit(f"GPUs could not be listed: {type(exc).__name__}: {exc}")
        else:
            if not self._stop.is_set():
                self.devices_discovered.emit(options)
        finally:
            QThread.currentThread().quit()


class RunWorker(QObject):
    """Runs one comparison (core.session.run_comparison) on the shared lane pool; blocks its thread."""

    run_finished = Signal(object)  # core.session.RunResult: every lane's records and summary or failure
    run_failed = Signal(str)  # a sentence: the run could not be carried out at all

    def __init__(self, pool: LanePool, specs: list[LaneSpec], config: RunConfig, schedule: str, run_id: str,
                 put: Callable[[Any], None], cancel: threading.Event) -> None:
        super().__init__()
        self._pool, self._specs, self._config = pool, specs, config
        self._schedule, self._run_id, self._put, self._cancel = schedule, run_id, put, cancel
        self.result: RunResult | None = None  # also read by a close that cannot wait for the signal
        self.failure = ""

    @Slot()
    def run(self) -> None:
        try:
            result = run_comparison(self._pool, self._specs, self._config, schedule=self._schedule,
                                    run_id=self._run_id, on_event=self._put, cancel=self._cancel)
        except ConfigError as exc:
            self.failure = str(exc)
            self.run_failed.emit(self.failure)
        except Exception as exc:
            traceback.print_exc()
            self.failure = f"the run stopped on an internal error: {type(exc).__name__}: {exc}"
            self.run_failed.emit(self.failure)
        else:
            self.result = result
            self.run_finished.emit(result)
        finally:
            QThread.currentThread().quit()
