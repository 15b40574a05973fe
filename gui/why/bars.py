"""The Why picture: each lane's synced step as a stacked bar of its parts, with the pipelined clock and the floor marked.

Also a command for pictures made from `main.py anatomy --json` output without opening the window:
`python -m crossover_lab.gui.why.bars anatomy.json out.png [--title TEXT]` (one bar per lane and model).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QWidget

from ...core.analysis.anatomy import AnatomyPoint, point_from_json, stacked
from ...core.config import Task
from ...core.words.anatomy import PART_LABELS, PER_CALL_CLOCK, PIPELINED_CLOCK, SYNCED_CLOCK
from ..widgets.plot_export import save_offscreen
from ..widgets.plots import plot_item
from ..theme.scheme import LIGHT, PlotTheme, SchemeColors, readable

# Okabe-Ito, one hue per part; made readable on the scheme's ground when drawn.
PART_COLORS = {"device_work": "#009E73", "host_dispatch": "#E69F00", "synchronisation": "#CC79A7",
               "fit_and_input": "#56B4E9",
               # a served call's parts (the predict ladder): the same hues for the same kinds of time
               "answer_back": "#CC79A7", "input_transfer": "#0072B2", "predict_machinery": "#56B4E9"}
BAR_HEIGHT = 0.6


class WhyBars(pg.PlotWidget):
    """Horizontal bars, one per lane: the parts of its synced step (bottom-up order of core/anatomy.STACK, left
    to right, then what the spread leaves unattributed), a tick at its pipelined step (fit_pipelined) and a diamond
    at its floor (device_loop)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.setAccessibleName("Why: each lane's step split into its parts, in ms per step")
        self.setLabel("bottom", "ms per training step")
        self.showGrid(x=True, y=False, alpha=0.25)
        self.setMouseEnabled(x=False, y=False)
        # The key runs in columns along the top, over room kept empty above the bars (set_points): in the corner
        # it covered the last lane's bar end and its pipelined tick.
        self.legend = self.addLegend(offset=(10, 5), colCount=self._columns())
        self.points: list[AnatomyPoint] = []
        self.theme = PlotTheme(self, lambda _colors: self.set_points(self.points))
        self.getAxis("left").setTicks([[]])  # its rows are lanes: no numbers before the first (a cut-off "1.0")

    def _columns(self) -> int:
        """The key's columns: three where the plot is wide enough for them, else two (at 1024×700)."""
        return 3 if self.width() >= 820 else 2

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(ev)
        legend, points = self.__dict__.get("legend"), self.__dict__.get("points")  # none before __init__ made them
        if legend is not None and points and self._columns() != legend.columnCount:
            self.set_points(points)

    def set_points(self, points: Sequence[AnatomyPoint]) -> None:
        self.clear()
        self.legend.clear()
        self.legend.setColumnCount(self._columns())
        self.points = list(points)
        colors = self.theme.colors
        several = len({p.widths for p in self.points}) > 1  # bars of several models: name each one's
        ticks = [(i, f"{p.lane} · {'-'.join(map(str, p.widths))}" if several else p.lane)
                 for i, p in enumerate(self.points)]
        left = self.getAxis("left")
        left.setTicks([ticks])
        # The axis sizes itself to numbers, not to names: make room for the longest lane label.
        longest = max((t for _, t in ticks), key=len, default="")
        left.setWidth(16 + QFontMetrics(left.style["tickFont"] or QFont()).horizontalAdvance(longest))
        shown_parts: set[str] = set()
        for i, point in enumerate(self.points):
            x = 0.0
            for name, ms in stacked(point):
                rest = name == "rest"  # what parts shown as ≈0 leave: neutral, not a part
                bar = pg.BarGraphItem(x0=[x], y=[i], width=[ms], height=BAR_HEIGHT,
                                      brush=pg.mkBrush(colors.neutral) if rest else self.part_color(name, colors),
                                      pen=pg.mkPen(colors.background))
                self.addItem(bar)
                if name not in shown_parts:
                    shown_parts.add(name)
                    self.legend.addItem(bar, "within the rungs' spread" if rest else PART_LABELS[name])
                x += ms
            self._mark(point, "fit_pipelined", i, "|", f"{PIPELINED_CLOCK} (fit, no per-step sync)", colors)
            self._mark(point, "device_loop", i, "d", "floor (on-device loop)", colors)
        calls = bool(self.points) and all(p.task == Task.PREDICT for p in self.points)
        self.setLabel("bottom", "ms per call (predict)" if calls else "ms per training step")
        self.setAccessibleName("Why: each lane's " + ("call" if calls else "step") + " split into its parts, in ms")
        if self.points:
            self.enableAutoRange()
            rows = math.ceil(len(self.legend.items) / self.legend.columnCount)
            room = 0.3 * rows * max(1.0, len(self.points) / 2)  # about 25 px a row of the key, in bar rows
            plot_item(self).getViewBox().setYRange(-0.6, len(self.points) - 0.4 + room, padding=0)
            self.setTitle(f"bars: the {PER_CALL_CLOCK} (predict_on_batch, answer back on the host)" if calls else
                          f"bars: the {SYNCED_CLOCK} (fit, loss read every step)", color=colors.text, size="10pt")

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


def render_png(points: Sequence[AnatomyPoint], path: str, title: str = "", size: tuple[int, int] = (1600, 900)) -> None:
    """Draw the bars offscreen, light (for slides and the README), and save them as a PNG."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    bars = WhyBars()
    bars.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    bars.theme.apply(LIGHT)
    bars.resize(*size)
    bars.set_points(points)
    if title:
        bars.setTitle(title, color=LIGHT.text, size="11pt")
    bars.show()
    app.processEvents()
    save_offscreen(bars, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crossover_lab.gui.why.bars",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("json", nargs="+", help="files written by main.py anatomy --json / --json-file")
    parser.add_argument("png")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    points = []
    for path in args.json:
        with open(path, encoding="utf-8") as fh:
            points += [point_from_json(p) for p in json.load(fh)["points"]]
    render_png(points, args.png, args.title)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
