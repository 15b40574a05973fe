"""The model panel: presets, hidden layers and widths, training settings, and what the model costs."""
from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
                               QPushButton, QVBoxLayout, QWidget)

from ...core.config import (ACTIVATIONS, FACTORY, MAX_BATCH, MAX_RATE, OPTIMIZERS, SAVED, SERVE_WAYS, TASKS, ConfigError, FactoryModel,
                             ModelSpec, RunConfig, SavedModel)
from ...core.families import CELLS, FAMILIES, LAYER_LIMITS, Family
from ...core.presets import PRESETS, WINDOW_DEFAULT
from ...core.words.numbers import fmt_flops
from ...core.files.npz_check import data_file_problem
from ..widgets.file_dialogs import FileDialogs
from ..widgets.range_spin import RangeSpinBox
from ..settings import AppSettings
from ..widgets.width_slider import LayerWidths
from .factory_widths import FactoryWidths

DATA_SOURCES = ("auto", "mnist", "synthetic")
DATA_TIP = ("Training data. auto: MNIST from the Keras cache (downloaded once), else a synthetic "
            "MNIST-shaped set; mnist: MNIST or fail; synthetic: random MNIST-shaped data; or the path "
            "of a .npz file with x_train and y_train.")


FAMILY_TITLES = {"mlp": "MLP (dense layers)", "cnn": "CNN (convolutions)", "rnn": "RNN (LSTM or GRU)",
                 "transformer": "Transformer (encoder)"}
TASK_TITLES = {"train": "Train (time each step)", "predict": "Predict (time each call)",
               "load": "Predict under load"}
LOAD = "load"  # the Task chooser's third entry: the predict task with requests on their own schedule
DEFAULT_RATE = 200  # requests per second the load task starts at
SERVE_TITLES = {"keras": "Keras predict_on_batch", "compiled": "Compiled forward pass"}
LAYER_LABELS = {"mlp": "Hidden layers", "cnn": "Conv blocks", "rnn": "RNN layers", "transformer": "Encoder blocks"}
MODEL_FILTERS = "Your models (*.keras *.py);;Keras models (*.keras);;Model factories (*.py)"
SETTLE_MS = 300  # a width typed or stepped is asked for this long after the last change; a released slider at once


