"""Lane colours: a lane keeps its colour in every widget, plot and picture, readable in light and dark."""
from __future__ import annotations

from PySide6.QtGui import QColor

from .scheme import scheme_colors, readable

# Colour-blind-safe (Okabe-Ito first, then Paul Tol's muted scheme, and ColorBrewer Dark2's green for jax:gpu0);
# fixed for the lanes of one machine so a lane keeps its colour everywhere, and lanes that share a plot differ from
# each other, not only from the ground: cpu and jax:cpu are blue and pink, never two blues, and jax:cpu and jax:gpu0
# (the pair of a JAX machine with a GPU) pink and green, never two pinks (chosen so that every two differ by 20
# degrees of hue or by lightness, on either ground).
_FIXED = {"cpu": "#0072B2", "cpu1": "#009E73", "gpu0": "#D55E00", "gpu1": "#AA4499",
          "jax:cpu": "#CC79A7", "jax:cpu1": "#F0E442", "jax:gpu0": "#66A61E", "jax:gpu1": "#999933",
          "torch:cpu": "#332288", "torch:cpu1": "#117733", "torch:gpu0": "#88CCEE", "torch:gpu1": "#44AA99"}
_PALETTE = ("#E69F00", "#56B4E9", "#882255", "#117733", "#F0E442", "#332288", "#999933", "#AA4499")


def lane_color(lane: str, dark: bool | None = None) -> QColor:
    """The colour of a lane: the same in every widget and every run, standing out (3:1 or more) on the
    plots' ground of the dark or light scheme (None: the scheme in force)."""
    colors = scheme_colors(dark)
    if "/" in lane:  # another machine's lane (LABEL/LANE, ssh://host/LANE): never drawn like this machine's
        color = QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
    elif lane in _FIXED:
        color = QColor(_FIXED[lane])
    else:  # a lane with a thread count of its own (cpu4, jax:cpu2): a palette colour by its name
        color = QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])
    return readable(color, colors.background)
