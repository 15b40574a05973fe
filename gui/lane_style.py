"""Lane colours and the number formats shared by the live plot, the summary, the map and the history."""
from __future__ import annotations

import math

from PySide6.QtGui import QColor

# Colour-blind-safe (Okabe-Ito); fixed for the common lanes so a lane keeps its colour everywhere.
_FIXED = {"cpu": "#0072B2", "cpu1": "#009E73", "gpu0": "#D55E00", "gpu1": "#CC79A7"}
_PALETTE = ("#E69F00", "#56B4E9", "#882255", "#117733", "#F0E442", "#332288", "#999933", "#AA4499")


def lane_color(lane: str) -> QColor:
    """The colour of a lane: the same in every widget and every run."""
    base = lane.split(":", 1)[-1]
    if lane in _FIXED:
        return QColor(_FIXED[lane])
    if base in _FIXED:  # jax:cpu is drawn like cpu, but darker, so both can share a plot
        return QColor(_FIXED[base]).darker(150)
    return QColor(_PALETTE[sum(map(ord, lane)) % len(_PALETTE)])


def fmt_num(x: float | None, digits: int = 3) -> str:
    """`digits` significant figures, thousands separated; "–" for a missing figure."""
    if x is None or not math.isfinite(x):
        return "–"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    text = f"{x:.{digits}g}"
    return text if "e" not in text else f"{x:.2e}"


def fmt_flops(x: float) -> str:
    """A FLOP count with its unit: 26.2 MFLOP, 1.07 TFLOP."""
    for unit, name in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if abs(x) >= unit:
            return f"{fmt_num(x / unit)} {name}"
    return f"{fmt_num(x)} FLOP"


def fmt_duration(seconds: float | None) -> str:
    """A time left or taken: 42 s, 3 min 5 s, 1 h 2 min."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"
