"""The crossover map: model size (FLOPs per batch) against median step time per lane, crossovers marked."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from crossover_lab.core.analysis import CostFit, Crossover, SweepPoint, find_crossovers, fit_cost_model
from crossover_lab.core.session import RunResult
from crossover_lab.core.words import fmt_flops
from crossover_lab.core.sweep_words import crossing_label
from crossover_lab.gui.lane_style import lane_color
from crossover_lab.gui.log_axis import LogAxis
from crossover_lab.gui.resources import icon
from crossover_lab.gui.theme import PlotTheme

MIN_STEADY_BATCHES = 10  # a cancelled run adds its point only with at least this many steady batches


def run_points(result: RunResult) -> list[SweepPoint]:
    """A point per lane that finished (or was cancelled with enough steady batches).

    The key that find_crossovers matches lanes by (`width`) is the FLOPs per batch: identical for the
    same model and batch on every lane, and growing along the map's x axis.
    """
    cfg = result.config
    points = []
    for name, lane in result.lanes.items():
        s = lane.summary
        if s is None or not (math.isfinite(s.median_ms) and s.median_ms > 0) or s.n_batches < 1:
            continue
        if s.status == "failed" or (s.status == "cancelled" and s.n_batches < MIN_STEADY_BATCHES):
            continue
        points.append(SweepPoint(lane=name, width=cfg.flops_per_batch, flops_per_batch=cfg.flops_per_batch,
                                 median_ms=s.median_ms, p10_ms=s.p10_ms, p90_ms=s.p90_ms, device=s.device,
                                 batch_size=cfg.train.batch_size, n_batches=s.n_batches))
    return points


def latest_by_lane(points: list[SweepPoint]) -> dict[str, list[SweepPoint]]:
    """Per lane, the latest point at each size, sorted by size (a re-measured size replaces the old)."""
    lanes: dict[str, dict[int, SweepPoint]] = {}
    for p in points:
        lanes.setdefault(p.lane, {})[p.width] = p
    return {lane: [by_key[k] for k in sorted(by_key)] for lane, by_key in sorted(lanes.items())}


def _ms_at(points: list[SweepPoint], key: float) -> float:
    """A lane's step time at `key`, interpolated in log-log between its neighbouring points."""
    for a, b in zip(points, points[1:]):
        if a.width <= key <= b.width:
            t = math.log(key / a.width) / math.log(b.width / a.width) if b.width != a.width else 0.0
            return math.exp(math.log(a.median_ms) + t * (math.log(b.median_ms) - math.log(a.median_ms)))
    return math.nan


MIN_SIZES_FOR_FIT = 3


