"""Lane colours: a lane keeps its colour in every widget, plot and picture."""
from __future__ import annotations

from PySide6.QtGui import QColor

# Colour-blind-safe (Okabe-Ito); fixed for the common lanes so a lane keeps its colour everywhere.
_FIXED = {"cpu": "#0072B2", "cpu1": "#009E73", "gpu0": "#D55E00", "gpu1": "#CC79A7"}
_PALETTE = ("#E69F00", "#56B4E9", "#882255", "#117733", "#F0E442", "#332288", "#999933", "#AA4499")


def lane_color(lane: str) -> QColor:
    """The colour of a lane: the same in every widget and every run."""
    if "/" in lane:  # another machine's lane (LABEL/LANE, ssh://host/LANE): never drawn like this machine's
        return QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
    base = lane.split(":", 1)[-1]
    if lane in _FIXED:
        return QColor(_FIXED[lane])
    if base in _FIXED:  # jax:cpu is drawn like cpu, but darker, so both can share a plot
        return QColor(_FIXED[base]).darker(150)
    return QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
