"""The window's left column: the model and the lanes, Start and Stop, and a ramp through widths or batch sizes; it
scrolls when short."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QScrollArea, QVBoxLayout, QWidget

from ..widgets.layouts import group
from ..widgets.file_dialogs import FileDialogs
from .lanes import LanesPanel
from .model import ModelPanel
from ..resources import icon
from ..widgets.tips import say_why_not


DEFAULT_RAMP = "16,64,256,1024,4096"
DEFAULT_BATCH_RAMP = "1,8,64,512"
RAMP_AXES = (("width", "widths", "Ramp widths", "Widths for a ramp, comma-separated: every hidden layer of the model "
              "takes each in turn"),
             ("batch", "batch sizes", "Ramp batch sizes", "Batch sizes for a ramp, comma-separated: the model as it "
              "is, trained at each batch size in turn (your own model's ramp: it has no width)"))
MOST_WIDTH = 480  # wider only spreads the fields: a big window's extra room goes to the plots


class SidePanel(QScrollArea):
    """Holds the panels that both tabs use; the window wires them."""

    ramp_requested = Signal(str)  # the widths typed for a ramp ("16,64,256"), to be checked by the window

    def __init__(self, dialogs: FileDialogs | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_panel = ModelPanel(dialogs)
        self.lanes_panel = LanesPanel()
        self.start_button = QPushButton(icon("start"), "Start")
        self.stop_button = QPushButton(icon("stop"), "Stop")
        self.ramp_widths = QLineEdit(DEFAULT_RAMP)  # the ramp's widths, or its batch sizes (ramp_axis)
        self.ramp_axis = QComboBox()
        for axis, label, _name, _tip in RAMP_AXES:
            self.ramp_axis.addItem(label, axis)
        self.ramp_axis.setAccessibleName("Ramp through")
        self.ramp_axis.setToolTip("What a ramp steps through: the model's width, or its batch size")
        self._ramp_texts = {"width": DEFAULT_RAMP, "batch": DEFAULT_BATCH_RAMP}  # each axis keeps what was typed
        self._axis = "width"
        self.ramp_axis.currentIndexChanged.connect(self._on_ramp_axis)
        self.ramp_button = QPushButton("Ramp")
        self.ramp_button.setToolTip("One run that steps every lane through these widths or batch sizes (each "
                                    "measured as a sweep point), so the lines cross as you watch (Ctrl+Shift+R)")
        self._on_ramp_axis()
        self.ramp_button.clicked.connect(lambda: self.ramp_requested.emit(self.ramp_widths.text()))
        self.ramp_widths.returnPressed.connect(self.ramp_button.click)
        column = QWidget()
        layout = QVBoxLayout(column)
        layout.addWidget(group("Model", self.model_panel))
        layout.addWidget(group("Lanes", self.lanes_panel))
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        layout.addLayout(buttons)
        through = QHBoxLayout()
        through.addWidget(QLabel("Ramp through"))
        through.addWidget(self.ramp_axis, 1)
        layout.addLayout(through)
        ramp = QHBoxLayout()
        ramp.addWidget(self.ramp_widths, 1)
        ramp.addWidget(self.ramp_button)
        layout.addLayout(ramp)
        layout.addStretch(1)
        self.setWidget(column)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMaximumWidth(MOST_WIDTH)
        # Tab goes straight to the controls (the area scrolls to the one in focus), not to the area first.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def ramp_along(self) -> str:
        """What the ramp steps through: "width" or "batch"."""
        return str(self.ramp_axis.currentData())

    def set_startable(self, ok: bool, why_not: str) -> None:
        """Start and Ramp can start, or say why not."""
        for button in (self.start_button, self.ramp_button):
            button.setEnabled(ok)
            say_why_not(button, why_not)

    def fit_model(self, saved: bool, running: bool) -> None:
        """A saved model has no width: it ramps through batch sizes, and the ramp's axis stays there."""
        if saved:
            self.set_ramp_along("batch")
        self.ramp_axis.setEnabled(not saved and not running)
        say_why_not(self.ramp_axis, "Your model has no width: it ramps through batch sizes." if saved else "")

    def set_ramp_along(self, axis: str) -> None:
        self.ramp_axis.setCurrentIndex(max(self.ramp_axis.findData(axis), 0))

    def _on_ramp_axis(self) -> None:
        axis = self.ramp_along()
        if axis != self._axis:
            self._ramp_texts[self._axis] = self.ramp_widths.text()
            self._axis = axis
            self.ramp_widths.setText(self._ramp_texts[axis])
        _axis, _label, name, tip = next(a for a in RAMP_AXES if a[0] == axis)
        self.ramp_widths.setAccessibleName(name)
        self.ramp_widths.setToolTip(tip)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """As wide as the column can be drawn, with the scroll bar beside it: it scrolls up and down,
        never sideways, so any narrower would cut off the right-hand side of every row."""
        hint = super().minimumSizeHint()
        widget = self.widget()
        if widget is None:  # not yet set: __init__ sets the column
            return hint
        column = widget.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
        return QSize(max(hint.width(), column + 2 * self.frameWidth()), hint.height())
