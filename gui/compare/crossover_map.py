"""The crossover map: model size against median step time per lane, crossovers marked.

The x axis is what the user moves, the hidden width, when every point shares its number of layers and
its batch size (and each layer is as wide as the first); otherwise FLOPs per batch, with the widths named
in the caption. Finished runs add firm points; the run in progress adds provisional ones as soon as a
segment has enough steady batches. Lines join like with like and crossings come from completed points
only, by the one rule (gui/compare/map_points.py, core/analysis/verdict.py).
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ...core.words.headline import headline
from ...core.analysis.verdict import PairVerdict, State, crossovers_of
from ...core.config import RunConfig, Task
from ...core.files.predicted import AskedPrediction
from ...core.files.findings import Findings
from ...core.analysis.points import Crossover, SweepPoint
from ...core.analysis.predicted_crossing import PredictedCrossing, crossing_with_measured
from ...core.results import RunResult
from ...core.words.numbers import fmt_flops, fmt_num
from ...core.words.predicted import PREDICTED_TIP, predicted_crossing_words, predicted_note
from ...core.words.profile import profile_words
from ...core.words.verdict import pair_words, width_unit
from ..theme.lane_colours import lane_color
from ..live_run import LiveRun
from ..widgets.log_axis import LogAxis
from ..widgets.plots import plot_item
from ..widgets.plain_text import rich
from ...core.families import axis_words
from ..widgets.file_dialogs import FileDialogs
from .predicted import PredictedButton, PredictedCurve, PredictedLanes, draw_curve
from .map_points import firm_rows, Line, MapPoint, PointKind, Shape, apart, crossing_points, lines, run_points, shape_words
from ..resources import icon
from ..theme.scheme import PlotTheme, SchemeColors

LIVE_INTERVAL_MS = 500  # provisional points move at 2 Hz: a median over a few batches changes no faster
# How each kind of point is drawn: (symbol, filled). Completed points are filled circles.
KIND_SYMBOLS = {PointKind.COMPLETED: ("o", True), PointKind.PROVISIONAL: ("o", False),
                PointKind.CUT_SHORT: ("s", False), PointKind.CONTENDED: ("t", True)}
KIND_WORDS = {PointKind.PROVISIONAL: "provisional (still measuring)",
              PointKind.CUT_SHORT: "cut short (stopped or switched early)",
              PointKind.CONTENDED: "contended (trained at once on shared CPU cores)"}
KIND_GLYPHS = {PointKind.PROVISIONAL: "○", PointKind.CUT_SHORT: "□", PointKind.CONTENDED: "▲"}


def _ms_at(points: list[tuple[float, float]], key: float) -> float:
    """A lane's step time at x = `key`, interpolated in log-log between its neighbouring (x, ms) points."""
    for (xa, ma), (xb, mb) in zip(points, points[1:]):
        if xa <= key <= xb:
            t = math.log(key / xa) / math.log(xb / xa) if xb != xa else 0.0
            return math.exp(math.log(ma) + t * (math.log(mb) - math.log(ma)))
    return math.nan


def _width_text(x: float) -> str:
    return f"{x:,.0f}"


# A kind of model's line style, in the order the kinds sort (the first solid), and its glyph in the key.
SHAPE_STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)
STYLE_GLYPHS = {Qt.PenStyle.SolidLine: "━━", Qt.PenStyle.DashLine: "╍╍", Qt.PenStyle.DotLine: "┈┈",
                Qt.PenStyle.DashDotLine: "━·"}


def shape_styles(drawn: dict[Line, list[MapPoint]]) -> dict[Shape, Qt.PenStyle]:
    """Each kind of model drawn, its line style: the same on every lane (a lane without the first kind does not
    draw its second one solid), the key naming each."""
    shapes = sorted({shape for _lane, shape in drawn})
    return {shape: SHAPE_STYLES[min(i, len(SHAPE_STYLES) - 1)] for i, shape in enumerate(shapes)}


