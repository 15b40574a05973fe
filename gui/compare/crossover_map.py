"""The crossover map: model size (FLOPs per batch) against median step time per lane, crossovers marked.

Finished runs add firm points; the run in progress adds provisional ones as soon as a segment has
enough steady batches, so the crossing moves while a width is dragged (core of gui/compare/map_points.py).
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ...core.analysis.fits import CostFit, fit_cost_model
from ...core.analysis.crossings import find_crossovers
from ...core.analysis.points import Crossover, SweepPoint
from ...core.results import RunResult
from ...core.words.sweep import crossing_label
from ...core.words.numbers import fmt_flops
from ..theme.lane_colours import lane_color
from ..live_run import LiveRun
from ..widgets.log_axis import LogAxis
from ..widgets.plots import plot_item
from .map_points import MapPoint, best_by_lane, run_points
from ..resources import icon
from ..theme.scheme import PlotTheme, SchemeColors

MIN_SIZES_FOR_FIT = 3
LIVE_INTERVAL_MS = 500  # provisional points move at 2 Hz: a median over a few batches changes no faster
# How each kind of point is drawn: (symbol, filled). Completed points are filled circles.
KIND_SYMBOLS = {"completed": ("o", True), "provisional": ("o", False), "cut short": ("s", False),
                "contended": ("t", True)}
KIND_WORDS = {"provisional": "provisional (still measuring)", "cut short": "cut short (stopped or switched early)",
              "contended": "contended (trained at once on shared CPU cores)"}
KIND_GLYPHS = {"provisional": "○", "cut short": "□", "contended": "▲"}


def _ms_at(points: list[SweepPoint], key: float) -> float:
    """A lane's step time at `key`, interpolated in log-log between its neighbouring points."""
    for a, b in zip(points, points[1:]):
        if a.width <= key <= b.width:
            t = math.log(key / a.width) / math.log(b.width / a.width) if b.width != a.width else 0.0
            return math.exp(math.log(a.median_ms) + t * (math.log(b.median_ms) - math.log(a.median_ms)))
    return math.nan


