"""The window's left column: the model and the lanes, Start and Stop, and a ramp through widths; it scrolls when short."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QScrollArea, QVBoxLayout, QWidget

from ..widgets.layouts import group
from ..widgets.file_dialogs import FileDialogs
from .lanes import LanesPanel
from .model import ModelPanel
from ..resources import icon


DEFAULT_RAMP = "16,64,256,1024,4096"
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
        self.ramp_widths = QLineEdit(DEFAULT_RAMP)
        self.ramp_widths.setAccessibleName("Ramp widths")
        self.ramp_widths.setToolTip("Widths for a ramp, comma-separated: every hidden layer of the model "
                                    "takes each in turn")
        self.ramp_button = QPushButton("Ramp")
        self.ramp_button.setToolTip("One run that steps every lane through these widths (each measured as a "
                                    "sweep point), so the lines cross as you watch (Ctrl+Shift+R)")
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
        ramp = QHBoxLayout()
        ramp.addWidget(QLabel("Ramp widths"))
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

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """As wide as the column can be drawn, with the scroll bar beside it: it scrolls up and down,
        never sideways, so any narrower would cut off the right-hand side of every row."""
        hint = super().minimumSizeHint()
        widget = self.widget()
        if widget is None:  # not yet set: __init__ sets the column
            return hint
        column = widget.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
        return QSize(max(hint.width(), column + 2 * self.frameWidth()), hint.height())
