"""A user's own model in the model panel ("Your model"): a saved Keras file or a model factory, opened from the form's
file button, shown as one entry of the family box, and, for a factory, the widths a lane is asked to build."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from ...core.config import FACTORY, SAVED, FactoryModel, ModelSpec, SavedModel
from ..widgets.file_dialogs import FileDialogs
from .factory_widths import FactoryWidths
from .model_form import ModelForm
from ..widgets.signals import signals_blocked

MODEL_FILTERS = "Your models (*.keras *.py);;Keras models (*.keras);;Model factories (*.py)"
SETTLE_MS = 300  # a width typed or stepped is asked for this long after the last change; a released slider at once


class YourModel(QObject):
    """The saved model and the model factory a form offers (once a lane has inspected them), and the factory's
    widths: those counted, and the one the user settled on that a lane should build."""

    file_chosen = Signal(str)  # the path of a .keras or .py file to open
    width_wanted = Signal(int)  # a factory width the user settled on that no lane has counted yet

    def __init__(self, form: ModelForm, dialogs: FileDialogs) -> None:
        super().__init__(form)
        self._form = form
        self._dialogs = dialogs
        self._saved: SavedModel | None = None  # a user's own model, once a lane has inspected it
        self._factory = FactoryWidths()  # a user's function of the width, with the widths counted so far
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.ask_width)
        form.open_model.clicked.connect(self._on_open_model_clicked)
        form.widths.sliders[0].sliderReleased.connect(self.ask_width)

    @property
    def factory(self) -> FactoryModel | None:
        """The model factory held (chosen or not), with every width a lane counted for it."""
        return self._factory.factory

    def chosen(self) -> bool:
        """Whether the family box shows the model factory."""
        return self._form.family.currentData() == FACTORY

    def spec(self) -> ModelSpec | None:
        """The user's model the family box shows, or None (Crossover's own, or one not opened yet)."""
        family = self._form.family.currentData()
        if family == SAVED and self._saved is not None:
            return ModelSpec(widths=(), family=SAVED, saved=self._saved)
        if family == FACTORY and self._factory.factory is not None:
            return ModelSpec(self._form.widths.widths()[:1], family=FACTORY, factory=self._factory.factory)
        return None

    def offer_model(self, model: ModelSpec) -> None:
        """The family box's entry for the user's model in `model` (a config shown), if it holds one."""
        if model.saved is not None:
            self.offer_saved(model.saved)
        if model.factory is not None:
            self.offer_factory(model.factory)

    def offer_saved(self, saved: SavedModel) -> None:
        """The family box's entry for the saved model, added once and renamed for another file."""
        self._saved = saved
        self._offer(SAVED, f"Your model: {saved.name}", f"{saved.path} · sha256 {saved.sha256[:12]}… · input "
                                                      f"{'x'.join(map(str, saved.input_shape))}, {saved.head_words}")

    def offer_factory(self, factory: FactoryModel, fresh: bool = False) -> None:
        """The family box's entry for the model factory, added once and renamed for another function (`fresh`: one
        just opened, whose widths start without notes)."""
        factory = self._factory.show(factory, fresh)
        self._offer(FACTORY, f"Your model: {factory.function}(width)",
                    f"{factory.path}:{factory.function} · sha256 {factory.sha256[:12]}… · a lane builds and counts "
                    "each width")

    def _offer(self, kind: str, title: str, tip: str) -> None:
        """The family box's one entry for a user's model of `kind` (saved, factory): added once, renamed after."""
        family = self._form.family
        index = family.findData(kind)
        if index < 0:
            with signals_blocked(family):
                family.addItem(title, kind)
            index = family.count() - 1
        family.setItemText(index, title)
        family.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)

    def add(self, found: FactoryModel) -> bool:
        """What a lane found of the factory held, kept; False (nothing kept) for another factory."""
        return self._factory.add(found)

    def note(self, width: int, note: str, waiting: bool = False) -> None:
        """Why the factory's `width` has no figures; with `waiting`, it is asked again once the lanes are free."""
        self._factory.note(width, note, waiting)

    def free(self) -> None:
        """The lanes are free: the widths that waited for them are asked for again."""
        self._factory.free()

    def cost_words(self, width: int) -> str:
        """What the cost line says of a factory width with no figures yet."""
        return self._factory.cost_words(width)

    def settle(self) -> None:
        """A width was typed or stepped: it is asked for once the edits pause."""
        self._settle.start()

    @Slot()
    def ask_width(self) -> None:
        """The width the user settled on, asked for once it is let go (never each width a drag passes)."""
        self._settle.stop()
        if not self.chosen() or self._form.widths.sliders[0].isSliderDown():
            return
        width = self._form.widths.widths()[0]
        if self._factory.wanted(width):
            self.width_wanted.emit(width)

    @Slot()
    def _on_open_model_clicked(self) -> None:
        path = self._dialogs.open_path(self._form, "Your model", MODEL_FILTERS)
        if path:
            self.file_chosen.emit(path)
