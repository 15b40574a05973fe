"""Each panel's part of the window state, written to and read from AppSettings at close and launch."""
from __future__ import annotations

from typing import TYPE_CHECKING

from crossover_lab.gui.settings import AppSettings

if TYPE_CHECKING:
    from PySide6.QtWidgets import QSplitter

    from crossover_lab.gui.main_window import MainWindow


def _splitters(window: MainWindow) -> tuple[QSplitter, ...]:
    return (window.main_split, window.right_split, window.top_split, window.bottom_split)


def restore_window(window: MainWindow, settings: AppSettings) -> None:
    """The last configuration, lanes, schedule, plot toggles, geometry and splitters; defaults where unset."""
    config = settings.config()
    if config is not None:
        window.model_panel.set_config(config)
    lanes = settings.lanes()
    if lanes is not None:
        window.lanes_panel.select(lanes)
    window.lanes_panel.set_schedule(settings.text("run/schedule", "concurrent"))
    plot = window.plot
    plot.log_y.setChecked(settings.flag("plot/log_y"))
    plot.x_axis.setCurrentIndex(max(0, plot.x_axis.findData(settings.text("plot/x_axis", "batch"))))
    geometry = settings.state("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    for split in _splitters(window):
        state = settings.state(f"window/{split.objectName()}")
        if state is not None:
            split.restoreState(state)


def save_window(window: MainWindow, settings: AppSettings) -> None:
    """Write what restore_window() reads; an invalid configuration keeps the last valid one."""
    config = window.model_panel.current()
    if config is not None:
        settings.set_config(config)
    settings.set_lanes(window.lanes_panel.wanted_names())
    settings.set_text("run/schedule", window.lanes_panel.schedule())
    settings.set_flag("plot/log_y", window.plot.log_y.isChecked())
    settings.set_text("plot/x_axis", window.plot.x_axis.currentData())
    settings.set_state("window/geometry", window.saveGeometry())
    for split in _splitters(window):
        settings.set_state(f"window/{split.objectName()}", split.saveState())
    settings.sync()
