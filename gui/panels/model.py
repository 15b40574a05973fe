"""The model panel: presets, hidden layers and widths, training settings, and what the model costs.

The form (model_form.py) holds the controls and reads them; a user's own model, saved or a factory of the width,
is your_model.py's; the panel puts the two together into one RunConfig and says what it costs."""
from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

from ...core.config import FACTORY, SAVED, ConfigError, FactoryModel, RunConfig, SavedModel, Task
from ...core.presets import PRESETS, WINDOW_DEFAULT
from ...core.words.numbers import fmt_flops
from ..settings import AppSettings
from ..widgets.file_dialogs import FileDialogs
from .model_form import ModelForm
from ..widgets.signals import signals_blocked
from .your_model import YourModel


class ModelPanel(ModelForm):
    """Edits one RunConfig; settings it has no control for (seed, XLA, feeding…) are kept as they were."""

    config_changed = Signal(object)  # RunConfig, or None while a setting is invalid (problem() says why)
    model_file_chosen = Signal(str)  # the path of a .keras or .py file to open: the window has a lane inspect it
    # A model factory's width the user settled on that no lane has counted yet: the window has a lane build it.
    factory_width_wanted = Signal(int)

    def __init__(self, dialogs: FileDialogs | None = None, parent: QWidget | None = None) -> None:
        super().__init__(dialogs or FileDialogs(AppSettings()), parent)
        self._config: RunConfig | None = self._base  # built once per edit, in _on_field_changed
        self._problem = ""
        self.cost = QLabel()
        self.cost.setObjectName("costLabel")
        self.cost.setWordWrap(True)  # a huge model's line must not set the width of the side panel
        self.cost.setToolTip("Trainable parameters, and floating-point operations of one training step "
                             "(forward and backward) at this batch size.")
        self.problem_label = QLabel()
        self.problem_label.setObjectName("problemLabel")
        self.problem_label.setWordWrap(True)
        self.problem_label.hide()
        self._column.addWidget(self.cost)
        self._column.addWidget(self.problem_label)
        self._your_model = YourModel(self, self._dialogs)
        self._your_model.file_chosen.connect(self.model_file_chosen)
        self._your_model.width_wanted.connect(self.factory_width_wanted)
        self.preset.activated.connect(self._on_preset_activated)
        self.edited.connect(self._on_field_changed)
        self.set_config(WINDOW_DEFAULT)

    # ------------------------------------------------------------------ the config

    def config(self) -> RunConfig:
        """The edited configuration; raises ConfigError with the problem while a setting is invalid."""
        if self._config is None:
            raise ConfigError(self._problem)
        return self._config

    def current(self) -> RunConfig | None:
        """The edited configuration, or None while a setting is invalid."""
        return self._config

    def problem(self) -> str:
        return self._problem

    def save_state(self, settings: AppSettings) -> None:
        """The last valid configuration (an invalid edit keeps the one before)."""
        if self._config is not None:
            settings.set_config(self._config)

    def restore_state(self, settings: AppSettings) -> None:
        config = settings.config()
        if config is not None:
            self.set_config(config)

    def set_config(self, config: RunConfig) -> None:
        """Show `config` in every control; one config_changed follows."""
        with signals_blocked(self.family):
            self._your_model.offer_model(config.model)
        self.show_config(config)
        self._on_field_changed()
        self._your_model.ask_width()

    def apply_preset(self, name: str) -> None:
        """A preset's model and training settings, exactly; the data source and sample limit stay."""
        current = self.current() or self._base
        preset = PRESETS[name].config
        self.set_config(preset.replace(data=current.train.data, samples=current.train.samples))

    def _read_controls(self) -> RunConfig:
        """The configuration the controls show; raises ConfigError with a sentence for the user."""
        data = self.read_data()
        model = self._your_model.spec()
        if model is None:
            model = self.read_model()
        return RunConfig(model, self.read_train(data))

    # ------------------------------------------------------------------ a user's own model

    def set_saved_model(self, saved: SavedModel) -> None:
        """Show a user's own model (as a lane found it) and choose it; one config_changed follows."""
        self._your_model.offer_saved(saved)
        self._choose(SAVED)

    def set_factory(self, factory: FactoryModel) -> None:
        """Show a user's model factory (checked, perhaps not built yet) and choose it at the width the first slider
        shows; one config_changed follows, and factory_width_wanted if no lane has counted that width."""
        self._your_model.offer_factory(factory, fresh=True)
        self._choose(FACTORY)
        self._your_model.ask_width()

    def _choose(self, kind: str) -> None:
        """The family box to the user's model of `kind`, whose entry was just offered."""
        index = self.family.findData(kind)
        if self.family.currentIndex() == index:  # another file in its place: no index change to follow
            self._on_field_changed()
        else:
            self.family.setCurrentIndex(index)  # _on_family_changed shows its rows

    def add_factory_widths(self, found: FactoryModel) -> None:
        """What a lane found of the factory shown (widths built and counted): kept, and the cost said; a factory
        that is no longer the one shown (another file opened meanwhile) is ignored."""
        if self._your_model.add(found) and self._your_model.chosen():
            self._on_field_changed()

    def note_factory_width(self, width: int, note: str, waiting: bool = False) -> None:
        """Why the factory's `width` has no figures (it could not be built; with `waiting`, the lanes are busy
        measuring and it is asked again by lanes_free): the cost says it in place of "counting…"."""
        self._your_model.note(width, note, waiting)
        if self._your_model.chosen():
            self._on_field_changed()

    def lanes_free(self) -> None:
        """What measured has ended: a width that waited for the lanes is asked for now."""
        self._your_model.free()
        if self._your_model.chosen():
            self._on_field_changed()
        self._your_model.ask_width()

    def factory(self) -> FactoryModel | None:
        """The model factory the panel holds (chosen or not), with every width a lane counted for it."""
        return self._your_model.factory

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
            with signals_blocked(self.preset):
                self.preset.setCurrentIndex(0)

    @Slot()
    def _on_field_changed(self) -> None:
        self.even_transformer(self._config.model.widths if self._config is not None else None)
        try:
            config = self._read_controls()
        except ConfigError as exc:
            self._show_problem(str(exc))
            return
        self._config, self._problem = config, ""
        self.problem_label.hide()
        self._follow_preset(config)
        self.show_task_rows(config.train)
        self.cost.setText(self._cost_words(config))
        self.config_changed.emit(config)
        if config.model.factory is not None and not self.widths.sliders[0].isSliderDown():
            self._your_model.settle()  # a width typed or stepped is asked once the edits pause

    def _show_problem(self, problem: str) -> None:
        """No config while a setting is invalid: the problem said in place of the cost."""
        self._config, self._problem = None, problem
        self.problem_label.setText(problem[0].upper() + problem[1:] + ".")
        self.problem_label.show()
        self.cost.setText("")
        self.config_changed.emit(None)

    def _cost_words(self, config: RunConfig) -> str:
        """Parameters and FLOPs of one step (or call) at the batch size; a factory width not built yet, why."""
        if config.model.factory is not None and config.model.figures is None:  # no lane built it: nothing to claim
            return self._your_model.cost_words(config.model.widths[0])
        predict = config.train.task == Task.PREDICT
        return (f"{config.model.label()}\n{config.model.params:,} parameters · {fmt_flops(config.flops_per_batch)} "
                f"per {'call' if predict else 'step'} at batch {config.train.batch_size}")
