"""The live plot's predicted lanes: each lane of a device profile chosen on the crossover map, predicted for the run
shown, as a dashed horizontal line at its predicted ms per step (per call, for predict) in its lane's colour, its
95% interval a light band; dotted, without a band, where it is an extrapolation.

Like the map's, a predicted line is never a batch of the plot: nothing measured is computed from it. It is drawn
for a run of one model; a ramp's models and a rate's latencies (arrival to answer, not ms per call) get none, and
the plot's note says why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from ...core.analysis.prediction import Prediction
from ...core.config import RunConfig
from ...core.files.predicted import PredictedLane
from ...core.words.numbers import fmt_num
from ...core.words.predicted import predicted_label
from ..theme.lane_colours import lane_color
from ..theme.scheme import SchemeColors
from ..widgets.plots import plot_item
from .predicted import BAND_ALPHA

NOT_DRAWN = {"ramp": "predicted lanes are drawn for a run of one model, not a ramp's",
             "rate": "predicted lanes are ms per call, not a latency from arrival to answer"}


@dataclass(frozen=True)
class LivePrediction:
    """A predicted lane's figure for the run shown."""

    lane: PredictedLane
    prediction: Prediction

    @property
    def label(self) -> str:
        """"jax:gpu0, predicted from h200-2026-11-30: 0.94 ms (0.85–1.03)", or "≈0.94 ms" for an extrapolation:
        the line's tooltip."""
        p = self.prediction
        figure = (f"{fmt_num(p.ms)} ms, 95% interval {fmt_num(p.lo)}–{fmt_num(p.hi)}" if p.has_interval
                  else f"≈{fmt_num(p.ms)} ms, extrapolated (no interval)")
        return f"{predicted_label(self.lane)}: {figure}"

    @property
    def short_label(self) -> str:
        """"jax:gpu0 predicted: 0.94 ms", on the line (the note under the plot names the profile)."""
        p = self.prediction
        return f"{self.lane.lane} predicted: {'' if p.has_interval else '≈'}{fmt_num(p.ms)} ms"


def why_not_drawn(config: RunConfig, segments: int) -> str:
    """"" where a run of `segments` models of `config` gets predicted lines, else why not."""
    if config.train.arrival_rate is not None:
        return NOT_DRAWN["rate"]
    return NOT_DRAWN["ramp"] if segments > 1 else ""


def live_predictions(lanes: tuple[PredictedLane, ...], config: RunConfig) -> list[LivePrediction]:
    """Each predicted lane's figure for a run of one model, `config` (none where refused; why_not_drawn first)."""
    found = [LivePrediction(lane, lane.predict(config)) for lane in lanes]
    return [x for x in found if not x.prediction.refused and math.isfinite(x.prediction.ms) and x.prediction.ms > 0]


class PredictedLines:
    """The predicted lines drawn on the live plot, drawn again whole when the lanes, the run or the y axis change."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self._items: list[pg.GraphicsObject] = []
        self.shown: list[LivePrediction] = []

    def clear(self) -> None:
        """Forget the items (the plot was cleared, which removed them)."""
        self._items, self.shown = [], []

    def remove(self) -> None:
        for item in self._items:
            plot_item(self.plot).removeItem(item)
        self.clear()

    def draw(self, shown: list[LivePrediction], log_y: bool, colors: SchemeColors) -> None:
        self.remove()
        self.shown = shown
        y = (lambda ms: math.log10(ms)) if log_y else (lambda ms: ms)
        for x in shown:
            color = lane_color(x.lane.lane, colors.dark)
            p = x.prediction
            firm = p.has_interval and p.lo > 0
            if firm:
                band = QColor(color)
                band.setAlpha(BAND_ALPHA)
                region = pg.LinearRegionItem(values=(y(p.lo), y(p.hi)), orientation="horizontal", movable=False,
                                             brush=pg.mkBrush(band), pen=pg.mkPen(None))
                region.setZValue(-10)
                self._add(region)
            pen = pg.mkPen(color, width=2 if firm else 1.5,
                           style=Qt.PenStyle.DashLine if firm else Qt.PenStyle.DotLine)
            # Labelled on the line itself, at its right end: in the legend, two more rows took a small window's
            # plot from it.
            line = pg.InfiniteLine(pos=y(p.ms), angle=0, movable=False, pen=pen, label=x.short_label,
                                   labelOpts={"position": 0.97, "color": color, "anchors": [(1, 1), (1, 1)]})
            line.setToolTip(x.label)
            self._add(line)

    def values(self) -> list[float]:
        """The ms the y range should hold: each line and its band's edges."""
        out = []
        for x in self.shown:
            p = x.prediction
            out += [p.ms] + ([p.lo, p.hi] if p.has_interval else [])
        return [v for v in out if math.isfinite(v) and v > 0]

    def _add(self, item: pg.GraphicsObject) -> None:
        plot_item(self.plot).addItem(item, ignoreBounds=True)
        self._items.append(item)