class CrossoverMap(QWidget):
    """Every finished run adds a point per lane; where two lanes' series cross, it says so."""

    points_changed = Signal()  # points were added, removed or cleared (cost fits may have changed)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._points: list[tuple[str, SweepPoint]] = []  # (run_id, point)
        axes = {"bottom": LogAxis("bottom", fmt_flops), "left": LogAxis("left", lambda ms: f"{ms:g}")}
        self.plot = pg.PlotWidget(axisItems=axes)
        self.plot.setAccessibleName("Crossover map: median ms per batch against FLOPs per batch, per lane")
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "model size: FLOPs per batch")
        self.plot.setLabel("left", "median ms per batch")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setToolTip("One point per lane and run. Lines join a lane's sizes; a star marks a crossover.")
        self.legend = self.plot.addLegend(offset=(10, 10))
        self.theme = PlotTheme(self.plot, lambda colors: self._redraw())
        self.description = QLabel()
        self.description.setObjectName("explanationLabel")
        self.description.setWordWrap(True)
        clear = QPushButton(icon("clear"), "Clear map")
        clear.setToolTip("Remove every point from the map (the runs stay in the history).")
        clear.clicked.connect(self._on_clear_clicked)
        bar = QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(clear)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.description)
        self._redraw()

    def points(self) -> list[SweepPoint]:
        return [p for _, p in self._points]

    def add_run(self, result: RunResult) -> int:
        """Add the run's points; returns how many."""
        new = run_points(result)
        self._points += [(result.run_id, p) for p in new]
        if new:
            self._changed()
        return len(new)

    def remove_run(self, run_id: str) -> None:
        before = len(self._points)
        self._points = [(r, p) for r, p in self._points if r != run_id]
        if len(self._points) != before:
            self._changed()

    def clear(self) -> None:
        self._points = []
        self._changed()

    def crossovers(self) -> list[Crossover]:
        return find_crossovers(self.points())

    def cost_fits(self) -> dict[str, CostFit]:
        """Fixed cost plus throughput per lane, for lanes measured at three sizes or more: through
        two points any line fits exactly, and noise then passes for a cost model."""
        fits = {}
        for lane, pts in latest_by_lane(self.points()).items():
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

    def _redraw(self) -> None:
        self.plot.clear()
        self.legend.clear()
        lanes = latest_by_lane(self.points())
        colors = self.theme.colors
        for lane, pts in lanes.items():
            color = lane_color(lane, colors.dark)
            device = pts[-1].device
            self.plot.addItem(pg.PlotDataItem(
                [p.flops_per_batch for p in pts], [p.median_ms for p in pts], pen=pg.mkPen(color, width=2),
                symbol="o", symbolSize=8, symbolBrush=color, symbolPen=colors.point_outline,
                name=f"{lane} · {device}" if device else lane))
        crossovers = self.crossovers()
        xs = [math.log10(p.flops_per_batch) for pts in lanes.values() for p in pts]
        middle = (min(xs) + max(xs)) / 2 if xs else 0.0
        for c in crossovers:
            ms = [_ms_at(lanes[name], c.width) for name in c.lanes]
            y = math.exp(sum(math.log(v) for v in ms) / 2) if all(math.isfinite(v) for v in ms) else math.nan
            dashed = pg.mkPen(colors.neutral, style=Qt.PenStyle.DashLine)
            self.plot.addItem(pg.InfiniteLine(math.log10(c.flops_per_batch), angle=90, pen=dashed), ignoreBounds=True)
            if math.isfinite(y):
                self.plot.addItem(pg.PlotDataItem([c.flops_per_batch], [y], pen=None, symbol="star",
                                                  symbolSize=18, symbolBrush="#FFD400", symbolPen="#333"))
                # Grow the label away from the nearer edge, clear of the star, on the plot's own ground.
                right = math.log10(c.flops_per_batch) > middle
                label = pg.TextItem(f"crossover ≈ {fmt_flops(c.flops_per_batch)}", color=colors.text,
                                    anchor=(1.12 if right else -0.12, 1.1), fill=pg.mkBrush(*colors.label_fill))
                label.setPos(math.log10(c.flops_per_batch), math.log10(y))
                self.plot.addItem(label, ignoreBounds=True)
        self.description.setText(self._describe(lanes, crossovers))
        self._frame([p for pts in lanes.values() for p in pts])

    def _frame(self, points: list[SweepPoint]) -> None:
        """Pad the view around the points: a single size would otherwise make a zero-width log axis."""
        if not points:
            self.plot.setRange(xRange=(6, 10), yRange=(-1, 2), padding=0)
            return
        xs = [math.log10(p.flops_per_batch) for p in points]
        ys = [math.log10(p.median_ms) for p in points]
        # At least two decades wide: a narrower log axis labels every minor tick, and they overlap.
        x_pad = max(0.3, (2.0 - (max(xs) - min(xs))) / 2)
        y_pad = max(0.2, (1.0 - (max(ys) - min(ys))) / 2)
        self.plot.setRange(xRange=(min(xs) - x_pad, max(xs) + x_pad), yRange=(min(ys) - y_pad, max(ys) + y_pad),
                           padding=0)

    @staticmethod
    def _describe(lanes: dict[str, list[SweepPoint]], crossovers: list[Crossover]) -> str:
        if crossovers:
            return " ".join(f"{crossing_label(c, 'flops')} per batch." for c in crossovers)
        sizes = {p.width for pts in lanes.values() for p in pts}
        if len(lanes) < 2 or len(sizes) < 2:
            return ("Each finished run adds a point per lane. Run two or more model sizes (drag the widths "
                    "or the batch size) to see where the lanes cross.")
        return (f"No crossover among the {len(sizes)} sizes measured so far: try smaller or larger models "
                "to find where the lanes cross.")
