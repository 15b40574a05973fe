"""The live plot: ms per batch as batches arrive, one colour per lane, warm-up apart, rolling medians."""
from __future__ import annotations
from ..widgets.plain_text import rich

import math
from dataclasses import dataclass
from typing import cast

import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QGraphicsGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ...core.config import Schedule, Task
from ...core.words.numbers import fmt_count, local_time
from ..theme.lane_colours import lane_color
from ..live_run import LiveRun
from ..widgets.log_axis import LogAxis
from ..widgets.plot_export import export_plot
from ..widgets.plots import plot_item
from .live_predicted import PredictedLines, live_predictions, why_not_drawn
from .plot_scale import StableRange
from .predicted import PredictedLanes
from .segment_marks import SegmentMarks
from ..settings import AppSettings
from ..theme.scheme import PlotTheme, SchemeColors

X_AXES = {"batch": "batch (training step)", "elapsed": "seconds since the lane started"}
PREDICT_X_AXES = {"batch": "call (one predict call per batch)", "elapsed": "seconds since the lane started"}
RATE_X_AXES = {"batch": "call, in order (drawn at the oldest request it answered)",
               "elapsed": "seconds since the lane started"}
LEGEND_GAP_PX = 24  # between a legend entry and the next, and its sample's own margin
LEGEND_MARGIN_PX = 90  # the y axis and the plot's edges: what the legend row cannot use
SCHEDULE_WORDS = {Schedule.INTERLEAVED: "taking turns", Schedule.SIDE_BY_SIDE: "side by side",
                  Schedule.SEQUENTIAL: "one after another"}


@dataclass
class LaneItems:
    """What one lane draws: raw steady points, their rolling median, warm-up markers."""

    steady: pg.PlotDataItem
    median: pg.PlotDataItem
    warmup: pg.PlotDataItem
    version: int = -1
    x_kind: str = ""


def run_title(live: LiveRun) -> str:
    """What the plot shows: the model (or the ramp's widths), the batch size, the lanes and how they shared the machine."""
    cfg = live.config
    batches = [c.train.batch_size for c in live.plan]
    if len(live.plan) > 1 and len(set(batches)) > 1:  # a ramp through batch sizes, at one model
        schedule = SCHEDULE_WORDS[live.result.schedule]
        return (f"{live.plan[0].model.label()} · ramp batch {' → '.join(map(str, batches))} · "
                f"{' vs '.join(live.lanes)}" + (f" ({schedule})" if len(live.lanes) > 1 else ""))
    if len(live.plan) > 1:
        sizes = [c.model.widths for c in live.plan]
        model = "ramp " + " → ".join(str(s[0]) if len(set(s)) == 1 else "-".join(map(str, s)) for s in sizes)
        if len({len(s) for s in sizes}) == 1:
            model += f" ({fmt_count(len(sizes[0]), 'layer')})"
    else:
        model = cfg.model.label()
        # A model changed while it trains: the hidden widths it has trained, in order ("16 → 1024").
        starts = sorted((seg.started.at, seg.label) for lane in live.lanes.values() for seg in lane.segments)
        labels: list[str] = []  # in the order trained, a model dragged back to said again ("128 → 4000 → 128")
        for _, label in starts:
            if not labels or labels[-1] != label:
                labels.append(label)
        if len(labels) > 1:
            model = f"hidden {' → '.join(labels)}"
    schedule = SCHEDULE_WORDS[live.result.schedule]
    lanes = " vs ".join(live.lanes)
    return f"{model} · batch {cfg.train.batch_size} · {lanes}" + (f" ({schedule})" if len(live.lanes) > 1 else "")


