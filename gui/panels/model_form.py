"""The model panel's form: the controls for a model and its training, the rows they sit in, and their reading into
the parts of a RunConfig. The panel (model.py) adds the presets, the cost line and a user's own model."""
from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ...core.config import (ACTIVATIONS, FACTORY, MAX_BATCH, MAX_RATE, OPTIMIZERS, SAVED, SERVE_WAYS, TASKS,
                            ConfigError, ModelSpec, RunConfig, Task, TrainSpec)
from ...core.families import CELLS, FAMILIES, LAYER_LIMITS, Family
from ...core.files.npz_check import data_file_problem
from ...core.presets import PRESETS, WINDOW_DEFAULT
from ..widgets.file_dialogs import FileDialogs
from ..widgets.range_spin import RangeSpinBox
from ..widgets.width_slider import LayerWidths
from .form_fields import combo, double_spin, int_spin, titled_combo
from ..widgets.signals import signals_blocked

DATA_SOURCES = ("auto", "mnist", "synthetic")
DATA_TIP = ("Training data. auto: MNIST from the Keras cache (downloaded once), else a synthetic "
            "MNIST-shaped set; mnist: MNIST or fail; synthetic: random MNIST-shaped data; or the path "
            "of a .npz file with x_train and y_train.")
FAMILY_TITLES = {"mlp": "MLP (dense layers)", "cnn": "CNN (convolutions)", "rnn": "RNN (LSTM or GRU)",
                 "transformer": "Transformer (encoder)"}
TASK_TITLES = {"train": "Train (time each step)", "predict": "Predict (time each call)",
               "rate": "Predict at an arrival rate"}
RATE = "rate"  # the Task chooser's third entry: the predict task with requests on their own schedule
DEFAULT_RATE = 200  # requests per second the rate task starts at
SERVE_TITLES = {"keras": "Keras predict_on_batch", "compiled": "Compiled forward pass"}
LAYER_LABELS = {"mlp": "Hidden layers", "cnn": "Conv blocks", "rnn": "RNN layers", "transformer": "Encoder blocks"}


