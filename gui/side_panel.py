"""The window's left column: the model and the lanes, with Start and Stop under them, scrolling when short."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QScrollArea, QVBoxLayout, QWidget

from crossover_lab.gui.compare_tab import group
from crossover_lab.gui.file_dialogs import FileDialogs
from crossover_lab.gui.lanes_panel import LanesPanel
from crossover_lab.gui.model_panel import ModelPanel
from crossover_lab.gui.resources import icon


class SidePanel(QScrollArea):
    """Holds the panels that both tabs use; the window wires them."""

    def __init__(self, dialogs: FileDialogs | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_panel = ModelPanel(dialogs)
        self.lanes_panel = LanesPanel()
        self.start_button = QPushButton(icon("start"), "Start")
        self.stop_button = QPushButton(icon("stop"), "Stop")
        column = QWidget()
        layout = QVBoxLayout(column)
        layout.addWidget(group("Model", self.model_panel))
        layout.addWidget(group("Lanes", self.lanes_panel))
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        layout.addLayout(buttons)
        layout.addStretch(1)
        self.setWidget(column)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(390)
        # Tab goes straight to the controls (the area scrolls to the one in focus), not to the area first.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
