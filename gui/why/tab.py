"""The Why tab: measure the anatomy of the current model on the chosen lanes, draw each lane's step as its parts,
and say in words where the time goes — with both clocks named."""
from __future__ import annotations

import threading
from typing import Callable

from PySide6.QtCore import QThread, Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ...core.analysis.anatomy import AnatomyPoint
from ...core.study.anatomy import AnatomyOutcome, anatomy_key, measure_anatomies
from ...core.analysis.points import SweepPoint
from ...core.words.anatomy import (CALL_CLOCKS, CLOCKS, anatomy_notes, clock_lines, clocks_of, floor_sentence,
                                   run_agreement, why_sentence)
from ...core.config import ConfigError, LaneSpec, RunConfig, Task
from ...core.study.saved import inspect_factory, inspecting_lane, with_factory
from ...core.engine.pool import LanePool
from ..jobs import JobOutcome, JobRunner
from ..theme.scheme import status_style
from ..widgets.plain_text import rich
from .bars import WhyBars


class WhyView(QWidget):
    """Measures on demand (the window's lanes, one at a time) and keeps the last anatomy of each model."""

    measure_started = Signal()  # the window locks what would disturb the measurement
    # (RunConfig, dict[str, AnatomyPoint]): the anatomy of that model per lane; emitted when the job has ended
    measure_ended = Signal(object, object)

    def __init__(self, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 config: Callable[[], RunConfig | None], busy: Callable[[], bool],
                 on_measured: Callable[[RunConfig, dict[str, AnatomyPoint]], None] | None = None,
                 measured: Callable[[RunConfig, str], SweepPoint | None] | None = None,
                 parent: QWidget | None = None) -> None:
        """`measured`: what the window's runs of a model measured on a lane (core/files/findings.py), said beside
        the anatomy's top rung, which times the same thing with the same clock."""
        super().__init__(parent)
        self._pool, self._lanes, self._config, self._busy = pool, lanes, config, busy
        self._runs_of = measured
        self._runner = JobRunner("why", 100, self)
        self._runner.drained.connect(self._on_runner_drained)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        if on_measured is not None:  # the summary, which shows the pipelined clock of a measured model
            self.measure_ended.connect(on_measured)
        self.measured: dict[RunConfig, dict[str, AnatomyPoint]] = {}
        self._measuring: RunConfig | None = None
        self._failures: list[str] = []
        self.measure_button = QPushButton("Measure why")
        self.measure_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.setToolTip("Stop after the lane in progress")
        self.stop_button.clicked.connect(self.stop)
        self.clocks = QLabel("")
        self.clocks.setWordWrap(True)
        self.clocks.setTextFormat(Qt.TextFormat.RichText)  # the clocks' names in bold; every text inserted escaped
        self.bars = WhyBars()
        self.words = QLabel("")
        self.words.setWordWrap(True)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.words.setStyleSheet("font-weight: 600;")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.measure_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.clocks)
        layout.addLayout(buttons)
        layout.addWidget(self.bars, 1)
        layout.addWidget(self.words)
        self._task: Task | None = None
        self.set_task(Task.TRAIN)

    def set_task(self, task: Task) -> None:
        """Speak of the Model panel's task: a training step's rungs and clocks, or a served call's."""
        if task == self._task:
            return
        self._task = task
        if task == Task.PREDICT:
            self.measure_button.setToolTip(
                "Time the five rungs of one served call (Keras predict_on_batch, the compiled forward pass from the "
                "host, on an input already on the device, K calls pipelined, an on-device loop of calls) for the "
                "Model panel's model on each chosen lane, one at a time")
        else:
            self.measure_button.setToolTip(
                "Time the five rungs of a training step (fit, fit without per-step sync, the bare step synced and "
                "pipelined, an on-device loop) for the Model panel's model on each chosen lane, one at a time")
        if not self.bars.points:
            clocks = CALL_CLOCKS if task == Task.PREDICT else CLOCKS
            self.clocks.setText(" ".join(f"The <b>{rich(name)}</b>: {rich(text)}." for name, text in clocks.items()))
            self.words.setText("Press Measure why to see where a " + ("call's" if task == Task.PREDICT else "step's")
                               + " time goes on each lane.")

    @property
    def running(self) -> bool:
        return self._runner.running

    def threads(self) -> list[QThread]:
        return self._runner.threads()

    def points_for(self, config: RunConfig | None) -> dict[str, AnatomyPoint]:
        return dict(self.measured.get(anatomy_key(config), {})) if config is not None else {}

    @Slot()
    def start(self) -> None:
        config, lanes = self._config(), self._lanes()
        if self.running or self._busy():
            self._say("Wait until the run or sweep in progress has ended: it would share the lanes.", error=True)
            return
        if config is None or not lanes:
            self._say("Choose a valid model and at least one lane first.", error=True)
            return
        self._measuring, self._failures = anatomy_key(config), []
        self.measured[self._measuring] = {}
        self.bars.set_points([])
        self._say(f"Measuring {config.model.label()} on {', '.join(lane.name for lane in lanes)}, one lane at a "
                  "time (a few seconds each, plus compiling)…")
        pool = self._pool()

        def work(cancel: threading.Event, put: Callable[[AnatomyOutcome], None]) -> list[AnatomyOutcome]:
            built = config
            factory = config.model.factory
            if factory is not None and config.model.figures is None:  # a lane builds and counts its width first
                built = with_factory(config, inspect_factory(pool, inspecting_lane(lanes), factory,
                                                             config.model.widths, cancel))
                if built.model.figures is None:
                    raise ConfigError(f"{factory.function}({config.model.widths[0]}) was not built: stopped")
            return measure_anatomies(pool, lanes, [built], cancel=cancel, on_outcome=put)

        self._runner.start(work)
        self.measure_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.measure_started.emit()

    @Slot()
    def stop(self) -> None:
        if self.running:
            self._runner.cancel()
            self._say("Stopping after the lane in progress…")

    def shutdown(self, timeout_ms: int = 1200) -> None:
        self._runner.shutdown(timeout_ms)
        self._runner.wait_stuck(timeout_ms)

    @Slot(list)
    def _on_runner_drained(self, outcomes: list[AnatomyOutcome]) -> None:
        shown = self.measured.setdefault(self._measuring, {}) if self._measuring is not None else {}
        for outcome in outcomes:
            if outcome.point is not None:
                shown[outcome.lane] = outcome.point
            else:
                self._failures.append(f"{outcome.lane}: {outcome.error}")
        self.show_points(list(shown.values()), self._measuring)

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        self.measure_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        config, self._measuring = self._measuring, None
        points = self.measured.get(config, {}) if config is not None else {}
        problems = self._failures + ([outcome.error] if outcome.error else [])
        if problems:
            self._say("Not measured: " + "; ".join(problems), error=True)
        else:
            calls = config is not None and config.train.task == Task.PREDICT
            self._say(("Stopped" if outcome.cancelled else "Measured") + f" on {len(points)} lane(s)." +
                      ("" if calls else " The Compare tab's summary now shows both clocks for this model."))
        self.measure_ended.emit(config, dict(points))

    def show_points(self, points: list[AnatomyPoint], config: RunConfig | None = None) -> None:
        """The bars and the sentences for these lanes' anatomies of one model (`config`: beside what the window's
        runs of it measured)."""
        self.bars.set_points(points)
        if not points:
            return
        self.clocks.setText(" ".join(f"The <b>{rich(name)}</b>: {rich(text)}." for name, text in clocks_of(points).items()))
        lines = [why_sentence(p) for p in points]
        floor = floor_sentence(points)
        lines += ([floor] if floor else []) + [line + "." for line in clock_lines(points)]
        if config is not None and self._runs_of is not None:
            runs_of = self._runs_of
            lines += [line + "." for p in points for line in [run_agreement(p, runs_of(config, p.lane))] if line]
        lines += [f"{p.lane}: {rung} not measured: {why}." for p in points for rung, why in p.reasons.items()]
        lines += [f"Note ({p.lane}): {note}." for p in points for note in anatomy_notes(p)]
        self.words.setText("\n".join(lines))

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet(status_style(error))
        self.status.setText(text)
