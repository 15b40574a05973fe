"""The Sweep tab's settings (preset, widths, layers, batch sizes, budget per point, compare knob, floor, refinement),
Run, Refine, Stop, the knob ladder, and the progress."""
from __future__ import annotations

from PySide6.QtCore import QSize, Slot
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGridLayout, QGroupBox,
                               QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox, QWidget)

import math

from ...core.config import ConfigError, RunConfig, parse_int_list
from ...core.presets import SWEEP_PRESETS
from ...core.analysis.refinement import DEFAULT_BUDGET_S, DEFAULT_TOLERANCE, RefineTarget
from ...core.study.sweep import (DEFAULT_PASSES, MAX_PASSES, NO_WIDTH, SweepSpec, log_widths, parse_sweep_widths,
                                 with_knob)
from ...core.words.numbers import fmt_duration
from ..settings import AppSettings
from ..widgets.tips import say_why_not

PREFERRED_WIDTH = 340
COMPARE_CHOICES = ("none", "jit=on", "jit=off", "steps_per_execution=8", "batch_size=512", "feeding=device",
                   "mixed_precision=on")


class SweepForm(QGroupBox):
    """The fields of a sweep; `specs()` turns them into the engine's SweepSpec(s)."""

    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__("Sweep", parent)
        self._settings = settings
        self.form = QFormLayout(self)
        self.preset = QComboBox()
        self.preset.addItem("Custom", "")
        self.preset.addItem("Q&A seed (Nadam, batch 128)", "qa")
        self.preset.addItem("Blog seed (Adam, batch 32)", "blog")
        self.preset.setToolTip("The seeds' experiments over a range of widths: Q&A, 1 layer of 25-1500 units, "
                               "Nadam, batch 128; blog, 2 layers of 32-2000 units, Adam, batch 32. "
                               "Custom uses the Model panel's settings.")
        self.preset.currentIndexChanged.connect(self._on_preset_changed)
        self.along = QComboBox()  # the sweep's axis: what the user moves, and what its crossing is said in
        self.along.addItem("widths", "width")
        self.along.addItem("batch sizes", "batch")
        self.along.setAccessibleName("Sweep along")
        self.along.setToolTip("What the sweep moves: the hidden width (at each of the Batch sizes, or the Model "
                              "panel's), or the batch size (its Batch sizes, at the Model panel's model)")
        self.widths = QLineEdit(",".join(map(str, log_widths(16, 4096, 6))))
        widths_tip = "Hidden widths to time, comma-separated (every hidden layer gets the same width)"
        self.widths.setToolTip(widths_tip)
        # A narrow window shows the first widths only: the tooltip says them all.
        self.widths.textChanged.connect(lambda text: self.widths.setToolTip(f"{widths_tip}\nNow: {text}"))
        self.layers = QSpinBox(minimum=1, maximum=8, value=2)
        self.layers.setToolTip("Hidden layers, each of the swept width")
        self.batches = QLineEdit(placeholderText="the Model panel's batch size")
        self.batches.setToolTip("Also sweep these batch sizes, e.g. 32,128,512 (empty: the Model panel's)")
        self.steady = QSpinBox(minimum=3, maximum=10000, value=60)
        self.steady.setToolTip("Steady (post-warm-up) batches per point at most")
        self.seconds = QDoubleSpinBox(minimum=0.2, maximum=600, value=3.0, decimals=1, suffix=" s")
        self.seconds.setToolTip("Steady time per point at most: big models stop on time, small on count")
        self.compare = QComboBox()
        self.compare.setToolTip("Run the same sweep again with one setting changed, and show how the fixed "
                                "overhead, the throughput and the crossover move")
        self.compare.addItems(COMPARE_CHOICES)
        self.preset.setAccessibleName("Sweep preset")  # a combo box is otherwise named by its current text
        self.compare.setAccessibleName("Compare with")
        for combo in (self.preset, self.compare):  # their longest item would set the width of the form
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
        self.tolerance = QDoubleSpinBox(minimum=1, maximum=50, value=100 * DEFAULT_TOLERANCE, decimals=0, prefix="±",
                                        suffix=" %")
        self.tolerance.setToolTip("Refine crossover stops once each crossover width is known within this much "
                                  "either side")
        self.budget = QDoubleSpinBox(minimum=5, maximum=3600, value=DEFAULT_BUDGET_S, decimals=0, suffix=" s")
        self.budget.setToolTip("Refine crossover stops when this time has passed, from its first point")
        self.floor = QCheckBox("time it too")
        self.floor.setToolTip("Also time each point's floor, the hardware's own: its steps in one compiled on-device "
                              "loop (the Why tab's device_loop), drawn dashed, with the floor crossover")
        self.passes = QSpinBox(minimum=1, maximum=MAX_PASSES, value=DEFAULT_PASSES)
        self.passes.setToolTip(f"Measure every width this many times, in passes apart in time (the widths' and the "
                               f"lanes' order reversed each pass). From 3 the rule measures what a pass's widths "
                               f"share, such as a load one lane feels more; {DEFAULT_PASSES} (the default) finds a "
                               f"10% lead on a quiet machine. 1: one quick pass, which says only leads of about 30% "
                               f"or more")
        self.passes.valueChanged.connect(self._passes_changed)
        self.recheck = QCheckBox("a few points")
        self.recheck.setChecked(True)
        self.recheck.setToolTip("After the sweep, measure once more the middle point (from six points up two, from "
                                "eight three, evenly spaced), chosen by place, never by what they measured: their two "
                                "runs show the pair's run-to-run noise, which one run's batches cannot show, and the "
                                "verdict counts a lead inside it as noise")
        for label, widget in (("Preset", self.preset), ("Along", self.along), ("Widths", self.widths),
                              ("Layers", self.layers),
                              ("Batch sizes", self.batches), ("Steady batches", self.steady),
                              ("Time per point", self.seconds), ("Compare with", self.compare), ("Floor", self.floor),
                              ("Passes", self.passes), ("Measure twice", self.recheck),
                              ("Refine to", self.tolerance), ("Refine budget", self.budget)):
            self.form.addRow(label, widget)
        self._passes_changed(self.passes.value())
        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip("Time every width on every selected lane, one at a time")
        self.refine_button = QPushButton("Refine crossover")
        self.refine_button.setToolTip("Time the widths, then add widths where the faster lane changes until the "
                                      "crossover is known within the tolerance, the budget is spent, or the lanes are "
                                      "equal within noise")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the point in progress (Esc); finished points stay")
        self.stop_button.setEnabled(False)
        buttons = QGridLayout()  # Stop under Run, not beside Refine: three in a row set the form's least width
        buttons.addWidget(self.run_button, 0, 0)
        buttons.addWidget(self.refine_button, 0, 1)
        buttons.addWidget(self.stop_button, 1, 0)
        self.ladder_button = QPushButton("Rank knobs")
        self.ladder_button.setToolTip("What would make the GPU win sooner? Run the sweep once per knob that moves "
                                      "the fixed cost (steps per execution 1/8/64, data on the device, jit on/off, "
                                      "mixed precision, each installed backend) and rank them")
        buttons.addWidget(self.ladder_button, 1, 1)
        self.form.addRow(buttons)
        self.progress = QProgressBar(textVisible=True)
        self.progress.setFormat("%v / %m points")
        self.progress_label = QLabel("Lanes come from the Lanes panel: one after another, never side by side.")
        self.progress_label.setWordWrap(True)
        self.form.addRow(self.progress)
        self.form.addRow(self.progress_label)
        self.restore()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """Room for a preset's name and the widths typed where the tab has it; minimumSizeHint when short."""
        return super().sizeHint().expandedTo(QSize(PREFERRED_WIDTH, 0))

    def reset(self) -> None:
        """The form's defaults (File > Reset to defaults): widths 16 to 4,096, 2 layers, the Model panel's batch
        size, along widths, 60 steady batches or 3 s a point, a few points measured twice, no floor, no
        comparison, the default refinement; saved, so the next window opens with them."""
        self.preset.setCurrentIndex(0)
        self.along.setCurrentIndex(max(self.along.findData("width"), 0))
        self.widths.setText(",".join(map(str, log_widths(16, 4096, 6))))
        self.widths.setCursorPosition(0)
        self.layers.setValue(2)
        self.batches.setText("")
        self.steady.setValue(60)
        self.seconds.setValue(3.0)
        self.compare.setCurrentIndex(0)
        self.floor.setChecked(False)
        self.recheck.setChecked(True)
        self.passes.setValue(DEFAULT_PASSES)
        self.tolerance.setValue(100 * DEFAULT_TOLERANCE)
        self.budget.setValue(DEFAULT_BUDGET_S)
        self.save()

    def restore(self) -> None:
        s = self._settings
        self.widths.setText(s.text("sweep/widths", "") or self.widths.text())
        self.widths.setCursorPosition(0)  # a narrow field shows the first widths, not the last
        self.batches.setText(s.text("sweep/batches", ""))
        self.along.setCurrentIndex(max(self.along.findData(s.text("sweep/along", "width")), 0))
        self.floor.setChecked(s.text("sweep/floor", "") == "on")
        self.recheck.setChecked(s.text("sweep/recheck", "on") == "on")
        try:
            self.layers.setValue(int(s.text("sweep/layers", str(self.layers.value()))))
            self.steady.setValue(int(s.text("sweep/steady", str(self.steady.value()))))
            self.seconds.setValue(float(s.text("sweep/seconds", str(self.seconds.value()))))
            self.passes.setValue(int(s.text("sweep/passes", str(self.passes.value()))))
            self.tolerance.setValue(float(s.text("sweep/refine_percent", str(self.tolerance.value()))))
            self.budget.setValue(float(s.text("sweep/refine_budget", str(self.budget.value()))))
        except ValueError:
            pass  # a hand-edited settings file: keep the defaults

    def save(self) -> None:
        for key, value in (("widths", self.widths.text()), ("layers", self.layers.value()),
                           ("batches", self.batches.text()), ("steady", self.steady.value()),
                           ("seconds", self.seconds.value()), ("refine_percent", self.tolerance.value()),
                           ("refine_budget", self.budget.value()), ("floor", "on" if self.floor.isChecked() else ""),
                           ("recheck", "on" if self.recheck.isChecked() else "off"), ("passes", self.passes.value()),
                           ("along", self.along_batch() and "batch" or "width")):
            self._settings.set_text(f"sweep/{key}", str(value))

    @Slot(int)
    def _passes_changed(self, passes: int) -> None:
        """Measure twice is one pass's: passes measure every width again already."""
        self.recheck.setEnabled(passes == 1)
        say_why_not(self.recheck, "" if passes == 1 else f"{passes} passes measure every width {passes} times already")

    def set_startable(self, ok: bool, why_not: str) -> None:
        """Sweep, Refine crossover and Rank knobs can start, or say why not."""
        for button in (self.run_button, self.refine_button, self.ladder_button):
            button.setEnabled(ok)
            say_why_not(button, why_not)

    def fit_model(self, saved: bool, factory: str | None) -> None:
        """Fit the form to the Model panel's model: a saved model has no width (its sweep runs along batch sizes, no
        preset, widths or layers); a user's factory (`factory`: its function) builds the whole model from one width
        (widths only, one layer)."""
        if saved:
            self.along.setCurrentIndex(self.along.findData("batch"))
        self.along.setEnabled(not saved)
        along_batch = self.along_batch()  # the Model panel's model at each batch size
        for field in (self.widths, self.layers, self.preset):
            field.setEnabled(not saved and (factory is None or field is self.widths)
                             and not (along_batch and field is not self.preset))
            say_why_not(field, "Your model has no width: the sweep runs along Batch sizes." if saved else
                        f"{factory}(width) builds the whole model from one width: the sweep runs along Widths."
                        if factory is not None and field is not self.widths else "")
        if factory is not None:
            self.layers.setValue(1)

    def follow(self, xs: tuple[int, ...], along_batch: bool, layers: int, steady: int | None,
               seconds: float | None) -> None:
        """Describe a ramp the tab now shows: its widths (or batch sizes), layers and budget per point, on the Model
        panel's model, so that Refine crossover refines from its points (they are lent, not timed again)."""
        self.preset.setCurrentIndex(0)  # Custom: the Model panel's model, which the ramp trained
        self.compare.setCurrentText("none")
        self.along.setCurrentIndex(max(self.along.findData("batch" if along_batch else "width"), 0))
        if along_batch:
            self.batches.setText(",".join(map(str, xs)))
        else:
            self.widths.setText(",".join(map(str, xs)))
            self.widths.setCursorPosition(0)
            self.batches.setText("")
            self.layers.setValue(layers)
        if steady is not None:
            self.steady.setValue(steady)
        if seconds is not None:
            self.seconds.setValue(seconds)

    @Slot(int)
    def _on_preset_changed(self, _index: int) -> None:
        name = self.preset.currentData()
        if name:
            preset = SWEEP_PRESETS[name]
            layers, widths = preset.layers, preset.widths
            self.layers.setValue(layers)
            self.widths.setText(",".join(map(str, widths)))

    def along_batch(self) -> bool:
        """Whether the sweep moves the batch size (at the Model panel's model) rather than the width."""
        return self.along.currentData() == "batch"

    def specs(self, base_config: RunConfig) -> list[SweepSpec]:
        """The sweep(s) the controls describe; raises ConfigError with a sentence for the user."""
        name = self.preset.currentData()
        # A preset brings its own model, but never in place of the user's saved one.
        user = base_config.model.saved is not None or base_config.model.factory is not None
        base = SWEEP_PRESETS[name].base if name and not user else base_config
        batches = self.batches.text()
        sizes = parse_int_list(batches, "batch size") if batches.strip() else ()
        own = base.model.saved is not None  # a saved model has no width: it is swept along batch size only
        if own and len(set(sizes)) < 2:
            raise ConfigError("your model has no width: sweep it along batch size (Batch sizes, e.g. 1,8,64,512)")
        widths, layers = ((NO_WIDTH,) if own else parse_sweep_widths(self.widths.text()),
                          1 if own or base.model.factory is not None else self.layers.value())
        if self.along_batch() and not own:  # the Model panel's model, at each of the batch sizes
            if len(set(sizes)) < 2:
                raise ConfigError("a sweep along batch size needs at least two Batch sizes, e.g. 1,8,64,512")
            model = base.model.widths
            if len(set(model)) > 1:
                raise ConfigError(f"a sweep along batch size keeps the Model panel's model, and "
                                  f"{base.model.label()} has layers of different widths: give every layer one width")
            widths, layers = (model[0],), 1 if base.model.factory is not None else len(model)
        spec = SweepSpec(widths=widths, layers=layers,
                         batch_sizes=sizes,
                         base=base, steady_steps=self.steady.value(), seconds_per_point=self.seconds.value(),
                         floor=self.floor.isChecked(), recheck=self.recheck.isChecked(), passes=self.passes.value())
        spec.points()  # validates every point's model now, not halfway through the sweep
        choice = self.compare.currentText()
        return [spec] + ([with_knob(spec, choice)] if choice != "none" else [])

    def set_running(self, running: bool) -> None:
        for button in (self.run_button, self.refine_button, self.ladder_button):
            button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def refine_target(self) -> RefineTarget:
        return RefineTarget(self.tolerance.value() / 100, self.budget.value())

    def start_progress(self, points: int, target: RefineTarget | None) -> None:
        """An empty bar: in points for a sweep, in seconds of the budget for a refinement (its points are not known)."""
        self.progress.setFormat("%v / %m s" if target else "%v / %m points")
        self.progress.setRange(0, int(math.ceil(target.budget_s)) if target else points)
        self.progress.setValue(0)

    def show_progress(self, done: int, total: int, elapsed: float) -> None:
        """Progress after a point: `total` 0 means a refinement, measured against its budget."""
        if not total:
            self.progress.setValue(min(int(elapsed), self.progress.maximum()))
            self.progress_label.setText(f"{done} points · refining, {fmt_duration(elapsed)} of at most "
                                        f"{fmt_duration(self.progress.maximum())}")
            return
        self.progress.setValue(done)
        left = elapsed / done * (total - done) if done else float("nan")
        self.progress_label.setText(f"{done}/{total} points · about {fmt_duration(left)} left")
