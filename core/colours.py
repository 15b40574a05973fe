"""Each lane's colour, the same in the window, its pictures and the report (colour-blind safe, Okabe-Ito first, then
Paul Tol's muted scheme).

Fixed for the lanes of one machine, so that a lane keeps its colour everywhere, and the lanes a crossover is about
stand apart: cpu and cpu1 (a machine without a GPU) blue and purple; jax:gpu0, the shipped H200 profile's predicted
lane drawn beside them, green; cpu and gpu0 blue and vermillion; jax:cpu and jax:gpu0 pink and green. Every two
differ by 20 degrees of hue or by lightness on either ground (tests/gui/theme). Another machine's lane
(LABEL/LANE) or a lane of a thread count of its own takes a palette colour by its name. A lane's twin (cpu1#2)
takes a palette colour other than its lane's, the next twin the next one.
"""
from __future__ import annotations

import re

FIXED = {"cpu": "#0072B2", "cpu1": "#AA4499", "gpu0": "#D55E00", "gpu1": "#882255",
         "jax:cpu": "#CC79A7", "jax:cpu1": "#F0E442", "jax:gpu0": "#66A61E", "jax:gpu1": "#999933",
         "torch:cpu": "#332288", "torch:cpu1": "#117733", "torch:gpu0": "#88CCEE", "torch:gpu1": "#44AA99"}
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#117733", "#F0E442", "#332288", "#999933", "#DDCC77")


# A twin's name: its lane's, then "#" and its number (core/config.py LaneSpec), the number after any "/" (a machine
# label may hold a "#" of its own: "vm#2/cpu").
_TWIN = re.compile(r"^(?P<lane>.+)#(?P<twin>\d+)$")


def lane_hex(lane: str) -> str:
    """The lane's colour as "#RRGGBB", before any adjustment for the ground it is drawn on."""
    twin = _TWIN.match(lane)
    if twin is not None:
        first = lane_hex(twin["lane"])
        others = [colour for colour in PALETTE if colour != first]
        return others[(sum(map(ord, twin["lane"])) + int(twin["twin"])) % len(others)]
    if "/" not in lane and lane in FIXED:
        return FIXED[lane]
    return PALETTE[sum(map(ord, lane)) % len(PALETTE)]
