"""Opening a user's own saved model in the window: the file checked at once, then inspected by a lane off the
GUI thread (loaded in safe mode, its shapes and FLOPs counted), then shown in the Model panel.

A bad file is a sentence in the status bar, and nothing else changes.
"""
from __future__ import annotations

import threading
from typing import Callable

from PySide6.QtCore import QObject, Slot

from ...core.config import ConfigError, LaneSpec, SavedModel
from ...core.engine.pool import LanePool
from ...core.files.saved_model import check_saved_model
from ...core.study.saved import inspect_saved_model
from ..jobs import JobOutcome, JobRunner
from ..panels.model import ModelPanel

DEFAULT_LANE = LaneSpec.parse("cpu")  # loads the file when no lane of this machine is chosen


class ModelFileOpener(QObject):
    """model_file_chosen → check → a lane's inspection → ModelPanel.set_saved_model, saying each step."""

    def __init__(self, panel: ModelPanel, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 busy: Callable[[], bool], say: Callable[..., None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._panel, self._pool, self._lanes, self._busy, self._say = panel, pool, lanes, busy, say
        self._runner = JobRunner("model file", 100, self)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        panel.model_file_chosen.connect(self.open)

    @property
    def running(self) -> bool:
        return self._runner.running

    @Slot(str)
    def open(self, path: str) -> None:
        if self.running or self._busy():
            self._say("Wait until what is measuring has ended: opening a model needs a lane.", error=True)
            return
        try:
            found = check_saved_model(path)
        except ConfigError as exc:
            self._say(f"Cannot open {path}: {exc}.", error=True)
            return
        lane = next((spec for spec in self._lanes() if not spec.host), DEFAULT_LANE)
        pool = self._pool()
        self._say(f"Loading {found.name} in {lane.name} (safe mode on)…")

        def work(cancel: threading.Event, _put: Callable[[object], None]) -> SavedModel:
            return inspect_saved_model(pool, lane, found, cancel)

        self._runner.start(work)

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        if outcome.error or not isinstance(outcome.result, SavedModel):
            self._say(f"Cannot open the model: {outcome.error or 'stopped'}.", error=True)
            return
        saved = outcome.result
        note = f" ({saved.flops_note})" if saved.flops_note else ""
        self._panel.set_saved_model(saved)
        self._say(f"Opened {saved.name}: input {'x'.join(map(str, saved.input_shape))}, {saved.classes} classes, "
                  f"{saved.params:,} parameters, {saved.forward_flops / 1e6:,.2f} MFLOP per sample forward{note}. "
                  "It has no width: change the batch size to move along its axis.")

    def shutdown(self, timeout_ms: int = 1200) -> None:
        self._runner.shutdown(timeout_ms)
        self._runner.wait_stuck(timeout_ms)
