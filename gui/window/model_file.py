"""Opening a user's own model in the window: a saved model (.keras) checked at once, then inspected by a lane off
the GUI thread (loaded in safe mode, its shapes and FLOPs counted), then shown in the Model panel; or a model
factory (.py): its function of the width chosen (parsed, never run here), shown, and each width the user settles on
built and counted by a lane of this machine off the GUI thread (the lane imports the file: the user's code runs
there). A run, ramp or sweep has every width it will time built the same way before its first step.

A bad file is a sentence in the status bar, and nothing else changes.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QInputDialog

from ...core.config import ConfigError, FactoryModel, LaneSpec, SavedModel
from ...core.engine.pool import LanePool
from ...core.files.model_factory import check_factory, factory_functions
from ...core.files.saved_model import check_saved_model
from ...core.study.saved import inspect_factory, inspect_saved_model
from ..jobs import JobOutcome, JobRunner
from ..panels.factory_widths import same_factory
from ..panels.model import ModelPanel

DEFAULT_LANE = LaneSpec.parse("cpu")  # loads the file when no lane of this machine is chosen

# What the widths of a factory were asked for: the factory with what a lane found ("" then), or None and a sentence.
BuiltThen = Callable[[FactoryModel | None, str], None]


@dataclass
class _Build:
    """Widths of a factory a lane is to build and count, and who waits for them (the panel, or a run to start)."""

    factory: FactoryModel
    widths: tuple[int, ...]
    then: BuiltThen | None = None


def choose_function(panel: ModelPanel, path: str, functions: Sequence[str]) -> str:
    """The function of the file that builds the model: its only one, else the one the user picks ("" if none)."""
    if len(functions) == 1:
        return functions[0]
    item, ok = QInputDialog.getItem(panel, "Your model factory", f"{os.path.basename(path)} defines "
                                    f"{len(functions)} functions of one argument. Which one builds the model from "
                                    "its width?", list(functions), 0, False)
    return item if ok and item in functions else ""


class ModelFileOpener(QObject):
    """model_file_chosen → check → a lane's inspection → the Model panel, saying each step; and the builds of a
    model factory's widths, one lane job at a time, in the order they were asked."""

    def __init__(self, panel: ModelPanel, pool: Callable[[], LanePool], lanes: Callable[[], list[LaneSpec]],
                 busy: Callable[[], bool], say: Callable[..., None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._panel, self._pool, self._lanes, self._busy, self._say = panel, pool, lanes, busy, say
        self._runner = JobRunner("model file", 100, self)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        self._builder = JobRunner("model factory", 100, self)
        self._builder.job_ended.connect(self._on_builder_job_ended)
        self._builds: list[_Build] = []  # the first is the one a lane works on while the builder runs
        panel.model_file_chosen.connect(self.open)
        panel.factory_width_wanted.connect(self._on_panel_factory_width_wanted)

    @property
    def running(self) -> bool:
        return self._runner.running or self._builder.running

    def _lane(self) -> LaneSpec:
        return next((spec for spec in self._lanes() if not spec.host), DEFAULT_LANE)

    @Slot(str)
    def open(self, path: str) -> None:
        if self.running or self._busy():
            self._say("Wait until what is measuring has ended: opening a model needs a lane.", error=True)
            return
        if path.endswith(".py"):
            self._open_factory(path)
            return
        try:
            found = check_saved_model(path)
        except ConfigError as exc:
            self._say(f"Cannot open {path}: {exc}.", error=True)
            return
        lane = self._lane()
        pool = self._pool()
        self._say(f"Loading {found.name} in {lane.name} (safe mode on)…")

        def work(cancel: threading.Event) -> SavedModel:
            return inspect_saved_model(pool, lane, found, cancel)

        self._runner.start_quiet(work)

    def _open_factory(self, path: str) -> None:
        """The file's function of the width, chosen and checked (parsed, not run), then shown in the panel, whose
        width a lane builds next."""
        try:
            function = choose_function(self._panel, path, factory_functions(path))
            if not function:
                self._say(f"Not opened: no function of {os.path.basename(path)} was chosen.")
                return
            factory = check_factory(f"{path}:{function}")
        except ConfigError as exc:
            self._say(f"Cannot open {path}: {exc}.", error=True)
            return
        self._say(f"Opened {factory.file}: {function}(width). {self._lane().name} imports it (your code runs there) "
                  "and builds and counts each width you settle on.")
        self._panel.set_factory(factory)

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        if outcome.error or not isinstance(outcome.result, SavedModel):
            self._say(f"Cannot open the model: {outcome.error or 'stopped'}.", error=True)
            return
        saved = outcome.result
        note = f" ({saved.flops_note})" if saved.flops_note else ""
        self._panel.set_saved_model(saved)
        self._say(f"Opened {saved.name}: input {'x'.join(map(str, saved.input_shape))}, {saved.head_words}, "
                  f"{saved.params:,} parameters, {saved.forward_flops / 1e6:,.2f} MFLOP per sample forward{note}. "
                  "It has no width: change the batch size to move along its axis.")

    # ------------------------------------------------------------------ a factory's widths

    @Slot(int)
    def _on_panel_factory_width_wanted(self, width: int) -> None:
        factory = self._panel.factory()
        if factory is None or factory.at(width) is not None:
            return
        if any(same_factory(b.factory, factory) and width in b.widths for b in self._builds):
            return  # asked already: it is being built, or waits its turn
        if self._busy():  # the lanes are measuring: a lane never builds beside a timed step
            self._panel.note_factory_width(width, f"{factory.function}({width}) ({factory.file}): not counted yet; "
                                                  "a lane builds it once what is measuring has ended", waiting=True)
            return
        self.build(factory, (width,))

    def build(self, factory: FactoryModel, widths: Sequence[int], then: BuiltThen | None = None) -> None:
        """Have a lane of this machine build and count `factory` at those of `widths` not counted yet, after the
        builds asked before; `then` hears the factory with its figures (or a sentence) on the GUI thread."""
        self._builds.append(_Build(factory, tuple(dict.fromkeys(widths)), then))
        if not self._builder.running:
            self._next_build()

    def _next_build(self) -> None:
        while self._builds:
            job = self._builds[0]
            known = self._panel.factory()
            factory = job.factory.with_built(known.built) if known is not None and same_factory(known, job.factory) \
                else job.factory  # what the panel has counted meanwhile is not built again
            if all(factory.at(w) is not None for w in job.widths):
                self._builds.pop(0)
                if job.then is not None:
                    job.then(factory, "")
                continue
            if job.then is None and self._busy():  # a run started meanwhile: a lane never builds beside a timed step
                self._builds.pop(0)
                for width in job.widths:
                    self._panel.note_factory_width(width, f"{factory.function}({width}) ({factory.file}): not counted "
                                                          "yet; a lane builds it once what is measuring has ended",
                                                   waiting=True)
                continue
            lane, pool = self._lane(), self._pool()
            todo = [w for w in job.widths if factory.at(w) is None]
            if job.then is not None:  # a run waits for them (the panel's own width says "counting…" in its cost)
                self._say(f"{lane.name} builds and counts {', '.join(f'{factory.function}({w})' for w in todo)} "
                          f"({factory.file}) before {'it is' if len(todo) == 1 else 'they are'} timed…")

            def work(cancel: threading.Event, factory: FactoryModel = factory,
                     widths: tuple[int, ...] = job.widths) -> FactoryModel:
                return inspect_factory(pool, lane, factory, widths, cancel)

            self._builder.start_quiet(work)
            return

    @Slot(JobOutcome)
    def _on_builder_job_ended(self, outcome: JobOutcome) -> None:
        if not self._builds:  # the window closed meanwhile
            return
        job = self._builds.pop(0)
        found = outcome.result if isinstance(outcome.result, FactoryModel) else None
        missing = [w for w in job.widths if found is None or found.at(w) is None]
        error = outcome.error or (f"{job.factory.function}({missing[0]}) was not built: stopped" if missing else "")
        if found is not None:
            self._panel.add_factory_widths(found)
        if error and outcome.cancelled:  # stopped, not refused: asked again once the lanes are free
            for width in missing:
                self._panel.note_factory_width(width, f"{job.factory.function}({width}) ({job.factory.file}): not "
                                                      "counted yet (stopped)", waiting=True)
        elif error:
            for width in missing:
                self._panel.note_factory_width(width, f"{job.factory.function}({width}) could not be built: {error}")
            if job.then is None:
                self._say(f"Cannot use {job.factory.file}: {error}.", error=True)
        if job.then is not None:
            job.then(None if error else found, error)
        self._next_build()

    def stop_builds(self) -> None:
        """Stop the build in progress (Esc while a run waits for it): who waits hears a sentence."""
        self._builder.cancel()

    def shutdown(self, timeout_ms: int = 1200) -> None:
        self._builds = []  # what waits its turn is never started, and the one in progress is heard by none
        for runner in (self._runner, self._builder):
            runner.shutdown(timeout_ms)
            runner.wait_stuck(timeout_ms)