class LivePlot(QWidget):
    """Redrawn by refresh() (the controller's 25 Hz timer), never once per batch."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.x_axis = QComboBox()
        # Elapsed seconds first: lanes taking turns line up in time, so a drag's change shows at one x in every lane
        # and the lines visibly cross; at a batch index two lanes' changes fall far apart.
        self.x_axis.addItem("x: elapsed seconds", "elapsed")
        self.x_axis.addItem("x: batch", "batch")
        self.x_axis.setToolTip("Plot each batch at the time it ended (lanes line up in time), or at its step number.")
        self.x_axis.setAccessibleName("Live plot x axis")
        self.log_y = QCheckBox("Log y")
        self.log_y.setToolTip("Logarithmic ms axis: lanes that differ tenfold both stay readable.")
        self.show_median = QCheckBox("Rolling median")
        self.show_median.setChecked(True)
        self.show_median.setToolTip("A thick line per lane: the median of the last 21 steady batches.")
        self.title = QLabel("No run yet: choose the lanes and press Start (F5).")
        self.title.setObjectName("plotTitle")
        self.title.setWordWrap(True)
        bar = QHBoxLayout()  # the title on a line of its own: beside the controls it wraps a word a line when narrow
        bar.addStretch(1)
        for widget in (self.x_axis, self.log_y, self.show_median):
            bar.addWidget(widget)
        self.plot = pg.PlotWidget(axisItems={"left": LogAxis("left", lambda ms: f"{ms:g}")})
        self.plot.setAccessibleName("Live plot: ms per batch of every lane")
        self.plot.setToolTip("Step time of every batch. Hollow markers: warm-up batches (tracing, first "
                             "memory touches), left out of the autoscale so the steady state fills the plot.")
        self.plot.setLabel("left", "ms per batch")
        self.plot.setLabel("bottom", X_AXES["elapsed"])
        self.plot.showGrid(x=False, y=True, alpha=0.25)
        self._range = StableRange()
        self._auto = True  # False once the user pans or zooms; the plot's "A" button gives it back
        view = self.plot.getViewBox()
        view.disableAutoRange()
        view.sigRangeChangedManually.connect(self._on_view_range_changed_manually)
        # The legend sits under the x axis, in a row of its own: over the plot it covered the newest points and
        # the segment labels (a ramp climbs to the top right).
        item = plot_item(self.plot)
        self.legend = pg.LegendItem(colCount=2)
        # pyqtgraph keeps the item's grid in `layout`, over QGraphicsWidget.layout() (which the stubs see).
        cast(QGraphicsGridLayout, item.layout).addItem(self.legend, 4, 1)
        item.legend = self.legend
        self.marks = SegmentMarks(self.plot)
        self.predicted_lines = PredictedLines(self.plot)
        self._predicted: PredictedLanes | None = None  # the crossover map's predicted lanes (set_predicted)
        self.predicted_note = QLabel()  # under the plot while predicted lanes are chosen: what the dashes are
        self.predicted_note.setWordWrap(True)
        self.predicted_note.setObjectName("hintLabel")
        self.predicted_note.hide()
        self.theme = PlotTheme(self.plot, self._restyle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.predicted_note)
        self._live: LiveRun | None = None
        self._axes = X_AXES  # what x is: a training step, or (the predict task) one call
        self._items: dict[str, LaneItems] = {}
        self.x_axis.currentIndexChanged.connect(self._on_x_axis_changed)
        self.log_y.toggled.connect(self._on_log_y_toggled)
        self.show_median.toggled.connect(self._on_show_median_toggled)

    # ------------------------------------------------------------------ drawing

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_legend(event.size().width())

    def _fit_legend(self, width: int | None = None) -> None:
        """Two legend entries a row where every one fits whole, one a row where a device's name would be cut at
        the right edge (the entries' own widths decide, not a fixed window width)."""
        width = self.width() if width is None else width
        entries = [sample.boundingRect().width() + label.boundingRect().width() + LEGEND_GAP_PX
                   for sample, label in self.legend.items]

        def needed(columns: int) -> float:
            return sum(max(entries[c::columns], default=0.0) for c in range(columns))

        columns = 2 if len(entries) > 1 and needed(2) <= width - LEGEND_MARGIN_PX else 1
        self.legend.setColumnCount(columns)  # a no-op when it has that many

    def set_predicted(self, lanes: PredictedLanes) -> None:
        """Draw the crossover map's predicted lanes for the run shown, and follow them as they change."""
        self._predicted = lanes
        lanes.changed.connect(self._on_predicted_changed)
        self._draw_predicted()

    def show_run(self, live: LiveRun) -> None:
        """Clear the plot for a new run; its lanes appear as they start."""
        self.plot.clear()
        self.legend.clear()
        self.marks.clear()
        self.predicted_lines.clear()
        self._items = {}
        self._live = live
        self._range.reset()
        at_rate = live.result.config.train.arrival_rate is not None
        predict = live.result.config.train.task == Task.PREDICT
        self._axes = RATE_X_AXES if at_rate else PREDICT_X_AXES if predict else X_AXES
        self.plot.setLabel("left", "ms, arrival to answer" if at_rate else
                           "ms per call" if self._axes is PREDICT_X_AXES else "ms per batch")
        self.plot.setLabel("bottom", self._axes[self.x_axis.currentData()])
        # The warm-up's legend key first: turning log y on below redraws the lanes (a finished ramp shown from
        # the history has them all), and their legend holds the key.
        self._warmup_key = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=7, symbolBrush=(0, 0, 0, 0),
                                           symbolPen=pg.mkPen(self.theme.colors.muted), name="warm-up (not autoscaled)")
        plot_item(self.plot).addItem(self._warmup_key, ignoreBounds=True)
        if len(live.plan) > 1 and not self.log_y.isChecked():
            self.log_y.setChecked(True)  # a ramp's widths differ tenfold in ms: each stays readable on log y
        # A run from the history says when it ran: the plot is not of the run in progress.
        self.title.setText(f"Run of {local_time(live.result.started_at)}: {run_title(live)}" if live.finished
                           else run_title(live))
        self._draw_predicted(rescale=False)  # refresh() below rescales
        self.refresh()

    def refresh(self) -> None:
        """Redraw the lanes that changed since the last call."""
        if self._live is None:
            return
        live = self._live
        for name, series in live.series.items():
            if not live.device(name) and not len(series.steady) and not len(series.warmup):
                continue
            items = self._items.get(name) or self._add_lane(live, name)
            if items.version != live.versions[name]:
                self._draw(live, name, items)
        if not live.finished:
            title = run_title(live)
            if self.title.text() != title:
                self.title.setText(title)
        self.marks.update(live, self.x_axis.currentData(), self.theme.colors)
        self._rescale()

    def _rescale(self) -> None:
        view = self.plot.getViewBox()
        if any(view.state["autoRange"]):  # the user pressed "A": scaling is ours again
            view.disableAutoRange()
            self._auto = True
            self._range.reset()
        if not self._auto or self._live is None:
            return
        live = self._live
        series = live.series.values()
        log = self.log_y.isChecked()
        if self._range.update_y([s.steady.ms.values for s in series], log, self.predicted_lines.values()) \
                and (y := self._range.y) is not None:
            bottom, top = y
            view.setYRange(math.log10(bottom) if log else bottom, math.log10(top) if log else top, padding=0)
        if self.x_axis.currentData() == "batch":
            last = max((live.steps_done(name) for name in live.lanes), default=0)
            total = max((live.total_steps(name) for name in live.lanes), default=0)
        else:
            last = max((float(s.steady.elapsed.values[-1]) for s in series if len(s.steady)), default=0.0)
            total = 0
        if self._range.update_x(last, total) and (x := self._range.x) is not None:
            view.setXRange(*x, padding=0.01)

    def _add_lane(self, live: LiveRun, lane: str) -> LaneItems:
        steady = pg.PlotDataItem()
        steady.setClipToView(True)
        steady.setDownsampling(auto=True, method="peak")
        # The legend shows the median's solid line: the raw points' faint one is hard to tell apart.
        median = pg.PlotDataItem(name=rich(f"{lane} · {live.device(lane) or '…'}"))
        median.setClipToView(True)
        median.setDownsampling(auto=True, method="peak")
        median.setVisible(self.show_median.isChecked())
        warmup = pg.PlotDataItem(pen=None, symbol="o", symbolSize=7, symbolBrush=(0, 0, 0, 0))
        self.plot.addItem(steady)
        self.plot.addItem(median)
        plot_item(self.plot).addItem(warmup, ignoreBounds=True)
        items = self._items[lane] = LaneItems(steady, median, warmup)
        self._pen_lane(lane, items, self.theme.colors)
        self._relegend()
        return items

    def _pen_lane(self, lane: str, items: LaneItems, colors: SchemeColors) -> None:
        color = lane_color(lane, colors.dark)
        faint = QColor(color)
        faint.setAlpha(70)  # the raw trace stays behind: on long, spiky runs the median must read clearly
        items.steady.setPen(pg.mkPen(faint, width=1))
        # Further from the ground than the raw trace: darker on light, lighter on dark.
        items.median.setPen(pg.mkPen(QColor(color).lighter(115) if colors.dark else QColor(color).darker(115), width=3))
        items.warmup.setSymbolPen(pg.mkPen(color, width=1.5))

    def _restyle(self, colors: SchemeColors) -> None:
        """The lanes' pens for a new scheme (PlotTheme has done the ground, axes and legend)."""
        if self._live is not None:
            self._warmup_key.setSymbolPen(pg.mkPen(colors.muted))
        for lane, items in self._items.items():
            self._pen_lane(lane, items, colors)
        self.marks.restyle(colors)
        self._draw_predicted(colors=colors)

    def _draw(self, live: LiveRun, lane: str, items: LaneItems) -> None:
        x_kind = self.x_axis.currentData()
        series, device = live.series[lane], live.device(lane)
        steady_x = getattr(series.steady, "step" if x_kind == "batch" else "elapsed").values
        warm_x = getattr(series.warmup, "step" if x_kind == "batch" else "elapsed").values
        items.steady.setData(steady_x, series.steady.ms.values)
        items.median.setData(steady_x, series.median.values)
        label = f"{lane} · {device}" if device else lane
        if items.median.name() != label:
            items.median.opts["name"] = label
            self._relegend()
        if len(items.warmup.xData if items.warmup.xData is not None else ()) != len(series.warmup) \
                or x_kind != items.x_kind:
            items.warmup.setData(warm_x, series.warmup.ms.values)
        items.version, items.x_kind = live.versions[lane], x_kind

    def _relegend(self) -> None:
        """Legend entries in the run's lane order, whichever lane started first."""
        self.legend.clear()
        self.legend.addItem(self._warmup_key, self._warmup_key.name())
        for name in self._live.lanes if self._live else ():
            if name in self._items:
                self.legend.addItem(self._items[name].median, self._items[name].median.name())
        self._fit_legend()

    def points_drawn(self, warmup: bool = False) -> dict[str, int]:
        """Steady points on the plot per lane (what a test or a status line can check); with `warmup`,
        the warm-up markers too: a new segment's first batches are warm-up."""
        def count(item: pg.PlotDataItem) -> int:
            return len(item.xData if item.xData is not None else ())

        return {name: count(items.steady) + (count(items.warmup) if warmup else 0)
                for name, items in self._items.items()}

    # ------------------------------------------------------------------ export

    def export_image(self, path: str) -> None:
        """Save the plot as PNG, or as SVG when the path ends in .svg: light in either scheme, for slides."""
        with self.theme.light_for_export():
            export_plot(self.plot, path, "Crossover: ms per batch")


    # ------------------------------------------------------------------ toolbar

    def save_state(self, settings: AppSettings) -> None:
        settings.set_flag("plot/log_y", self.log_y.isChecked())
        settings.set_text("plot/x_axis", self.x_axis.currentData())

    def restore_state(self, settings: AppSettings) -> None:
        self.log_y.setChecked(settings.flag("plot/log_y"))
        self.x_axis.setCurrentIndex(max(0, self.x_axis.findData(settings.text("plot/x_axis", "elapsed"))))

    def _redraw_all(self) -> None:
        for items in self._items.values():
            items.version = -1
        self._range.reset()
        self.refresh()

    @Slot()
    def _on_x_axis_changed(self) -> None:
        self.plot.setLabel("bottom", self._axes[self.x_axis.currentData()])
        self._redraw_all()

    @Slot(bool)
    def _on_log_y_toggled(self, checked: bool) -> None:
        self.plot.setLogMode(y=checked)
        self._draw_predicted()
        self._redraw_all()

    # ------------------------------------------------------------------ predicted lanes

    def _segments(self, live: LiveRun) -> int:
        """How many models the run shown trains: a ramp's plan, or a model changed while it ran."""
        labels = {seg.label for lane in live.lanes.values() for seg in lane.segments}
        return max(len(live.plan), len(labels))

    def _draw_predicted(self, rescale: bool = True, colors: SchemeColors | None = None) -> None:
        """The predicted lines for the run shown (none before a run, for a ramp, or at a rate), and the note."""
        lanes = self._predicted.lanes if self._predicted is not None else ()
        live = self._live
        why = why_not_drawn(live.result.config, self._segments(live)) if live and lanes else ""
        shown = live_predictions(lanes, live.result.config) if live and lanes and not why else []
        self.predicted_lines.draw(shown, self.log_y.isChecked(), colors or self.theme.colors)
        if not lanes:
            note = ""
        elif why:
            note = f"No predicted line on this run: {why}."
        elif live is None:
            names = ", ".join(dict.fromkeys(x.profile.name for x in lanes))
            note = f"Predicted lanes from {names} are drawn on the run shown, dashed."
        else:
            which = ", ".join(f"{x.lane} from {x.profile.name}" for x in lanes)
            refused = len(lanes) - len(shown)
            note = (f"Dashed: predicted for this run's model ({which}), not measured; the light band is the 95% "
                    "interval, a dotted line an extrapolation." + (
                        f" {fmt_count(refused, 'predicted lane')} had no figure for this model."
                        if refused else ""))
        self.predicted_note.setText(note)
        self.predicted_note.setVisible(bool(note))
        self._range.reset()
        if rescale and live is not None:  # the y range holds the lines
            self._rescale()

    @Slot()
    def _on_predicted_changed(self) -> None:
        self._draw_predicted()

    @Slot()
    def _on_view_range_changed_manually(self) -> None:
        self._auto = False

    @Slot(bool)
    def _on_show_median_toggled(self, checked: bool) -> None:
        for items in self._items.values():
            items.median.setVisible(checked)
