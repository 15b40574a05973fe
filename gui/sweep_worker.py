"""The sweep's worker: runs core.sweep.run_sweep (once, or twice in compare mode) in its own QThread.

It puts ("point", row, done, total) and ("run", variant, RunResult) on the tab's queue.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from crossover_lab.core.config import ConfigError, LaneSpec
from crossover_lab.core.session import LanePool
from crossover_lab.core.sweep import SweepResult, SweepSpec, run_sweep


class SweepWorker(QObject):
    """Blocks its thread while the sweep runs; points and per-batch runs go to `put`."""

    sweep_finished = Signal(object)  # list[SweepResult]: one per variant, finished points kept when cancelled
    sweep_failed = Signal(str)  # a sentence: the sweep could not be carried out

    def __init__(self, pool: LanePool, lanes: list[LaneSpec], specs: list[SweepSpec],
                 put: Callable[[Any], None], cancel: threading.Event) -> None:
        super().__init__()
        self._pool, self._lanes, self._specs, self._put, self._cancel = pool, lanes, specs, put, cancel
        self.results: list[SweepResult] = []  # read by a close that cannot wait for the signal

    @Slot()
    def run(self) -> None:
        total = sum(len(s.points()) for s in self._specs) * len(self._lanes)
        done = [0]

        def on_point(row: dict, _done: int, _total: int) -> None:
            done[0] += 1
            self._put(("point", row, done[0], total))

        try:
            for spec in self._specs:
                if self._cancel.is_set():
                    break
                self.results.append(run_sweep(
                    self._pool, self._lanes, spec, on_point=on_point, cancel=self._cancel,
                    on_run=lambda run, variant=spec.variant: self._put(("run", variant, run))))
        except ConfigError as exc:
            self.sweep_failed.emit(str(exc))
        except Exception as exc:
            traceback.print_exc()
            self.sweep_failed.emit(f"the sweep stopped on an internal error: {type(exc).__name__}: {exc}")
        else:
            self.sweep_finished.emit(self.results)
        finally:
            QThread.currentThread().quit()