class CrossoverMap(QWidget):
    """Every run adds a point per lane and segment; where two lanes' series cross, it says so."""

    points_changed = Signal()  # firm points were added, removed or cleared (cost fits may have changed)

    def __init__(self, findings: Findings | None = None, parent: QWidget | None = None,
                 dialogs: FileDialogs | None = None) -> None:
        """`findings`: the window's, which the Sweep tab and the summary share: the map puts its runs' completed
        points there, and says (and stars) the answers it gives for the kinds of model it draws. `dialogs`: the
        window's, for a profile file to draw a predicted lane from (gui/compare/predicted.py)."""
        super().__init__(parent)
        self.predicted = PredictedLanes(self)  # profiles' lanes, drawn dashed for the window's model, never points
        self.predicted.changed.connect(self._redraw)
        self.findings = findings if findings is not None else Findings()
        self._points: list[MapPoint] = []  # from runs that ended, in the order they came
        # Where a predicted lane and a measured one change places (drawn as a hollow star, said as predicted).
        self.predicted_crossings: list[tuple[PredictedCurve, str, PredictedCrossing]] = []
        self._live: LiveRun | None = None
        self._live_version = -1
        self._by_width = False  # the x axis: hidden width (True) or FLOPs per batch
        axes = {"bottom": LogAxis("bottom", self._x_text), "left": LogAxis("left", lambda ms: f"{ms:g}")}
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
        self._said = ""  # the caption's whole sentence (said()), statistics and all
        self.description = QLabel()
        self.description.setObjectName("explanationLabel")
        self.description.setWordWrap(True)
        self.predicted_button = PredictedButton(self.predicted, dialogs)
        clear = QPushButton(icon("clear"), "Clear map")
        clear.setToolTip("Remove every measured point from the map (the runs stay in the history; predicted lanes "
                         "stay until removed from their menu).")
        clear.clicked.connect(self._on_clear_clicked)
        bar = QHBoxLayout()
        bar.addWidget(self.key, 1)
        bar.addWidget(self.predicted_button, 0, Qt.AlignmentFlag.AlignTop)
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

    def kept(self) -> dict[Line, list[MapPoint]]:
        """Per lane and kind of model, the points its line joins (lines, crossings and fits go through these)."""
        return lines(self.map_points())

    def add_run(self, result: RunResult) -> int:
        """Add the run's points; returns how many."""
        new = run_points(result)
        self._points += new
        self.findings.put(firm_rows(result))
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
        """Remove exactly the run's points (nothing else moves but what was drawn through them)."""
        before = len(self._points)
        self._points = [p for p in self._points if p.run_id != run_id]
        self.findings.drop([run_id])
        if len(self._points) != before:
            self._changed()

    def clear(self) -> None:
        self.findings.drop({p.run_id for p in self._points})
        self._points = []
        self._changed()

    def verdicts(self, drawn: dict[Line, list[MapPoint]] | None = None) -> list[tuple[Shape, PairVerdict]]:
        """Per kind of model drawn, each pair of lanes' verdict: the findings' answer (every completed point of that
        kind, the Sweep tab's included, pooled and judged once), for the lanes the map draws."""
        drawn = self.kept() if drawn is None else drawn
        if self._live is not None:
            self.findings.put(firm_rows(self._live.result))  # the run in progress's ended segments
        found = []
        for shape, pts in crossing_points(drawn).items():
            layers, batch, family, task = shape
            lanes = {p.lane for p in pts}
            found += [(shape, a.verdict) for a in self.findings.answers()
                      if a.matches(family, task, batch) and a.batch_size and a.layers == layers
                      and set(a.verdict.lanes) <= lanes]
        return found

    def crossovers(self, drawn: dict[Line, list[MapPoint]] | None = None) -> list[Crossover]:
        """Where two lanes' leads change hands among completed points of one kind (`drawn`: kept(), if at hand)."""
        return crossovers_of([v for _, v in self.verdicts(drawn)])

    def set_model(self, config: RunConfig | None) -> None:
        """The window's model, which predicted lanes are drawn for (None while a setting is invalid)."""
        self.predicted.set_model(config)

    def predicted_curves(self) -> list[PredictedCurve]:
        """The predicted lanes for the window's model, at the map's widths of that model and the ladder's near them."""
        config = self.predicted.config
        if config is None:
            return []
        shape = (len(config.model.widths), config.train.batch_size, config.model.kind, config.train.task)
        return self.predicted.curves(p.point.width for p in self.map_points() if p.shape == shape and p.uniform)

    def asked_predictions(self) -> list[AskedPrediction]:
        """What a report of the window lists under Predictions: each predicted lane at the widths drawn."""
        config = self.predicted.config
        if config is None:
            return []
        shape = (len(config.model.widths), config.train.batch_size, config.model.kind, config.train.task)
        return self.predicted.asked(p.point.width for p in self.map_points() if p.shape == shape and p.uniform)

    def refresh(self) -> None:
        """Redraw with the findings' answers now (the Sweep tab added points to them)."""
        self._redraw()

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
        everything = self.map_points()
        drawn, loose = lines(everything), apart(everything)
        shown = [p for pts in drawn.values() for p in pts] + loose
        curves = [c for c in self.predicted_curves() if c.drawn]
        config = self.predicted.config
        shapes = {p.shape for p in shown} | ({(len(config.model.widths), config.train.batch_size, config.model.kind,
                                               config.train.task)} if curves and config is not None else set())
        self._by_width = len(shapes) == 1 and all(p.uniform for p in shown)
        self.plot.setLabel("bottom", self._x_label(shown, shapes))
        colors = self.theme.colors
        for curve in curves:  # first: the measured lanes are drawn over them
            draw_curve(self.plot, curve, lambda p: float(p.width) if self._by_width else float(p.flops_per_batch),
                       lane_color(curve.lane.lane, colors.dark))
        styles = shape_styles(drawn)  # one line style per kind of model, the same on every lane, named in the key
        for (lane, shape), pts in drawn.items():
            self._draw_points(lane, pts, colors, line=True, style=styles[shape])
        for lane in sorted({p.lane for p in loose}):
            self._draw_points(lane, [p for p in loose if p.lane == lane], colors, line=False)
        found = self.verdicts(drawn)
        crossovers = crossovers_of([v for _, v in found])
        self._draw_crossings(crossovers, drawn, colors)
        self.predicted_crossings = self._predicted_crossings(curves, drawn)
        self._draw_predicted_crossings(self.predicted_crossings, drawn, colors)
        key, whole = self._key_text(shown, colors)
        if curves:
            key, whole = self._predicted_key(key, whole, curves, colors)
        self.key.setText(key)
        self.key.setToolTip(whole)
        note = predicted_note([c.lane for c in curves], any(c.extrapolated for c in curves),
                              self.predicted.here() if curves else None)
        said = " ".join(predicted_crossing_words(c, curve.lane, lane) + "." for curve, lane, c in self.predicted_crossings)
        # The caption says the answer as the headline does, in plain words (what it rests on a hover away): the
        # whole sentence is said() and the tooltip, as the report writes it.
        rule = self._describe(shown, found, drawn)
        more = (f" {note}" if note else "") + (f" {said}" if said else "")  # said whole: from which profile
        self._said = rule + more
        plain = headline(rule)[0] + more
        self.description.setText(plain)
        self.description.setToolTip(self._said if plain != self._said else "")
        self._frame(shown, [(float(p.width) if self._by_width else float(p.flops_per_batch), p.prediction.ms)
                            for c in curves for p in c.drawn])

    def said(self) -> str:
        """The caption's whole sentence, with what it rests on (the caption shows it without the parentheses)."""
        return self._said

    def _x(self, p: MapPoint | SweepPoint) -> float:
        point = p.point if isinstance(p, MapPoint) else p
        return float(point.width) if self._by_width else point.flops_per_batch

    def _x_text(self, x: float) -> str:
        return _width_text(x) if self._by_width else fmt_flops(x)

    def _x_label(self, shown: list[MapPoint], shapes: set[Shape]) -> str:
        if not self._by_width:
            return "model size: FLOPs per batch"
        layers, batch, family, task = shown[0].shape if shown else next(iter(shapes))
        return f"{axis_words(family, layers)}, batch {batch}{', predict' if task == Task.PREDICT else ''})"

    def _draw_points(self, lane: str, pts: list[MapPoint], colors: SchemeColors, line: bool,
                     style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> None:
        color = lane_color(lane, colors.dark)
        xs, ys = [self._x(p) for p in pts], [p.point.median_ms for p in pts]
        if line:
            self.plot.addItem(pg.PlotDataItem(xs, ys, pen=pg.mkPen(color, width=2, style=style)))
        symbols = [KIND_SYMBOLS[p.kind] for p in pts]
        self.plot.addItem(pg.PlotDataItem(
            xs, ys, pen=None, symbol=[s for s, _ in symbols], symbolSize=9,
            symbolBrush=[pg.mkBrush(color) if filled else pg.mkBrush(colors.background) for _, filled in symbols],
            symbolPen=[pg.mkPen(colors.point_outline) if filled else pg.mkPen(color, width=2) for _, filled in symbols]))

    def _draw_crossings(self, crossovers: list[Crossover], drawn: dict[Line, list[MapPoint]],
                        colors: SchemeColors) -> None:
        xs = [math.log10(self._x(p)) for pts in drawn.values() for p in pts]
        middle = (min(xs) + max(xs)) / 2 if xs else 0.0
        dashed = pg.mkPen(colors.neutral, style=Qt.PenStyle.DashLine)
        item = plot_item(self.plot)
        stars: list[tuple[Crossover, float, float]] = []  # each crossing and where its star is (log10 x, y)
        for c in crossovers:
            at = float(c.width) if self._by_width else c.flops_per_batch
            if not (math.isfinite(at) and at > 0):
                continue
            x = math.log10(at)
            item.addItem(pg.InfiniteLine(x, angle=90, pen=dashed), ignoreBounds=True)
            ms = []
            for name in c.lanes:
                along = sorted((self._x(p), p.point.median_ms) for (lane, _), pts in drawn.items() if lane == name
                               for p in pts if p.kind is PointKind.COMPLETED and p.uniform and p.point.width > 0)
                ms.append(_ms_at(along, at))
            if all(math.isfinite(v) for v in ms):
                stars.append((c, x, sum(math.log10(v) for v in ms) / 2))
        labelled: list[float] = []  # x of the crossings labelled so far
        for c, x, y in stars:
            self.plot.addItem(pg.PlotDataItem([10 ** x], [10 ** y], pen=None, symbol="star",
                                              symbolSize=18, symbolBrush="#FFD400", symbolPen="#333"))
            # Two labels at most among crossings close together (the text below the map has them all): the
            # higher star's label goes above it, the lower one's below, so they never sit on each other.
            if sum(abs(x - other) < 0.5 for other in labelled) > 1:
                continue
            labelled.append(x)
            above = not any(abs(x - x2) < 0.5 and y2 > y for _, x2, y2 in stars)
            right = x > middle  # grow the label away from the nearer edge, clear of the star
            text = f"≈ {fmt_num(c.width, 2)} units" if self._by_width else f"≈ {fmt_flops(c.flops_per_batch)}"
            label = pg.TextItem(text, color=colors.text, anchor=(1.12 if right else -0.12, 1.1 if above else -0.1),
                                fill=pg.mkBrush(*colors.label_fill))
            label.setPos(x, y)
            item.addItem(label, ignoreBounds=True)

    def _predicted_crossings(self, curves: list[PredictedCurve], drawn: dict[Line, list[MapPoint]]
                             ) -> list[tuple[PredictedCurve, str, PredictedCrossing]]:
        """Where each predicted lane and each measured lane of the window's model change places, clear on both
        sides by the prediction's interval (core/analysis/predicted_crossing.py crossing_with_measured): the demo a class
        without a GPU sees, said and drawn as predicted, never as a measured star."""
        config = self.predicted.config
        if config is None or not curves:
            return []
        shape = (len(config.model.widths), config.train.batch_size, config.model.kind, config.train.task)
        found = []
        for curve in curves:
            predicted = {p.width: p.prediction for p in curve.drawn}
            for (lane, line_shape), pts in drawn.items():
                if line_shape != shape:
                    continue
                measured = {p.point.width: p.point.median_ms for p in pts if p.uniform and p.point.width in predicted}
                widths = sorted(measured)
                crossing = crossing_with_measured(widths, [predicted[w] for w in widths],
                                                  [measured[w] for w in widths], curve.lane.lane, lane)
                if crossing is not None:
                    found.append((curve, lane, crossing))
        return found

    def _draw_predicted_crossings(self, found: list[tuple[PredictedCurve, str, PredictedCrossing]],
                                  drawn: dict[Line, list[MapPoint]], colors: SchemeColors) -> None:
        """A hollow star in the predicted lane's colour, dashed, with its label: told apart from a measured star
        (filled yellow) at a glance."""
        if not self._by_width:
            return  # along FLOPs the predicted lanes' model sizes are the window's; their widths place them
        item = plot_item(self.plot)
        labelled: list[float] = []  # one label where predicted crossings lie close (the caption says each)
        for curve, lane, c in found:
            along = sorted((float(p.point.width), p.point.median_ms) for (name, _), pts in drawn.items()
                           if name == lane for p in pts if p.uniform)
            ms = _ms_at(along, c.width)
            if not (math.isfinite(ms) and ms > 0):
                continue
            color = lane_color(curve.lane.lane, colors.dark)
            self.plot.addItem(pg.PlotDataItem([c.width], [ms], pen=None, symbol="star", symbolSize=22,
                                              symbolBrush=None, symbolPen=pg.mkPen(color, width=2.5,
                                                                                   style=Qt.PenStyle.DashLine)))
            if any(abs(math.log10(c.width) - x) < 0.5 for x in labelled):
                continue
            labelled.append(math.log10(c.width))
            label = pg.TextItem(f"predicted ≈ {fmt_num(c.width, 2)} units\n(not measured)", color=colors.text,
                                anchor=(0.5, -0.25), fill=pg.mkBrush(*colors.label_fill))
            label.setPos(math.log10(c.width), math.log10(ms))
            item.addItem(label, ignoreBounds=True)

    def _frame(self, points: list[MapPoint], predicted: list[tuple[float, float]]) -> None:
        """Pad the view around the points and the predicted lanes' (x, ms): a single size would otherwise make a
        zero-width log axis."""
        view = plot_item(self.plot).getViewBox()
        if not points and not predicted:
            view.setRange(xRange=(6, 10), yRange=(-1, 2), padding=0)
            return
        xs = [math.log10(max(self._x(p), 1e-9)) for p in points] + [math.log10(max(x, 1e-9)) for x, _ in predicted]
        ys = [math.log10(p.point.median_ms) for p in points] + [math.log10(ms) for _, ms in predicted]
        # At least two decades wide: a narrower log axis labels every minor tick, and they overlap.
        x_pad = max(0.3, (2.0 - (max(xs) - min(xs))) / 2)
        y_pad = max(0.2, (1.0 - (max(ys) - min(ys))) / 2)
        view.setRange(xRange=(min(xs) - x_pad, max(xs) + x_pad), yRange=(min(ys) - y_pad, max(ys) + y_pad),
                      padding=0)

    @staticmethod
    def _key_text(shown: list[MapPoint], colors: SchemeColors) -> tuple[str, str]:
        """The key (lane names and the kinds of point shown, short enough for one line in a narrow window)
        and its tooltip (each lane's device and what each kind means)."""
        parts, whole = [], []
        for lane in sorted({p.lane for p in shown}):
            device = next((p.point.device for p in reversed(shown) if p.lane == lane and p.point.device), "")
            parts.append(f"<span style='color:{lane_color(lane, colors.dark).name()}'>━●</span>&nbsp;{rich(lane)}")
            whole.append(f"{lane}: {device}" if device else lane)
        kinds = {p.kind for p in shown} - {PointKind.COMPLETED}
        for kind in (PointKind.PROVISIONAL, PointKind.CUT_SHORT, PointKind.CONTENDED):
            if kind in kinds:
                parts.append(f"{KIND_GLYPHS[kind]}&nbsp;{kind.replace(' ', '&nbsp;')}")
                whole.append(f"{KIND_GLYPHS[kind]} {KIND_WORDS[kind]}")
        shapes = sorted({p.shape for p in shown if p.joined})
        if len(shapes) > 1:  # each kind of model's line style, named: predict calls, other families, batch sizes
            for shape in shapes:
                glyph = STYLE_GLYPHS[SHAPE_STYLES[min(shapes.index(shape), len(SHAPE_STYLES) - 1)]]
                parts.append(f"{glyph}&nbsp;{rich(shape_words(shape)).replace(' ', '&nbsp;')}")
            whole.append("Each kind of model (family, depth, batch size, train or predict) has its own line style; "
                         "lines of different kinds are never joined or crossed")
        return " &nbsp; ".join(parts), "\n".join(whole)

    @staticmethod
    def _predicted_key(key: str, whole: str, curves: list[PredictedCurve], colors: SchemeColors) -> tuple[str, str]:
        """The key and its tooltip with each predicted lane: its dashes in its lane's colour, its label, and (in the
        tooltip) its profile and what dashes, band and dots mean."""
        parts = [key] if key else []
        for curve in curves:
            color = lane_color(curve.lane.lane, colors.dark).name()
            parts.append(f"<span style='color:{color}'>╌╌</span>&nbsp;{rich(curve.label).replace(' ', '&nbsp;')}")
        if any(c.extrapolated for c in curves):
            parts.append("┈┈&nbsp;extrapolated&nbsp;(no&nbsp;interval)")
        profiles = {c.lane.profile.name: c.lane.profile for c in curves}
        lines = [whole] if whole else []
        lines += [profile_words(p) for p in profiles.values()] + [PREDICTED_TIP]
        return " &nbsp; ".join(parts), "\n".join(lines)

    @staticmethod
    def _describe(shown: list[MapPoint], found: list[tuple[Shape, PairVerdict]],
                  drawn: dict[Line, list[MapPoint]]) -> str:
        """The one rule's sentences, per kind of model when there are several, in the units the user moves."""
        said = [v for _, v in found if v.state is not State.NOT_ENOUGH and len(v.widths) >= 2]
        if said:
            several = len({p.shape for p in shown}) > 1
            text = " ".join(
                (f"{shape_words(shape)}: " if several else "") + pair_words(v, width_unit(shape[2])) + "."
                for shape, v in found if v in said)
            provisional = any(p.kind is PointKind.PROVISIONAL for pts in drawn.values() for p in pts)
            return text + (" (Completed points only; the run in progress is still measuring.)" if provisional else "")
        sizes = {p.point.flops_per_batch for p in shown}
        if len({p.lane for p in shown}) < 2 or len(sizes) < 2:
            return ("Each run adds a point per lane and model. Change a width while it trains, press Ramp, or run "
                    "two or more model sizes to see where the lanes cross.")
        same_model = {(len(p.widths), p.widths, p.family, p.task) for p in shown}
        if len(same_model) == 1 and len({p.point.batch_size for p in shown}) > 1:
            return ("These points are one model at several batch sizes: the map joins and crosses models of one "
                    "batch size, so where the lanes cross along batch size is said in the Summary (and by the "
                    "Sweep tab, which shows this ramp as a sweep).")
        return ("No two lanes have completed points of the same depth and batch size at two widths yet: run "
                "the same model at other widths (Ramp does) to see where they cross.")
