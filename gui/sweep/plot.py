"""The sweep picture: ms per batch against width (log-log) per lane, fitted cost lines, crossovers marked.

Also a command for pictures made from any sweep CSV without opening the window:
`python -m gui.sweep_plot sweep.csv out.png [--title TEXT]`.
"""
from __future__ import annotations
from ..widgets.plain_text import rich

import argparse
import dataclasses
import html
import math
import sys
from collections import defaultdict
from typing import Mapping, Sequence, cast

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextOption
from PySide6.QtWidgets import QGraphicsGridLayout, QWidget

from ...core.analysis.energy import energy_curves
from ...core.analysis.fits import CostFit, fit_cost_model
from ...core.analysis.crossings import find_crossovers
from ...core.analysis.points import Crossover, SweepPoint
from ...core.words.numbers import fmt_num
from ...core.words.sweep import crossing_label
from ..theme.lane_colours import lane_color
from ..widgets.plot_export import save_offscreen
from ..widgets.plots import plot_item
from ..theme.scheme import LIGHT, PlotTheme

SLIDE_SIZE = (1600, 1000)  # an exported picture, whatever the window's size: sharp on a 16:10 slide
SLIDE_PT = 16  # its axis titles; ticks, legend and labels a little smaller, its title a little larger
LEGEND_DEVICE_CHARS = 28  # in the window, "CPU (Intel(R) Xeon(R) Processor, 16 threads)" is cut to this


def energy_points(groups: dict[str, list[SweepPoint]]) -> dict[str, list[SweepPoint]]:
    """Each group's points as energy: joules per million samples where the median was, with the step time's
    relative spread (core/analysis/energy.py says why); points without a counter's reading are left out."""
    out = {}
    for label, pts in groups.items():
        by_key = {(p.lane, p.width): p for p in pts}
        out[label] = [dataclasses.replace(by_key[(c.lane, c.width)], median_ms=c.value, p10_ms=c.lo, p90_ms=c.hi,
                                          floor_ms=math.nan) for c in energy_curves(pts)]
    return {label: pts for label, pts in out.items() if pts}


def curves(groups: dict[str, list[SweepPoint]], find: bool = True) -> tuple[list[SweepPoint], list[Crossover]]:
    """Points to draw, with lanes named by their group when there are several (compare variant,
    batch size), and (`find`) the crossovers found within each group: across groups they mean nothing."""
    points: list[SweepPoint] = []
    crossings: list[Crossover] = []
    for label, pts in groups.items():
        if len(groups) > 1:
            pts = [dataclasses.replace(p, lane=f"{p.lane} [{label}]") for p in pts]
        crossings += find_crossovers(pts, between=True) if find else []
        points += pts
    return points, crossings


