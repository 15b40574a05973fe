"""Changes to the model while it trains: sent to the run in progress when a slider is let go, or a moment
after any other edit. A number typed into a box is an edit once whole (Enter, Tab, a click elsewhere: see
gui/widgets/range_spin.py), so typing 1024 never trains 1, 10 and 102 first, however slowly the keys come."""
from __future__ import annotations

import dataclasses
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ...core.config import RunConfig
from ..app_model import AppModel, Change
from ..controller import RunController
from ..panels.model import ModelPanel

SETTLE_MS = 300  # after the last arrow step or spin-box click; a released slider goes at once


def live_part(wanted: RunConfig, running: RunConfig) -> RunConfig:
    """What of `wanted` a run can take mid-way: the model, the batch size and the optimizer; the data,
    sample limit, epochs and seed stay the run's (they apply to the next run)."""
    keep = {name: getattr(running.train, name) for name in ("data", "samples", "epochs", "seed", "preprocessing",
                                                              "max_steps", "max_seconds", "warmup_steps")}
    return RunConfig(wanted.model, dataclasses.replace(wanted.train, **keep))


class LiveSwitch(QObject):
    """Watches the model panel while a run goes on and tells the controller; says what it did."""

    switched = Signal(RunConfig)  # the model the run goes on with from its next batch

    def __init__(self, app: AppModel, panel: ModelPanel, controller: RunController, say: Callable[..., None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._app, self._panel, self._controller, self._say = app, panel, controller, say
        self._sent: RunConfig | None = None  # what the run trains now (as far as we asked)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.send)
        app.subscribe(lambda _: self._on_config_changed(), Change.CONFIG)
        for slider in panel.widths.sliders:
            slider.sliderReleased.connect(self.send)
        controller.run_started.connect(lambda live: setattr(self, "_sent", live.config))

    def _on_config_changed(self) -> None:
        if self._app.config is None or not self._controller.running:
            return
        if any(slider.isSliderDown() for slider in self._panel.widths.sliders):
            return  # wait for the release: a drag through every width would train each of them
        self._timer.start()

    @Slot()
    def send(self) -> None:
        self._timer.stop()
        wanted, running = self._app.config, self._sent
        if wanted is None or running is None or not self._controller.running:
            return
        config = live_part(wanted, running)
        factory = config.model.factory
        if factory is not None and config.model.figures is None and config.model != running.model:
            # Its figures are not known, and the lanes are busy timing: a lane builds it only between runs.
            self._say(f"{factory.function}({config.model.widths[0]}) has not been built yet: a lane builds the new "
                      f"width after this run (never beside a timed step); this run goes on with "
                      f"{running.model.label()}.")
            return
        if config == running:
            if wanted != running:
                self._say("Data, sample limit, epochs and seed apply to the next run.")
            return
        if self._controller.switch_model(config):
            self._sent = config
            self.switched.emit(config)
            note = "" if live_part(wanted, running) == wanted else " (data, samples and epochs: at the next run)"
            self._say(f"Switching every lane to {config.model.label()}, batch {config.train.batch_size}, at its "
                      f"next batch{note}.")