class CrossoverMap(QWidget):
    """Every run adds a point per lane and segment; where two lanes' series cross, it says so."""

    points_changed = Signal()  # firm points were added, removed or cleared (cost fits may have changed)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._points: list[MapPoint] = []  # from runs that ended, in the order they came
        self._live: LiveRun | None = None
        self._live_version = -1
        axes = {"bottom": LogAxis("bottom", fmt_flops), "left": LogAxis("left", lambda ms: f"{ms:g}")}
        self.plot = pg.PlotWidget(axisItems=axes)
        self.plot.setAccessibleName("Crossover map: median ms per batch against FLOPs per batch, per lane")
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "model size: FLOPs per batch")
        self.plot.setLabel("left", "median ms per batch")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setToolTip("One point per lane and model measured. Lines join a lane's sizes; a star marks a "
                             "crossover. Hollow: still measuring or cut short; triangles: contended.")
        self.theme = PlotTheme(self.plot, lambda colors: self._redraw())
        # The key sits above the plot, never over the points or the crossing label; it wraps when narrow.
        self.key = QLabel()
        self.key.setObjectName("mapKey")
        self.key.setWordWrap(True)
        self.key.setTextFormat(Qt.TextFormat.RichText)
        self.description = QLabel()
        self.description.setObjectName("explanationLabel")
        self.description.setWordWrap(True)
        clear = QPushButton(icon("clear"), "Clear map")
        clear.setToolTip("Remove every point from the map (the runs stay in the history).")
        clear.clicked.connect(self._on_clear_clicked)
        bar = QHBoxLayout()
        bar.addWidget(self.key, 1)
        bar.addWidget(clear, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.description)
        self._timer = QTimer(self)
        self._timer.setInterval(LIVE_INTERVAL_MS)
        self._timer.timeout.connect(self._on_live_timer_timeout)
        self._redraw()

    # ------------------------------------------------------------------ points

    def points(self) -> list[SweepPoint]:
        """The points of the runs that ended (every kind), in the order they came."""
        return [p.point for p in self._points]

    def map_points(self) -> list[MapPoint]:
        """Every point on the map now, the run in progress's provisional ones last."""
        live = run_points(self._live.result, self._live.segment_summary) if self._live is not None else []
        return self._points + live

    def kept(self) -> dict[str, list[MapPoint]]:
        """Per lane, the point the map keeps at each size (lines, crossings and fits are drawn through these)."""
        return best_by_lane(self.map_points())

    def add_run(self, result: RunResult) -> int:
        """Add the run's points; returns how many."""
        new = run_points(result)
        self._points += new
        if self._live is not None and self._live.run_id == result.run_id:
            self._live = None  # its points are firm now: one redraw below, not one more to stop following
            self._timer.stop()
        if new:
            self._changed()
        else:
            self._redraw()
        return len(new)

    def follow(self, live: LiveRun | None) -> None:
        """Show the run in progress's points as they firm up (None: it ended)."""
        self._live, self._live_version = live, -1
        if live is None:
            self._timer.stop()
        else:
            self._timer.start()
        self._redraw()

    def remove_run(self, run_id: str) -> None:
        before = len(self._points)
        self._points = [p for p in self._points if p.run_id != run_id]
        if len(self._points) != before:
            self._changed()

    def clear(self) -> None:
        self._points = []
        self._changed()

    def crossovers(self, kept: dict[str, list[MapPoint]] | None = None) -> list[Crossover]:
        """Where the kept points' lanes cross (`kept`: what kept() gives, when the caller has it already)."""
        kept = self.kept() if kept is None else kept
        return find_crossovers([p.point for pts in kept.values() for p in pts])

    def cost_fits(self) -> dict[str, CostFit]:
        """Fixed cost plus throughput per lane, for lanes measured (firmly) at three sizes or more: through
        two points any line fits exactly, and noise then passes for a cost model."""
        fits = {}
        for lane, kept in best_by_lane(self._points).items():
            pts = [p.point for p in kept]
            if len({p.flops_per_batch for p in pts}) < MIN_SIZES_FOR_FIT:
                continue
            fit = fit_cost_model([p.flops_per_batch for p in pts], [p.median_ms for p in pts])
            if fit is not None:
                fits[lane] = fit
        return fits

    def _changed(self) -> None:
        self._redraw()
        self.points_changed.emit()

    @Slot()
    def _on_clear_clicked(self) -> None:
        self.clear()

    @Slot()
    def _on_live_timer_timeout(self) -> None:
        version = sum(self._live.versions.values()) if self._live is not None else -1
        if version != self._live_version:
            self._live_version = version
            self._redraw()

    # ------------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        self.plot.clear()
        kept = self.kept()
        colors = self.theme.colors
        for lane, pts in kept.items():
            self._draw_lane(lane, pts, colors)
        crossovers = self.crossovers(kept)
        self._draw_crossings(crossovers, {lane: [p.point for p in pts] for lane, pts in kept.items()}, colors)
        key, whole = self._key_text(kept, colors)
        self.key.setText(key)
        self.key.setToolTip(whole)
        self.description.setText(self._describe(kept, crossovers))
        self._frame([p.point for pts in kept.values() for p in pts])

    def _draw_lane(self, lane: str, pts: list[MapPoint], colors: SchemeColors) -> None:
        color = lane_color(lane, colors.dark)
        xs, ys = [p.point.flops_per_batch for p in pts], [p.point.median_ms for p in pts]
        self.plot.addItem(pg.PlotDataItem(xs, ys, pen=pg.mkPen(color, width=2)))
        symbols = [KIND_SYMBOLS[p.kind] for p in pts]
        self.plot.addItem(pg.PlotDataItem(
            xs, ys, pen=None, symbol=[s for s, _ in symbols], symbolSize=9,
            symbolBrush=[pg.mkBrush(color) if filled else pg.mkBrush(colors.background) for _, filled in symbols],
            symbolPen=[pg.mkPen(colors.point_outline) if filled else pg.mkPen(color, width=2) for _, filled in symbols]))

    def _draw_crossings(self, crossovers: list[Crossover], lanes: dict[str, list[SweepPoint]],
                        colors: SchemeColors) -> None:
        xs = [math.log10(p.flops_per_batch) for pts in lanes.values() for p in pts]
        middle = (min(xs) + max(xs)) / 2 if xs else 0.0
        dashed = pg.mkPen(colors.neutral, style=Qt.PenStyle.DashLine)
        item = plot_item(self.plot)
        stars: list[tuple[Crossover, float, float]] = []  # each crossing and where its star is (log10 x, y)
        for c in crossovers:
            x = math.log10(c.flops_per_batch)
            item.addItem(pg.InfiniteLine(x, angle=90, pen=dashed), ignoreBounds=True)
            ms = [_ms_at(lanes[name], c.width) for name in c.lanes]
            if all(math.isfinite(v) for v in ms):
                stars.append((c, x, sum(math.log10(v) for v in ms) / 2))
        labelled: list[float] = []  # x of the crossings labelled so far
        for c, x, y in stars:
            self.plot.addItem(pg.PlotDataItem([c.flops_per_batch], [10 ** y], pen=None, symbol="star",
                                              symbolSize=18, symbolBrush="#FFD400", symbolPen="#333"))
            # Two labels at most among crossings close together (the text below the map has them all): the
            # higher star's label goes above it, the lower one's below, so they never sit on each other.
            if sum(abs(x - other) < 0.5 for other in labelled) > 1:
                continue
            labelled.append(x)
            above = not any(abs(x - x2) < 0.5 and y2 > y for _, x2, y2 in stars)
            right = x > middle  # grow the label away from the nearer edge, clear of the star
            label = pg.TextItem(f"≈ {fmt_flops(c.flops_per_batch)}", color=colors.text,
                                anchor=(1.12 if right else -0.12, 1.1 if above else -0.1),
                                fill=pg.mkBrush(*colors.label_fill))
            label.setPos(x, y)
            item.addItem(label, ignoreBounds=True)

    def _frame(self, points: list[SweepPoint]) -> None:
        """Pad the view around the points: a single size would otherwise make a zero-width log axis."""
        view = plot_item(self.plot).getViewBox()
        if not points:
            view.setRange(xRange=(6, 10), yRange=(-1, 2), padding=0)
            return
        xs = [math.log10(p.flops_per_batch) for p in points]
        ys = [math.log10(p.median_ms) for p in points]
        # At least two decades wide: a narrower log axis labels every minor tick, and they overlap.
        x_pad = max(0.3, (2.0 - (max(xs) - min(xs))) / 2)
        y_pad = max(0.2, (1.0 - (max(ys) - min(ys))) / 2)
        view.setRange(xRange=(min(xs) - x_pad, max(xs) + x_pad), yRange=(min(ys) - y_pad, max(ys) + y_pad),
                      padding=0)

    @staticmethod
    def _key_text(kept: dict[str, list[MapPoint]], colors: SchemeColors) -> tuple[str, str]:
        """The key (lane names and the kinds of point shown, short enough for one line in a narrow window)
        and its tooltip (each lane's device and what each kind means)."""
        parts, whole = [], []
        for lane, pts in kept.items():
            device = pts[-1].point.device
            parts.append(f"<span style='color:{lane_color(lane, colors.dark).name()}'>━●</span>&nbsp;{lane}")
            whole.append(f"{lane}: {device}" if device else lane)
        kinds = {p.kind for pts in kept.values() for p in pts} - {"completed"}
        for kind in ("provisional", "cut short", "contended"):
            if kind in kinds:
                parts.append(f"{KIND_GLYPHS[kind]}&nbsp;{kind.replace(' ', '&nbsp;')}")
                whole.append(f"{KIND_GLYPHS[kind]} {KIND_WORDS[kind]}")
        return " &nbsp; ".join(parts), "\n".join(whole)

    @staticmethod
    def _describe(kept: dict[str, list[MapPoint]], crossovers: list[Crossover]) -> str:
        if crossovers:
            provisional = any(p.kind == "provisional" for pts in kept.values() for p in pts)
            return " ".join(f"{crossing_label(c, 'flops')} per batch." for c in crossovers) + (
                " (Provisional: the run in progress is still measuring.)" if provisional else "")
        sizes = {p.point.width for pts in kept.values() for p in pts}
        if len(kept) < 2 or len(sizes) < 2:
            return ("Each run adds a point per lane and model. Change a width while it trains, press Ramp, or run "
                    "two or more model sizes to see where the lanes cross.")
        return (f"No crossover among the {len(sizes)} sizes measured so far: try smaller or larger models "
                "to find where the lanes cross.")
