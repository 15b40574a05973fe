"""A log-scale axis with readable labels: decades (or 1-2-5 steps) named in the plot's own unit."""
from __future__ import annotations

import math
from typing import Any, Callable, cast

import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics

LABEL_STEPS = (1, 2, 5)  # labelled within a decade when the axis spans less than two decades


class LogAxis(pg.AxisItem):
    """In log mode: labels at whole decades (10 MFLOP, 100 MFLOP, 1 GFLOP…), unlabelled 2-9 in between.

    pyqtgraph's own log axis labels every minor tick of a narrow range, in exponent notation, and
    the labels run into each other. Outside log mode this is pyqtgraph's linear axis.
    """

    def __init__(self, orientation: str, formatter: Callable[[float], str], **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self._format = formatter
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:  # noqa: N802 (pyqtgraph's name)
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        inside = [e + math.log10(m) for e in range(lo, hi + 1) for m in range(1, 10)
                  if minVal <= e + math.log10(m) <= maxVal]
        steps = (1,) if maxVal - minVal >= 2 else LABEL_STEPS
        labelled = [v for v in inside if round(10 ** (v - math.floor(v + 1e-9))) in steps]
        if not self._fit(labelled, size / max(maxVal - minVal, 1e-9)):
            labelled = [v for v in inside if round(10 ** (v - math.floor(v + 1e-9))) == 1]
            every = 1
            while not self._fit(labelled[::every], size / max(maxVal - minVal, 1e-9)) and every < len(labelled):
                every += 1  # every other decade, every third…: the labels never run into each other
            labelled = labelled[::every]
        unlabelled = [v for v in inside if v not in labelled]
        return [(1.0, labelled), (0.01, unlabelled)]

    def _fit(self, values: list[float], pixels_per_unit: float) -> bool:
        """Whether labels at `values` (log10 units, `pixels_per_unit` apart) fit with a gap between neighbours."""
        if len(values) < 2:
            return True
        # pyqtgraph keeps its style dict in `style`, over QGraphicsWidget.style() (which the stubs see).
        style = cast("dict[str, Any]", self.style)
        metrics = QFontMetrics(style.get("tickFont") or self.font())
        if self.orientation in ("left", "right"):
            need = metrics.height() * 1.5
        else:
            need = max(metrics.horizontalAdvance(self._format(10 ** v)) for v in values) + metrics.averageCharWidth() * 2
        closest = min(b - a for a, b in zip(values, values[1:]))
        return closest * pixels_per_unit >= need

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        if spacing != 1.0:
            return ["" for _ in values]
        return [self._format(10 ** v) for v in values]
