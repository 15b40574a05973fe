"""Lane colours: a lane keeps its colour in every widget, plot and picture, readable in light and dark."""
from __future__ import annotations

from PySide6.QtGui import QColor

from ...core.colours import lane_hex
from .scheme import scheme_colors, readable


def lane_color(lane: str, dark: bool | None = None) -> QColor:
    """The colour of a lane: the same in every widget and every run, standing out (3:1 or more) on the
    plots' ground of the dark or light scheme (None: the scheme in force)."""
    colors = scheme_colors(dark)
    return readable(QColor(lane_hex(lane)), colors.background)  # the report's colour (core/colours.py), readable here