class ModelForm(QWidget):
    """The controls of one RunConfig; `edited` follows every change a user makes, and each control shows its own
    rows only (a family's, a task's)."""

    edited = Signal()  # a control changed: read the controls again
    input_adjusted = Signal(str)  # a typed number was out of range and was clamped: the sentence says how

    def __init__(self, dialogs: FileDialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dialogs = dialogs
        self._base = WINDOW_DEFAULT  # the config last shown: settings with no control are kept from it
        self._family_shown = "mlp"  # the family a user last chose, or a user's own model shown
        self._make_run_controls()
        self._make_model_controls()
        self._make_training_controls()
        self._form = self._lay_out()
        self._connect()

    # ------------------------------------------------------------------ building

    def _make_run_controls(self) -> None:
        """The preset, the task and the task's own settings (the predict call, an arrival rate and its batch)."""
        self.preset = QComboBox()
        self.preset.addItem("Choose a preset…", "")
        for name, preset in PRESETS.items():
            self.preset.addItem(preset.title, name)
            self.preset.setItemData(self.preset.count() - 1, preset.source or preset.title,
                                    Qt.ItemDataRole.ToolTipRole)
        self.preset.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.preset.setMinimumContentsLength(12)
        self.preset.setToolTip("Load a reference model: the two seeds' networks, a tiny and a huge one. "
                               "The data source and sample limit stay as you set them.")
        self.preset.setAccessibleName("Model preset")
        self.task = titled_combo(TASK_TITLES, (*TASKS, RATE))
        self.task.setToolTip("What is timed. Train: one training step (forward, backward, update). Predict: one "
                             "forward call per batch as a server makes it, input from host memory and the answer "
                             "back on the host; the weights are trained a few steps first, never timed. A "
                             "predict run's verdict speaks in latency, its p90 and p99 beside the median. Predict "
                             "at an arrival rate: requests arrive on their own clock (Poisson, at the Rate), queue "
                             "while the lane is busy, and each is timed from its arrival to its answer; lanes serve one "
                             "after another, and each says whether it held the rate.")
        self.task.setAccessibleName("Task")
        self.rate = int_spin(1, int(MAX_RATE), "Requests per second arriving at the lane's server, whatever it is "
                             "doing (Poisson arrivals). Above what a lane can answer, its queue only grows: it "
                             "says it does not hold the rate.")
        self.rate.setValue(DEFAULT_RATE)
        self.rate.setSuffix(" requests/s")
        self.rate.setAccessibleName("Arrival rate")
        self.max_batch = int_spin(1, MAX_BATCH, "Requests one call may answer: 1 serves them one at a time; more "
                                  "batches those that queued (dynamic batching, as TF Serving and Triton do).")
        self.max_batch.setAccessibleName("Max batch")
        self.serve = titled_combo(SERVE_TITLES, SERVE_WAYS)
        self.serve.setToolTip("How a predict call is made. Keras predict_on_batch: what a Keras server calls, "
                              "with Keras' own predict machinery. Compiled forward pass: the backend's compiled "
                              "forward called directly, the floor a server could reach with the same arithmetic.")
        self.serve.setAccessibleName("Predict call")

    def _make_model_controls(self) -> None:
        """The family (with a user's own model beside Crossover's four), its layers and widths, and their settings."""
        self.family = titled_combo(FAMILY_TITLES)
        self.family.setToolTip("The kind of network. The width slider moves its width: units per hidden layer "
                               "(MLP), filters per block (CNN), units per recurrent layer (RNN) or d_model "
                               "(transformer, one for every block). Every family reads the same 28×28 images.")
        self.family.setAccessibleName("Model family")
        # Sized by a few characters, not by its longest entry (a saved model's name may be long).
        self.family.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.family.setMinimumContentsLength(12)
        self.open_model = QPushButton("Open a model file…")
        self.open_model.setToolTip("Your own saved Keras 3 model (.keras): a lane loads it with safe mode on (a "
                                   "Lambda layer is refused, never run) and counts its FLOPs; it has no width: "
                                   "compare it along the batch size. Or a Python file with a function of the width "
                                   "that returns a keras.Model (.py): a lane imports it (your code runs there) and "
                                   "builds and counts each width you settle on.")
        self.cell = combo(CELLS, "The RNN's recurrent layer: LSTM or GRU (tanh and sigmoid, as Keras "
                                 "defaults them, so a GPU lane may use cuDNN).")
        self.cell.setAccessibleName("Recurrent cell")
        self.heads = int_spin(1, 64, "Attention heads of every encoder block: they must divide d_model.")
        self.layers = RangeSpinBox()
        self.layers.setRange(1, LAYER_LIMITS[Family.MLP])
        self.layers.setToolTip("How many layers of the family's kind sit between the 28×28 input and the 10 classes "
                               "(MLP 1-8, CNN 1-6, RNN 1-4, transformer 1-6).")
        self.widths = LayerWidths()
        self.activation = combo(ACTIVATIONS, "Activation of every hidden layer.")
        self.dropout = double_spin(0.0, 0.95, 0.05, 2, "Dropout after every hidden layer (0 = none).")

    def _make_training_controls(self) -> None:
        """Batch size, epochs, time limit, optimizer, learning rate, data and sample limit."""
        self.batch = int_spin(1, 65536, "Samples per training step. Larger batches do more work per "
                                        "step, which favours a GPU.")
        self.epochs = int_spin(1, 1000, "Passes over the training data.")
        self.time_limit = int_spin(0, 36_000, "Each lane stops after this many seconds of steady training on a "
                                              "model, mid-epoch if need be (none: the epochs and the sample limit "
                                              "decide). A width dragged mid-run is a new model, with its own time.")
        self.time_limit.setSpecialValueText("none")
        self.time_limit.setSuffix(" s a lane")
        self.time_limit.setSingleStep(10)
        self.time_limit.setAccessibleName("Time limit")
        self.optimizer = combo(OPTIMIZERS, "The optimizer (its update cost grows with the parameters).")
        self.learning_rate = double_spin(1e-5, 10.0, 1e-4, 5, "Learning rate of the optimizer.")
        self.data = QComboBox()
        self.data.setEditable(True)
        self.data.addItems(DATA_SOURCES)
        self.data.setToolTip(DATA_TIP)
        self.data.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.data.setMinimumContentsLength(10)
        # A combo box's accessible name is otherwise its current text ("auto"), not what it sets.
        for box, name in ((self.data, "Data source"), (self.activation, "Activation"), (self.optimizer, "Optimizer")):
            box.setAccessibleName(name)
        self.browse = QPushButton("…")
        self.browse.setFixedWidth(28)
        self.browse.setToolTip("Choose a .npz file with x_train and y_train.")
        self.browse.setAccessibleName("Choose a data file")
        self.samples = int_spin(0, 10_000_000, "Train on at most this many samples (all: the whole set). "
                                               "Fewer samples make a shorter run with the same step times.")
        self.samples.setSpecialValueText("all")
        self.samples.setSingleStep(1000)

    def _lay_out(self) -> QFormLayout:
        """The rows, in the order they are read (and tabbed through); the panel adds its lines below them."""
        form = QFormLayout()
        for label, field in (("Preset", self.preset), ("Task", self.task), ("Call", self.serve), ("Rate", self.rate),
                             ("Max batch", self.max_batch)):
            form.addRow(label, field)
        for field in (self.serve, self.rate, self.max_batch):  # a predict run's and a rate's: shown with their task
            form.setRowVisible(field, False)
        for label, field in (("Family", self.family), ("Your model", self.open_model), ("Cell", self.cell),
                             ("Heads", self.heads), ("Hidden layers", self.layers)):
            form.addRow(label, field)
        form.addRow(self.widths)
        for label, field in (("Activation", self.activation), ("Dropout", self.dropout), ("Batch size", self.batch),
                             ("Epochs", self.epochs), ("Time limit", self.time_limit), ("Optimizer", self.optimizer),
                             ("Learning rate", self.learning_rate)):
            form.addRow(label, field)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data, 1)
        data_row.addWidget(self.browse)
        form.addRow("Data", data_row)
        form.addRow("Sample limit", self.samples)
        self._column = QVBoxLayout(self)  # the form, and below it what the panel adds
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.addLayout(form)
        return form

    def _connect(self) -> None:
        self.family.currentIndexChanged.connect(self._on_family_changed)
        self.cell.currentIndexChanged.connect(self.edited)
        self.heads.valueChanged.connect(self.edited)
        self.layers.valueChanged.connect(self._on_layers_changed)
        self.widths.widths_changed.connect(self.edited)
        for spin in (self.dropout, self.batch, self.epochs, self.time_limit, self.learning_rate, self.samples,
                     self.rate, self.max_batch):
            spin.valueChanged.connect(self.edited)
        self.task.currentIndexChanged.connect(self._on_task_changed)
        for box in (self.activation, self.optimizer, self.task, self.serve):
            box.currentIndexChanged.connect(self.edited)
        self.data.currentTextChanged.connect(self.edited)
        for spin, name in ((self.layers, "Hidden layers"), (self.batch, "Batch size"), (self.epochs, "Epochs"),
                           (self.time_limit, "Time limit"), (self.samples, "Sample limit")):
            spin.clamped.connect(lambda text, name=name: self.input_adjusted.emit(f"{name}: {text}."))
        self.widths.value_clamped.connect(self.input_adjusted)
        self.browse.clicked.connect(self._on_browse_clicked)

    # ------------------------------------------------------------------ reading and showing

    def read_data(self) -> str:
        """The data source typed or chosen; raises ConfigError with a sentence for the user."""
        data = self.data.currentText().strip()
        if data and data not in DATA_SOURCES:
            if not data.endswith(".npz"):
                raise ConfigError(f"data source {data!r}: choose auto, mnist, synthetic or a .npz file")
            problem = data_file_problem(data)  # checked when chosen, not when a lane loads it
            if problem:
                raise ConfigError(problem)
        return data

    def read_model(self) -> ModelSpec:
        """Crossover's own model the controls show (a user's own is the panel's to read)."""
        return ModelSpec(self.widths.widths(), dropout=round(self.dropout.value(), 4),
                         activation=self.activation.currentText(), family=self.family.currentData(),
                         cell=self.cell.currentText(), heads=self.heads.value())

    def read_train(self, data: str) -> TrainSpec:
        """The training settings the controls show, and those of the config last shown that have no control."""
        at_rate = self.task.currentData() == RATE
        return dataclasses.replace(
            self._base.train, batch_size=self.batch.value(), epochs=self.epochs.value(),
            max_seconds=float(self.time_limit.value()) if self.time_limit.value() else None,
            optimizer=self.optimizer.currentText(), learning_rate=self.learning_rate.value(), data=data,
            samples=self.samples.value() or None, task=Task.PREDICT if at_rate else self.task.currentData(),
            serve=self.serve.currentData(), arrival_rate=float(self.rate.value()) if at_rate else None,
            max_batch=self.max_batch.value() if at_rate else 1)

    def controls(self) -> tuple[QWidget, ...]:
        """The controls show_config sets (the preset box and the buttons aside)."""
        return (self.task, self.serve, self.rate, self.max_batch, self.family, self.cell, self.heads, self.layers,
                self.widths, self.activation, self.dropout, self.time_limit, self.batch, self.epochs, self.optimizer,
                self.learning_rate, self.data, self.samples)

    def show_config(self, config: RunConfig) -> None:
        """Show `config` in every control, quietly (a user's own model must be in the family box already); settings
        with no control are kept from it."""
        self._base = config
        with signals_blocked(*self.controls()):
            t, m = config.train, config.model
            at_rate = t.arrival_rate is not None
            self.task.setCurrentIndex(max(self.task.findData(RATE if at_rate else t.task), 0))
            self.serve.setCurrentIndex(max(self.serve.findData(t.serve), 0))
            if at_rate:
                self.rate.setValue(int(round(t.arrival_rate or DEFAULT_RATE)))
                self.max_batch.setValue(t.max_batch)
            self.family.setCurrentIndex(max(self.family.findData(m.family), 0))
            if m.family in (SAVED, FACTORY):  # as when one is opened: a family chosen after it is not converted
                self._family_shown = m.family
            self.cell.setCurrentText(m.cell)
            self.heads.setValue(m.heads)
            self.show_family(m.family)
            if m.widths:  # a saved model has none: the sliders keep the last family's
                if m.factory is None:  # a factory has one width: the layer count stays the last family's
                    self.layers.setValue(len(m.widths))
                self.widths.set_widths(m.widths)
            self.activation.setCurrentText(m.activation)
            self.dropout.setValue(m.dropout)
            self.batch.setValue(t.batch_size)
            self.epochs.setValue(t.epochs)
            self.time_limit.setValue(int(round(t.max_seconds)) if t.max_seconds else 0)
            self.optimizer.setCurrentText(t.optimizer)
            self.learning_rate.setValue(t.learning_rate)
            self.data.setCurrentText(t.data)
            self.samples.setValue(t.samples or 0)

    def show_family(self, family: str) -> None:
        """The rows this family has (an RNN's cell, a transformer's heads), its layers' name, and its limit; a
        saved model has none of the layer rows (it is used as saved), a model factory one width (the first
        slider: its function builds the whole model from it)."""
        own = family in (SAVED, FACTORY)
        for row in (self.layers, self.activation, self.dropout):
            self._form.setRowVisible(row, not own)
        self._form.setRowVisible(self.widths, family != Family.SAVED)
        self._form.setRowVisible(self.cell, family == Family.RNN)
        self._form.setRowVisible(self.heads, family == Family.TRANSFORMER)
        self.widths.set_first_label("Width" if family == Family.FACTORY else "Layer 1")
        if family == Family.FACTORY:
            with signals_blocked(self.widths):
                self.widths.set_count(1)
        if own:
            return
        label = self._form.labelForField(self.layers)
        if isinstance(label, QLabel):
            label.setText(LAYER_LABELS[family])
        self.layers.setRange(1, LAYER_LIMITS[family])

    def show_task_rows(self, train: TrainSpec) -> None:
        """The predict call's row with the predict task, the rate's and max batch's with arrivals at a rate."""
        self._form.setRowVisible(self.serve, train.task == Task.PREDICT)
        self._form.setRowVisible(self.rate, train.arrival_rate is not None)
        self._form.setRowVisible(self.max_batch, train.arrival_rate is not None)

    def even_transformer(self, before: tuple[int, ...] | None) -> None:
        """A transformer's blocks share one d_model: the slider that moved from `before` (the widths read last)
        sets them all."""
        widths = self.widths.widths()
        if self.family.currentData() != Family.TRANSFORMER or len(set(widths)) <= 1:
            return
        moved = next((w for w, b in zip(widths, before if before is not None else widths) if w != b), widths[-1])
        with signals_blocked(self.widths):
            self.widths.set_widths((moved,) * len(widths))

    # ------------------------------------------------------------------ slots

    @Slot(int)
    def _on_layers_changed(self, count: int) -> None:
        self.widths.set_count(count)

    @Slot(int)
    def _on_task_changed(self, _index: int) -> None:
        """At an arrival rate a request is one sample by default (a server's request), as the CLI's --arrival-rate
        has it."""
        if self.task.currentData() == RATE and self.batch.value() == self._base.train.batch_size:
            self.batch.setValue(1)

    @Slot(int)
    def _on_family_changed(self, _index: int) -> None:
        family = self.family.currentData()
        before, self._family_shown = self._family_shown, family
        was = None
        if before in FAMILIES and family in FAMILIES and before != family:
            try:  # the model it was, at about the same cost in the new family (ModelSpec.in_family)
                was = ModelSpec(self.widths.widths(), family=before, cell=self.cell.currentText(),
                                heads=self.heads.value()).in_family(family)
            except ConfigError:
                was = None
        self.show_family(family)
        with signals_blocked(self.layers, self.widths):
            if was is not None:
                self.layers.setValue(len(was.widths))
                self.widths.set_count(len(was.widths))
                self.widths.set_widths(was.widths)
            if family != FACTORY and len(self.widths.widths()) != self.layers.value():  # back from one width
                self.widths.set_count(self.layers.value())
            if family == Family.TRANSFORMER:  # its blocks share one d_model: every slider to the first one's width
                widths = self.widths.widths()
                self.widths.set_widths((widths[0],) * len(widths))
        self.edited.emit()

    @Slot()
    def _on_browse_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Training data", "NumPy archives (*.npz)")
        if path:
            self.data.setCurrentText(path)
