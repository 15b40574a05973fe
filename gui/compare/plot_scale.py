"""The live plot's axis ranges: steady batches only, in round steps that change rarely.

pyqtgraph's own autorange moves the axes a little on every frame, and a moved axis is repainted
with its grid and labels: most of a frame's cost. Here the y range is set from the steady
state's 99th percentile, rounded up to a 1-1.5-2-3-5-7 step and changed only when the data
leaves it or shrinks well inside it; the x range follows the data in round steps (never past the
run's planned length). Warm-up batches never count, so a slow first batch cannot squash the plot.
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

STEPS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)
HEADROOM = 1.15  # the top of the plot sits this far above the steady state's 99th percentile
TAIL = 30  # a lane's newest batches, which stay in view whatever came before
SHRINK_BELOW = 0.45  # shrink the range only when the data use less than this share of it


def round_up(x: float) -> float:
    """The smallest 1-1.5-2-3-5-7 ×10^k value ≥ x (x > 0)."""
    exponent = math.floor(math.log10(x))
    for step in STEPS:
        value = step * 10 ** exponent
        if value >= x * (1 - 1e-12):
            return value
    return 10 ** (exponent + 1)


def round_down(x: float) -> float:
    """The largest 1-1.5-2-3-5-7 ×10^k value ≤ x (x > 0)."""
    exponent = math.floor(math.log10(x))
    for step in reversed(STEPS):
        value = step * 10 ** exponent
        if value <= x * (1 + 1e-12):
            return value
    return 10 ** (exponent - 1) * STEPS[-2]


class StableRange:
    """Remembers the current range and changes it only for a reason."""

    def __init__(self) -> None:
        self.y: tuple[float, float] | None = None
        self.x: tuple[float, float] | None = None

    def reset(self) -> None:
        self.y = self.x = None

    def update_y(self, steady_ms: Iterable[np.ndarray], log: bool, also: Sequence[float] = ()) -> bool:
        """Refit the y range to the steady state, and to `also` (a predicted lane's ms: each stays in view); True
        when it changed."""
        lanes = [v[np.isfinite(v) & (v > 0)] for v in steady_ms]
        values = np.concatenate([v for v in lanes if v.size] or [np.empty(0)])
        extra = [v for v in also if math.isfinite(v) and v > 0]
        if values.size == 0:
            return False
        # Each lane's newest batches count on their own: after a width dragged to a bigger model, thousands of
        # small-model batches would keep the 99th percentile low and the new line above the plot.
        newest = max((float(np.percentile(v[-TAIL:], 90)) for v in lanes if v.size), default=0.0)
        top = round_up(max([float(np.percentile(values, 99)), newest, *extra]) * HEADROOM)
        bottom = round_down(min([float(np.percentile(values, 1)), *extra]) / HEADROOM) if log else 0.0
        if self.y is not None:
            old_bottom, old_top = self.y
            fits = top <= old_top and top >= old_top * SHRINK_BELOW
            if log:
                fits = fits and old_bottom <= bottom <= old_bottom / SHRINK_BELOW
            if fits:
                return False
        self.y = (bottom, top)
        return True

    def update_x(self, last: float, total: float = 0.0) -> bool:
        """Follow the data: [0, a round step past `last`], grown only when the data reach its end, never past the
        run's planned length `total` when that is known (a 10-epoch plan does not squash its first seconds into
        the left edge). True when changed."""
        end = round_up(max(last, 1.0) * 1.2)
        if total > 0:
            end = min(end, total)
        if self.x is not None and last <= self.x[1] and self.x[1] <= max(end, last) * 4:
            return False
        self.x = (0.0, max(end, last))
        return True
