"""The Why picture: each lane's synced step as a stacked bar of its parts, with the pipelined clock and the floor marked."""
from __future__ import annotations

import math
from typing import Sequence

import pyqtgraph as pg
from PySide6.QtGui import QColor

from crossover_lab.core.anatomy import STACK, AnatomyPoint
from crossover_lab.core.anatomy_words import PART_LABELS, PIPELINED_CLOCK, SYNCED_CLOCK
from crossover_lab.gui.theme import PlotTheme, SchemeColors, readable

# Okabe-Ito, one hue per part; made readable on the scheme's ground when drawn.
PART_COLORS = {"device_work": "#009E73", "host_dispatch": "#E69F00", "synchronisation": "#CC79A7",
               "fit_and_input": "#56B4E9"}
BAR_HEIGHT = 0.6


class WhyBars(pg.PlotWidget):
    """Horizontal bars, one per lane: the parts of its synced step (bottom-up order of core/anatomy.STACK, left
    to right, then what the spread leaves unattributed), a tick at its pipelined step (fit_pipelined) and a diamond
    at its floor (device_loop)."""

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent=parent)
        self.setAccessibleName("Why: each lane's step split into its parts, in ms per step")
        self.setLabel("bottom", "ms per training step")
        self.showGrid(x=True, y=False, alpha=0.25)
        self.setMouseEnabled(x=False, y=False)
        self.legend = self.addLegend(offset=(-10, 10))
        self.points: list[AnatomyPoint] = []
        self.theme = PlotTheme(self, lambda _colors: self.set_points(self.points))

    def set_points(self, points: Sequence[AnatomyPoint]) -> None:
        self.clear()
        self.legend.clear()
        self.points = list(points)
        colors = self.theme.colors
        self.getAxis("left").setTicks([[(i, p.lane) for i, p in enumerate(self.points)]])
        shown_parts: set[str] = set()
        for i, point in enumerate(self.points):
            parts, x = point.parts(), 0.0
            for name in STACK:
                part = parts.get(name)
                if part is None or not part.ms > 0:
                    continue
                bar = pg.BarGraphItem(x0=[x], y=[i], width=[part.ms], height=BAR_HEIGHT,
                                      brush=self.part_color(name, colors), pen=pg.mkPen(colors.background))
                self.addItem(bar)
                if name not in shown_parts:
                    shown_parts.add(name)
                    self.legend.addItem(bar, PART_LABELS[name])
                x += part.ms
            fit = point.rung("fit")
            if fit is not None and fit.median_ms > x * 1.005:  # parts shown as ≈0 still took their time
                rest = pg.BarGraphItem(x0=[x], y=[i], width=[fit.median_ms - x], height=BAR_HEIGHT,
                                       brush=pg.mkBrush(colors.neutral), pen=pg.mkPen(colors.background))
                self.addItem(rest)
                if "rest" not in shown_parts:
                    shown_parts.add("rest")
                    self.legend.addItem(rest, "within the rungs' spread")
            self._mark(point, "fit_pipelined", i, "|", f"{PIPELINED_CLOCK} (fit, no per-step sync)", colors)
            self._mark(point, "device_loop", i, "d", "floor (on-device loop)", colors)
        if self.points:
            self.enableAutoRange()
            self.setYRange(-0.6, len(self.points) - 0.4, padding=0)
            self.setTitle(f"bars: the {SYNCED_CLOCK} (fit, loss read every step)", color=colors.text, size="10pt")

    def _mark(self, point: AnatomyPoint, rung: str, row: int, symbol: str, name: str, colors: SchemeColors) -> None:
        time = point.rung(rung)
        if time is None or not math.isfinite(time.median_ms):
            return
        marks = self.plot([time.median_ms], [row + BAR_HEIGHT / 2 + 0.08], pen=None, symbol=symbol, symbolSize=14,
                          symbolBrush=colors.text, symbolPen=pg.mkPen(colors.text))
        if name not in {label.text for _item, label in self.legend.items}:
            self.legend.addItem(marks, name)

    @staticmethod
    def part_color(name: str, colors: SchemeColors) -> QColor:
        return readable(QColor(PART_COLORS[name]), colors.background)