class SweepPlot(pg.PlotWidget):
    """Log-log ms/batch against hidden width: measured medians with p10-p90 bars, fits, crossovers."""

    def __init__(self, parent: QWidget | None = None, slide: bool = False) -> None:
        """`slide`: text sized for a picture shown on a projector (render_png), not for the window."""
        super().__init__(parent=parent)
        self.slide = slide
        self.setAccessibleName("Sweep plot: median ms per batch against hidden width, per lane")
        self.setLogMode(x=True, y=True)
        self.showGrid(x=True, y=True, alpha=0.25)
        label_style = {"font-size": f"{SLIDE_PT}pt"} if slide else {}
        self.setLabel("bottom", "hidden width (units per layer)", **label_style)
        self.setLabel("left", "median time per batch (ms)", **label_style)
        self.legend = self.addLegend(offset=(10, 10), **({"labelTextSize": f"{SLIDE_PT - 2}pt"} if slide else {}))
        if slide:
            for axis in ("bottom", "left"):
                self.getAxis(axis).setStyle(tickFont=self._font(SLIDE_PT - 2))
        self.theme = PlotTheme(self, lambda colors: self.set_points(self.points, *self._drawn, energy=self.energy))
        self.fits: dict[str, CostFit] = {}
        self.crossovers: list[Crossover] = []
        self.points: list[SweepPoint] = []  # what is drawn
        self._drawn: tuple[str, Sequence[Crossover] | None] = ("", None)  # title and given crossovers, to redraw
        self.energy = False  # the y axis: time per batch, or energy per sample
        self._set_ticks([])

    def set_points(self, points: Sequence[SweepPoint], title: str = "",
                   crossovers: Sequence[Crossover] | None = None, energy: bool = False,
                   fits: Mapping[str, CostFit | None] | None = None) -> None:
        """Draw `points`; crossovers are found among them unless given (compare mode gives each variant's).
        `energy`: the points' medians are joules per million samples (energy_points), drawn without cost fits.
        `fits`: each lane's cost fit as already made (the window's findings), drawn rather than fitted again."""
        self.energy = energy
        style = {"font-size": f"{SLIDE_PT}pt"} if self.slide else {}
        self.setLabel("left", "joules per million samples" if energy else "median time per batch (ms)", **style)
        # A sweep along batch size at one width has the batch size on x (its points' axis, core/files/sweeps/rows.py).
        self.setLabel("bottom", "batch size (samples per batch)" if any(p.axis == "batch" for p in points)
                      else "hidden width (units per layer)", **style)
        self.clear()
        self.legend.clear()
        self.points = list(points)
        self._drawn = (title, crossovers)
        colors = self.theme.colors
        if points:
            self.enableAutoRange()  # the empty plot's fixed frame must not hold the measured points
        if title:
            self._set_title(title)
        by_lane: dict[str, list[SweepPoint]] = defaultdict(list)
        for p in points:
            if p.median_ms > 0 and math.isfinite(p.median_ms):
                by_lane[p.lane].append(p)
        self.fits = {}
        for lane, pts in sorted(by_lane.items()):
            pts.sort(key=lambda p: p.width)
            color = lane_color(lane, colors.dark)
            w = np.array([p.width for p in pts], dtype=float)
            ms = np.array([p.median_ms for p in pts])
            device = pts[0].device
            if len(device) > LEGEND_DEVICE_CHARS and not self.slide:  # the legend must fit a 1024 px window
                device = device[:LEGEND_DEVICE_CHARS - 1] + "…"
            name = rich(f"{lane} — {device}" if device else lane)  # a legend entry is HTML: the file's text, escaped
            self.plot(w, ms, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=8, symbolBrush=color,
                      symbolPen=pg.mkPen(colors.point_outline), name=name)
            lo = np.array([p.p10_ms if math.isfinite(p.p10_ms) else p.median_ms for p in pts])
            hi = np.array([p.p90_ms if math.isfinite(p.p90_ms) else p.median_ms for p in pts])
            # Error bars in log space: ErrorBarItem draws in the (log) data coordinates it is given.
            bars = pg.ErrorBarItem(x=np.log10(w), y=np.log10(ms), top=np.log10(hi) - np.log10(ms),
                                   bottom=np.log10(ms) - np.log10(lo), beam=0.03, pen=pg.mkPen(color))
            self.addItem(bars)
            fit = None if energy else (fits[lane] if fits is not None and lane in fits else
                                       fit_cost_model([p.flops_per_batch for p in pts], ms.tolist()))
            if fit is not None and math.isfinite(fit.gflops):
                self.fits[lane] = fit
                pred = np.array([fit.predict_ms(p.flops_per_batch) for p in pts])
                # The fits join the legend only while it stays short; the verdict text has them all.
                fit_name = (rich(lane) + f" fit: {fmt_num(fit.overhead_ms)} ms intercept + FLOPs / {fmt_num(fit.gflops)} "
                            "GFLOP/s"
                            if len(by_lane) <= 2 else None)
                self.plot(w, pred, pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine), name=fit_name)
            floors = [(p.width, p.floor_ms) for p in pts if math.isfinite(p.floor_ms) and p.floor_ms > 0]
            if floors:  # sweep --floor: the on-device loop's step, long dashes, thicker than the fit's
                pen = pg.mkPen(color, width=2, style=Qt.PenStyle.CustomDashLine)
                pen.setDashPattern([6, 3])
                self.plot(*map(np.array, zip(*floors)), pen=pen, symbol="d", symbolSize=6, symbolBrush=color,
                          name=f"{rich(lane)} floor (on-device loop)")
        self._set_ticks(points)
        self.crossovers = list(crossovers) if crossovers is not None else find_crossovers(points, between=True)
        for i, c in enumerate(self.crossovers):
            self._mark(c, i)

    def _set_title(self, title: str) -> None:
        """`title` a line per line (picture_title: the model, then the machines), centred; pyqtgraph
        gives a title one row 30 px high, which would cut off all but one line at slide size."""
        self.setTitle(html.escape(title).replace("\n", "<br>"), color=self.theme.colors.text,
                      size=f"{SLIDE_PT + 2}pt" if self.slide else "11pt")
        item = plot_item(self)
        label, text = item.titleLabel, item.titleLabel.item
        text.document().setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignHCenter))
        text.setTextWidth(text.document().idealWidth())
        height = math.ceil(text.boundingRect().height()) + 4
        label.setMaximumHeight(height)
        # pyqtgraph keeps the item's grid in `layout`, over QGraphicsWidget.layout() (which the stubs see).
        cast(QGraphicsGridLayout, item.layout).setRowFixedHeight(0, height)
        label.resizeEvent(None)

    def _set_ticks(self, points: Sequence[SweepPoint]) -> None:
        """Plain numbers at the swept widths and at 1-2-5 steps of ms: log mode's 3·10¹ reads badly."""
        widths = sorted({p.width for p in points})
        if not widths:  # an empty plot still reads as widths, not log-mode's 2…9
            widths = [16, 64, 256, 1024, 4096]
            view = plot_item(self).getViewBox()
            view.setXRange(math.log10(12), math.log10(8000), padding=0)  # room for the 4,096 label
            view.setYRange(math.log10(0.5), math.log10(50), padding=0)
            ms_default = [0.5, 1, 2, 5, 10, 20, 50]
            self.getAxis("left").setTicks([[(math.log10(v), f"{v:g}") for v in ms_default]])
        # A label at each swept x, but never crowded: one closer than a twelfth of the span to the last one
        # labelled (a refinement's 22, 26, 30) keeps its tick, not its number.
        gap = (math.log10(widths[-1]) - math.log10(widths[0])) / 12 if len(widths) > 1 else 0.0
        labelled: list[int] = []
        for w in widths:
            if not labelled or math.log10(w) - math.log10(labelled[-1]) >= gap or w == widths[-1]:
                if labelled and w == widths[-1] and math.log10(w) - math.log10(labelled[-1]) < gap and len(labelled) > 1:
                    labelled.pop()  # the last width is labelled; the one just before it gives way
                labelled.append(w)
        self.getAxis("bottom").setTicks([[(math.log10(w), f"{w:,}") for w in labelled],
                                         [(math.log10(w), "") for w in widths if w not in labelled]])
        ms = [v for p in points for v in (p.p10_ms, p.p90_ms, p.median_ms) if v > 0 and math.isfinite(v)]
        if ms:
            lo, hi = math.floor(math.log10(min(ms))), math.ceil(math.log10(max(ms)))
            steps = [m * 10.0 ** e for e in range(lo, hi + 1) for m in (1, 2, 5)]
            self.getAxis("left").setTicks([[(math.log10(v), f"{v:g}") for v in steps]])

    def _mark(self, c: Crossover, row: int = 0) -> None:
        """A crossing: the band of widths between the two leads and, where the rule gives one, a dotted line at
        its width; a change hidden by a tie (no width) is its band alone, labelled in its middle."""
        lo, hi = math.log10(c.width_lo), math.log10(c.width_hi)
        band = pg.LinearRegionItem(values=(lo, hi), movable=False, brush=pg.mkBrush(120, 120, 120, 40),
                                   pen=pg.mkPen(None))
        self.addItem(band)
        colors = self.theme.colors
        x = (lo + hi) / 2 if math.isnan(c.width) else math.log10(c.width)
        if not math.isnan(c.width):
            self.addItem(pg.InfiniteLine(pos=x, angle=90,
                                         pen=pg.mkPen(colors.neutral, width=1, style=Qt.PenStyle.DotLine)))
        (x_lo, x_hi), (y_lo, y_hi) = self.getViewBox().viewRange()
        right_half = x > (x_lo + x_hi) / 2  # grow the label away from the edge it would run past
        # The window's label stays short (the verdict under the plot gives the range); a slide has the room.
        label = pg.TextItem(crossing_label(c, spread=self.slide), color=colors.text,
                            anchor=(1 if right_half else 0, 1), fill=pg.mkBrush(*colors.label_fill))
        if self.slide:
            label.setFont(self._font(SLIDE_PT - 1))
        # Along the bottom (the legend owns the top left), stacked so several crossings stay readable.
        label.setPos(x, y_lo + row * (y_hi - y_lo) * 0.07)
        self.addItem(label)

    def _font(self, points: int) -> QFont:
        font = QFont(self.font())
        font.setPointSize(points)
        return font

    def export_png(self, path: str, title: str = "") -> bool:
        """The plot as a picture for a slide: what is drawn now, titled, light in either scheme and
        SLIDE_SIZE whatever the window's size; False if it cannot be written."""
        try:
            render_png(self.points, path, title, self.crossovers)
        except OSError:
            return False
        return True


def render_png(points: Sequence[SweepPoint], path: str, title: str = "",
               crossovers: Sequence[Crossover] | None = None, size: tuple[int, int] = SLIDE_SIZE) -> None:
    """Draw the sweep offscreen, light (pictures go on slides and paper), and save it as a PNG."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    plot = SweepPlot(slide=True)
    plot.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)  # drawn for the file, never seen
    plot.theme.apply(LIGHT)
    plot.resize(*size)
    plot.set_points(points, title, crossovers)
    plot.show()
    app.processEvents()
    # Place the crossover labels once the view has its final range.
    plot.set_points(points, title, crossovers)
    app.processEvents()
    save_offscreen(plot, path)


def main(argv: list[str] | None = None) -> int:
    from ...core.files.sweeps.files import read_sweep_rows
    from ...core.files.sweeps.rows import group_rows

    parser = argparse.ArgumentParser(prog="python -m gui.sweep_plot",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("csv")
    parser.add_argument("png")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    points, crossings = curves(group_rows(read_sweep_rows(args.csv)[0]))
    render_png(points, args.png, args.title, crossings)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
