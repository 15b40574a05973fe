"""Lane colours: a lane keeps its colour in every widget, plot and picture, readable in light and dark."""
from __future__ import annotations

from PySide6.QtGui import QColor

from .scheme import scheme_colors, readable

# Colour-blind-safe (Okabe-Ito); fixed for the common lanes so a lane keeps its colour everywhere.
_FIXED = {"cpu": "#0072B2", "cpu1": "#009E73", "gpu0": "#D55E00", "gpu1": "#CC79A7"}
_PALETTE = ("#E69F00", "#56B4E9", "#882255", "#117733", "#F0E442", "#332288", "#999933", "#AA4499")


def lane_color(lane: str, dark: bool | None = None) -> QColor:
    """The colour of a lane: the same in every widget and every run, standing out (3:1 or more) on the
    plots' ground of the dark or light scheme (None: the scheme in force)."""
    colors = scheme_colors(dark)
    base = lane.split(":", 1)[-1]
    if "/" in lane:  # another machine's lane (LABEL/LANE, ssh://host/LANE): never drawn like this machine's
        color = QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
    elif lane in _FIXED:
        color = QColor(_FIXED[lane])
    elif base in _FIXED:
        # jax:cpu is drawn like cpu, but further from the ground (darker on light, lighter on dark), so
        # both can share a plot.
        color = QColor(_FIXED[base])
        color = color.lighter(150) if colors.dark else color.darker(150)
    else:
        color = QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
    return readable(color, colors.background)