class ModelPanel(QWidget):
    """Edits one RunConfig; settings it has no control for (seed, XLA, feeding…) are kept as they were."""

    config_changed = Signal(object)  # RunConfig, or None while a setting is invalid (problem() says why)
    model_file_chosen = Signal(str)  # the path of a .keras or .py file to open: the window has a lane inspect it
    # A model factory's width the user settled on that no lane has counted yet: the window has a lane build it.
    factory_width_wanted = Signal(int)
    input_adjusted = Signal(str)  # a typed number was out of range and was clamped: the sentence says how

    def __init__(self, dialogs: FileDialogs | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dialogs = dialogs or FileDialogs(AppSettings())
        self._base = WINDOW_DEFAULT
        self._config: RunConfig | None = self._base  # built once per edit, in _on_field_changed
        self._problem = ""
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
        self.task = QComboBox()
        for name in (*TASKS, LOAD):
            self.task.addItem(TASK_TITLES[name], name)
        self.task.setToolTip("What is timed. Train: one training step (forward, backward, update). Predict: one "
                             "forward call per batch as a server makes it, input from host memory and the answer "
                             "back on the host; the weights are trained a few steps first, never timed. A "
                             "predict run's verdict speaks in latency, its p90 and p99 beside the median. Predict "
                             "under load: requests arrive on their own clock (Poisson, at the Rate), queue while "
                             "the lane is busy, and each is timed from its arrival to its answer; lanes serve one "
                             "after another, and each says whether it held the rate.")
        self.rate = self._int(1, int(MAX_RATE), "Requests per second arriving at the lane's server, whatever it is "
                              "doing (Poisson arrivals). Above what a lane can answer, its queue only grows: it "
                              "says it does not hold the rate.")
        self.rate.setValue(DEFAULT_RATE)
        self.rate.setSuffix(" requests/s")
        self.rate.setAccessibleName("Arrival rate")
        self.max_batch = self._int(1, MAX_BATCH, "Requests one call may answer: 1 serves them one at a time; more "
                                   "batches those that queued (dynamic batching, as TF Serving and Triton do).")
        self.max_batch.setAccessibleName("Max batch")
        self.task.setAccessibleName("Task")
        self.serve = QComboBox()
        for name in SERVE_WAYS:
            self.serve.addItem(SERVE_TITLES[name], name)
        self.serve.setToolTip("How a predict call is made. Keras predict_on_batch: what a Keras server calls, "
                              "with Keras' own predict machinery. Compiled forward pass: the backend's compiled "
                              "forward called directly, the floor a server could reach with the same arithmetic.")
        self.serve.setAccessibleName("Predict call")
        self.family = QComboBox()
        for name, title in FAMILY_TITLES.items():
            self.family.addItem(title, name)
        self.family.setToolTip("The kind of network. The width slider moves its width: units per hidden layer "
                               "(MLP), filters per block (CNN), units per recurrent layer (RNN) or d_model "
                               "(transformer, one for every block). Every family reads the same 28×28 images.")
        self.family.setAccessibleName("Model family")
        # Sized by a few characters, not by its longest entry (a saved model's name may be long).
        self.family.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.family.setMinimumContentsLength(12)
        self._saved: SavedModel | None = None  # a user's own model, once a lane has inspected it
        self._factory = FactoryWidths()  # a user's function of the width, with the widths counted so far
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._ask_factory_width)
        self.open_model = QPushButton("Open a model file…")
        self.open_model.setToolTip("Your own saved Keras 3 model (.keras): a lane loads it with safe mode on (a "
                                   "Lambda layer is refused, never run) and counts its FLOPs; it has no width: "
                                   "compare it along the batch size. Or a Python file with a function of the width "
                                   "that returns a keras.Model (.py): a lane imports it (your code runs there) and "
                                   "builds and counts each width you settle on.")
        self.open_model.clicked.connect(self._on_open_model_clicked)
        self.cell = self._combo(CELLS, "The RNN's recurrent layer: LSTM or GRU (tanh and sigmoid, as Keras "
                                       "defaults them, so a GPU lane may use cuDNN).")
        self.cell.setAccessibleName("Recurrent cell")
        self.heads = self._int(1, 64, "Attention heads of every encoder block: they must divide d_model.")
        self.layers = RangeSpinBox()
        self.layers.setRange(1, LAYER_LIMITS[Family.MLP])
        self.layers.setToolTip("How many layers of the family's kind sit between the 28×28 input and the 10 classes "
                               "(MLP 1-8, CNN 1-6, RNN 1-4, transformer 1-6).")
        self.widths = LayerWidths()
        self.activation = self._combo(ACTIVATIONS, "Activation of every hidden layer.")
        self.dropout = self._double(0.0, 0.95, 0.05, 2, "Dropout after every hidden layer (0 = none).")
        self.batch = self._int(1, 65536, "Samples per training step. Larger batches do more work per "
                                         "step, which favours a GPU.")
        self.epochs = self._int(1, 1000, "Passes over the training data.")
        self.time_limit = self._int(0, 36_000, "Each lane stops after this many seconds of steady training on a "
                                                "model, mid-epoch if need be (none: the epochs and the sample limit "
                                                "decide). A width dragged mid-run is a new model, with its own time.")
        self.time_limit.setSpecialValueText("none")
        self.time_limit.setSuffix(" s a lane")
        self.time_limit.setSingleStep(10)
        self.time_limit.setAccessibleName("Time limit")
        self.optimizer = self._combo(OPTIMIZERS, "The optimizer (its update cost grows with the parameters).")
        self.learning_rate = self._double(1e-5, 10.0, 1e-4, 5, "Learning rate of the optimizer.")
        self.data = QComboBox()
        self.data.setEditable(True)
        self.data.addItems(DATA_SOURCES)
        self.data.setToolTip(DATA_TIP)
        self.data.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.data.setMinimumContentsLength(10)
        # A combo box's accessible name is otherwise its current text ("auto"), not what it sets.
        for combo, name in ((self.data, "Data source"), (self.activation, "Activation"),
                            (self.optimizer, "Optimizer")):
            combo.setAccessibleName(name)
        browse = QPushButton("…")
        browse.setFixedWidth(28)
        browse.setToolTip("Choose a .npz file with x_train and y_train.")
        browse.setAccessibleName("Choose a data file")
        browse.clicked.connect(self._on_browse_clicked)
        self.samples = self._int(0, 10_000_000, "Train on at most this many samples (all: the whole set). "
                                                "Fewer samples make a shorter run with the same step times.")
        self.samples.setSpecialValueText("all")
        self.samples.setSingleStep(1000)
        self.cost = QLabel()
        self.cost.setObjectName("costLabel")
        self.cost.setWordWrap(True)  # a huge model's line must not set the width of the side panel
        self.cost.setToolTip("Trainable parameters, and floating-point operations of one training step "
                             "(forward and backward) at this batch size.")
        self.problem_label = QLabel()
        self.problem_label.setObjectName("problemLabel")
        self.problem_label.setWordWrap(True)
        self.problem_label.hide()

        form = QFormLayout()
        form.addRow("Preset", self.preset)
        form.addRow("Task", self.task)
        form.addRow("Call", self.serve)
        form.addRow("Rate", self.rate)
        form.addRow("Max batch", self.max_batch)
        form.setRowVisible(self.serve, False)  # a predict run's setting: shown with the predict task
        form.setRowVisible(self.rate, False)  # a load's: shown with the load task
        form.setRowVisible(self.max_batch, False)
        form.addRow("Family", self.family)
        form.addRow("Your model", self.open_model)
        form.addRow("Cell", self.cell)
        form.addRow("Heads", self.heads)
        form.addRow("Hidden layers", self.layers)
        form.addRow(self.widths)
        form.addRow("Activation", self.activation)
        form.addRow("Dropout", self.dropout)
        form.addRow("Batch size", self.batch)
        form.addRow("Epochs", self.epochs)
        form.addRow("Time limit", self.time_limit)
        form.addRow("Optimizer", self.optimizer)
        form.addRow("Learning rate", self.learning_rate)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data, 1)
        data_row.addWidget(browse)
        form.addRow("Data", data_row)
        form.addRow("Sample limit", self.samples)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        self._form = form
        layout.addWidget(self.cost)
        layout.addWidget(self.problem_label)

        self.preset.activated.connect(self._on_preset_activated)
        self.family.currentIndexChanged.connect(self._on_family_changed)
        self.cell.currentIndexChanged.connect(self._on_field_changed)
        self.heads.valueChanged.connect(self._on_field_changed)
        self.layers.valueChanged.connect(self._on_layers_changed)
        self.widths.widths_changed.connect(self._on_field_changed)
        for spin in (self.dropout, self.batch, self.epochs, self.time_limit, self.learning_rate, self.samples,
                     self.rate, self.max_batch):
            spin.valueChanged.connect(self._on_field_changed)
        self.task.currentIndexChanged.connect(self._on_task_changed)
        for combo in (self.activation, self.optimizer, self.task, self.serve):
            combo.currentIndexChanged.connect(self._on_field_changed)
        self.data.currentTextChanged.connect(self._on_field_changed)
        for spin, name in ((self.layers, "Hidden layers"), (self.batch, "Batch size"), (self.epochs, "Epochs"),
                           (self.time_limit, "Time limit"), (self.samples, "Sample limit")):
            spin.clamped.connect(lambda text, name=name: self.input_adjusted.emit(f"{name}: {text}."))
        self.widths.value_clamped.connect(self.input_adjusted)
        self.widths.sliders[0].sliderReleased.connect(self._ask_factory_width)
        self.set_config(WINDOW_DEFAULT)

    # ------------------------------------------------------------------ building

    @staticmethod
    def _int(lo: int, hi: int, tip: str) -> RangeSpinBox:
        spin = RangeSpinBox()
        spin.setRange(lo, hi)
        spin.setGroupSeparatorShown(True)
        spin.setToolTip(tip)
        return spin

    @staticmethod
    def _double(lo: float, hi: float, step: float, decimals: int, tip: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setDecimals(decimals)
        spin.setRange(lo, hi)
        spin.setSingleStep(step)
        spin.setToolTip(tip)
        return spin

    @staticmethod
    def _combo(items: tuple[str, ...], tip: str) -> QComboBox:
        combo = QComboBox()
        combo.addItems(items)
        combo.setToolTip(tip)
        return combo

    # ------------------------------------------------------------------ the config

    def _read_controls(self) -> RunConfig:
        """The configuration the controls show; raises ConfigError with a sentence for the user."""
        data = self.data.currentText().strip()
        if data and data not in DATA_SOURCES:
            if not data.endswith(".npz"):
                raise ConfigError(f"data source {data!r}: choose auto, mnist, synthetic or a .npz file")
            problem = data_file_problem(data)  # checked when chosen, not when a lane loads it
            if problem:
                raise ConfigError(problem)
        if self.family.currentData() == SAVED and self._saved is not None:
            model = ModelSpec(widths=(), family=SAVED, saved=self._saved)
        elif self.family.currentData() == FACTORY and self._factory.factory is not None:
            model = ModelSpec(self.widths.widths()[:1], family=FACTORY, factory=self._factory.factory)
        else:
            model = ModelSpec(self.widths.widths(), dropout=round(self.dropout.value(), 4),
                              activation=self.activation.currentText(), family=self.family.currentData(),
                              cell=self.cell.currentText(), heads=self.heads.value())
        load = self.task.currentData() == LOAD
        train = dataclasses.replace(
            self._base.train, batch_size=self.batch.value(), epochs=self.epochs.value(),
            max_seconds=float(self.time_limit.value()) if self.time_limit.value() else None,
            optimizer=self.optimizer.currentText(), learning_rate=self.learning_rate.value(), data=data,
            samples=self.samples.value() or None, task="predict" if load else self.task.currentData(),
            serve=self.serve.currentData(), arrival_rate=float(self.rate.value()) if load else None,
            max_batch=self.max_batch.value() if load else 1)
        return RunConfig(model, train)

    def config(self) -> RunConfig:
        """The edited configuration; raises ConfigError with the problem while a setting is invalid."""
        if self._config is None:
            raise ConfigError(self._problem)
        return self._config

    def current(self) -> RunConfig | None:
        """The edited configuration, or None while a setting is invalid."""
        return self._config

    def save_state(self, settings: AppSettings) -> None:
        """The last valid configuration (an invalid edit keeps the one before)."""
        if self._config is not None:
            settings.set_config(self._config)

    def restore_state(self, settings: AppSettings) -> None:
        config = settings.config()
        if config is not None:
            self.set_config(config)

    def problem(self) -> str:
        return self._problem

    def set_config(self, config: RunConfig) -> None:
        """Show `config` in every control; one config_changed follows."""
        self._base = config
        controls = (self.task, self.serve, self.rate, self.max_batch, self.family, self.cell, self.heads, self.layers, self.widths, self.activation, self.dropout, self.time_limit,
                    self.batch, self.epochs, self.optimizer, self.learning_rate, self.data, self.samples)
        for control in controls:
            control.blockSignals(True)
        load = config.train.arrival_rate is not None
        self.task.setCurrentIndex(max(self.task.findData(LOAD if load else config.train.task), 0))
        self.serve.setCurrentIndex(max(self.serve.findData(config.train.serve), 0))
        if load:
            self.rate.setValue(int(round(config.train.arrival_rate or DEFAULT_RATE)))
            self.max_batch.setValue(config.train.max_batch)
        if config.model.saved is not None:
            self._offer_saved(config.model.saved)
        if config.model.factory is not None:
            self._offer_factory(config.model.factory)
        self.family.setCurrentIndex(max(self.family.findData(config.model.family), 0))
        self.cell.setCurrentText(config.model.cell)
        self.heads.setValue(config.model.heads)
        self._show_family(config.model.family)
        if config.model.widths:  # a saved model has none: the sliders keep the last family's
            if config.model.factory is None:  # a factory has one width: the layer count stays the last family's
                self.layers.setValue(len(config.model.widths))
            self.widths.set_widths(config.model.widths)
        self.activation.setCurrentText(config.model.activation)
        self.dropout.setValue(config.model.dropout)
        t = config.train
        self.batch.setValue(t.batch_size)
        self.epochs.setValue(t.epochs)
        self.time_limit.setValue(int(round(t.max_seconds)) if t.max_seconds else 0)
        self.optimizer.setCurrentText(t.optimizer)
        self.learning_rate.setValue(t.learning_rate)
        self.data.setCurrentText(t.data)
        self.samples.setValue(t.samples or 0)
        for control in controls:
            control.blockSignals(False)
        self._on_field_changed()
        self._ask_factory_width()

    def apply_preset(self, name: str) -> None:
        """A preset's model and training settings, exactly; the data source and sample limit stay."""
        current = self.current() or self._base
        preset = PRESETS[name].config
        self.set_config(preset.replace(data=current.train.data, samples=current.train.samples))

    # ------------------------------------------------------------------ slots

    @Slot(int)
    def _on_preset_activated(self, index: int) -> None:
        name = self.preset.itemData(index)
        if name:
            self.apply_preset(name)  # the box goes on showing it until a setting differs from the preset's

    def _follow_preset(self, config: RunConfig) -> None:
        """Show the preset the settings are (its data source and sample limit aside), or "Choose a preset…"."""
        name = self.preset.currentData()
        if not name:
            return
        preset = PRESETS[name].config.replace(data=config.train.data, samples=config.train.samples)
        if preset.model != config.model or preset.train != config.train:
            self.preset.blockSignals(True)
            self.preset.setCurrentIndex(0)
            self.preset.blockSignals(False)

    @Slot(int)
    def _on_layers_changed(self, count: int) -> None:
        self.widths.set_count(count)

    @Slot(int)
    def _on_task_changed(self, _index: int) -> None:
        """Under load a request is one sample by default (a server's request), as the CLI's --arrival-rate has it."""
        if self.task.currentData() == LOAD and self.batch.value() == self._base.train.batch_size:
            self.batch.setValue(1)

    @Slot(int)
    def _on_family_changed(self, _index: int) -> None:
        family = self.family.currentData()
        before = getattr(self, "_family_shown", "mlp")
        self._family_shown = family
        was = None
        if before in FAMILIES and family in FAMILIES and before != family:
            try:  # the model it was, at about the same cost in the new family (ModelSpec.in_family)
                was = ModelSpec(self.widths.widths(), family=before, cell=self.cell.currentText(),
                                heads=self.heads.value()).in_family(family)
            except ConfigError:
                was = None
        self._show_family(family)
        if was is not None:
            self.layers.blockSignals(True)
            self.layers.setValue(len(was.widths))
            self.layers.blockSignals(False)
            self.widths.blockSignals(True)
            self.widths.set_count(len(was.widths))
            self.widths.set_widths(was.widths)
            self.widths.blockSignals(False)
        if family != FACTORY and len(self.widths.widths()) != self.layers.value():  # back from a factory's one width
            self.widths.blockSignals(True)
            self.widths.set_count(self.layers.value())
            self.widths.blockSignals(False)
        if family == Family.TRANSFORMER:  # its blocks share one d_model: every slider to the first one's width
            widths = self.widths.widths()
            self.widths.blockSignals(True)
            self.widths.set_widths((widths[0],) * len(widths))
            self.widths.blockSignals(False)
        self._on_field_changed()

    def set_saved_model(self, saved: SavedModel) -> None:
        """Show a user's own model (as a lane found it) and choose it; one config_changed follows."""
        self._offer_saved(saved)
        index = self.family.findData(SAVED)
        if self.family.currentIndex() == index:  # another file in its place: no index change to follow
            self._on_field_changed()
        else:
            self.family.setCurrentIndex(index)  # _on_family_changed shows its rows

    def set_factory(self, factory: FactoryModel) -> None:
        """Show a user's model factory (checked, perhaps not built yet) and choose it at the width the first slider
        shows; one config_changed follows, and factory_width_wanted if no lane has counted that width."""
        self._offer_factory(factory, fresh=True)
        index = self.family.findData(FACTORY)
        if self.family.currentIndex() == index:
            self._on_field_changed()
        else:
            self.family.setCurrentIndex(index)  # _on_family_changed shows its rows
        self._ask_factory_width()

    def add_factory_widths(self, found: FactoryModel) -> None:
        """What a lane found of the factory shown (widths built and counted): kept, and the cost said; a factory
        that is no longer the one shown (another file opened meanwhile) is ignored."""
        if not self._factory.add(found):
            return
        if self.family.currentData() == FACTORY:
            self._on_field_changed()

    def note_factory_width(self, width: int, note: str, waiting: bool = False) -> None:
        """Why the factory's `width` has no figures (it could not be built; with `waiting`, the lanes are busy
        measuring and it is asked again by lanes_free): the cost says it in place of "counting…"."""
        self._factory.note(width, note, waiting)
        if self.family.currentData() == FACTORY:
            self._on_field_changed()

    def lanes_free(self) -> None:
        """What measured has ended: a width that waited for the lanes is asked for now."""
        self._factory.free()
        if self.family.currentData() == FACTORY:
            self._on_field_changed()
        self._ask_factory_width()

    def factory(self) -> FactoryModel | None:
        """The model factory the panel holds (chosen or not), with every width a lane counted for it."""
        return self._factory.factory

    @Slot()
    def _ask_factory_width(self) -> None:
        """The width the user settled on, asked for once it is let go (never each width a drag passes)."""
        self._settle.stop()
        if self.family.currentData() != FACTORY or self.widths.sliders[0].isSliderDown():
            return
        width = self.widths.widths()[0]
        if self._factory.wanted(width):
            self.factory_width_wanted.emit(width)

    def _offer_factory(self, factory: FactoryModel, fresh: bool = False) -> None:
        """The family box's entry for the model factory, added once and renamed for another function (`fresh`: one
        just opened, whose widths start without notes)."""
        factory = self._factory.show(factory, fresh)
        self._offer(FACTORY, f"Your model: {factory.function}(width)",
                    f"{factory.path}:{factory.function} · sha256 {factory.sha256[:12]}… · a lane builds and counts "
                    "each width")

    def _offer_saved(self, saved: SavedModel) -> None:
        """The family box's entry for the saved model, added once and renamed for another file."""
        self._saved = saved
        self._offer(SAVED, f"Your model: {saved.name}", f"{saved.path} · sha256 {saved.sha256[:12]}… · input "
                                                      f"{'x'.join(map(str, saved.input_shape))}, {saved.head_words}")

    def _offer(self, kind: str, title: str, tip: str) -> None:
        """The family box's one entry for a user's model of `kind` (saved, factory): added once, renamed after."""
        index = self.family.findData(kind)
        if index < 0:
            self.family.blockSignals(True)
            self.family.addItem(title, kind)
            self.family.blockSignals(False)
            index = self.family.count() - 1
        self.family.setItemText(index, title)
        self.family.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)

    @Slot()
    def _on_open_model_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Your model", MODEL_FILTERS)
        if path:
            self.model_file_chosen.emit(path)

    def _show_family(self, family: str) -> None:
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
            self.widths.blockSignals(True)
            self.widths.set_count(1)
            self.widths.blockSignals(False)
        if own:
            return
        label = self._form.labelForField(self.layers)
        if isinstance(label, QLabel):
            label.setText(LAYER_LABELS[family])
        self.layers.setRange(1, LAYER_LIMITS[family])

    @Slot()
    def _on_browse_clicked(self) -> None:
        path = self._dialogs.open_path(self, "Training data", "NumPy archives (*.npz)")
        if path:
            self.data.setCurrentText(path)

    @Slot()
    def _on_field_changed(self) -> None:
        widths = self.widths.widths()
        if self.family.currentData() == Family.TRANSFORMER and len(set(widths)) > 1:
            # One d_model for every block: the slider just moved sets them all.
            before = self._config.model.widths if self._config is not None else widths
            moved = next((w for w, b in zip(widths, before) if w != b), widths[-1])
            self.widths.blockSignals(True)
            self.widths.set_widths((moved,) * len(widths))
            self.widths.blockSignals(False)
        try:
            config = self._read_controls()
        except ConfigError as exc:
            self._config = None
            self._problem = str(exc)
            self.problem_label.setText(self._problem[0].upper() + self._problem[1:] + ".")
            self.problem_label.show()
            self.cost.setText("")
            self.config_changed.emit(None)
            return
        self._config, self._problem = config, ""
        self.problem_label.hide()
        self._follow_preset(config)
        batch = config.train.batch_size
        predict = config.train.task == "predict"
        self._form.setRowVisible(self.serve, predict)
        self._form.setRowVisible(self.rate, config.train.arrival_rate is not None)
        self._form.setRowVisible(self.max_batch, config.train.arrival_rate is not None)
        factory = config.model.factory
        if factory is not None and config.model.figures is None:  # not built by a lane yet: nothing to claim
            width = config.model.widths[0]
            self.cost.setText(self._factory.cost_words(width))
        else:
            self.cost.setText(f"{config.model.label()}\n{config.model.params:,} parameters · "
                              f"{fmt_flops(config.flops_per_batch)} per {'call' if predict else 'step'} at batch "
                              f"{batch}")
        self.config_changed.emit(config)
        if factory is not None and not self.widths.sliders[0].isSliderDown():
            self._settle.start()  # a width typed or stepped is asked once the edits pause
