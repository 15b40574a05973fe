"""Where a lane changed model: a vertical line at the segment's first batch, labelled with its widths.

A run on one model has no marks. Lanes that start the same segment at the same place (side by side,
a ramp on the batch axis) share one neutral line instead of drawing two on top of each other.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont

from ..theme.lane_colours import lane_color
from ...core.results import by_batch_size
from ..live_run import LiveRun
from ..widgets.plots import plot_item
from ..theme.scheme import TICK_PX, SchemeColors, presenting

# Label heights, top of the plot down, taken in turn so the labels of close segments do not overlap.
LABEL_ROWS = (0.93, 0.84, 0.75)
LABEL_SHARE = 0.12  # a label's width, as a share of the plot's x span (a model's widths, "4000" or "512-512")


LABEL_PX = 11  # a mark's label, as tall as the axes' ticks (TICK_PX while presenting)


def label_px() -> int:
    return TICK_PX if presenting() else LABEL_PX


@dataclass(frozen=True)
class Mark:
    x: float
    label: str  # the segment's widths, "512-512"
    lanes: tuple[str, ...]  # every lane whose segment starts here


def segment_marks(live: LiveRun, x_kind: str) -> list[Mark]:
    """The marks a run's plot should show now, left to right (x: batch number or seconds since the
    lane started, as the plot's x axis)."""
    found: dict[tuple[float, str], list[str]] = {}
    by_batch = by_batch_size(seg for result in live.lanes.values() for seg in result.segments)
    for lane, result in live.lanes.items():
        if len(result.segments) < 2 and len(live.plan) < 2:
            continue
        for segment in result.segments:
            if x_kind == "batch":
                x = float(segment.started.first_step)
            else:
                records = live.segment_records(lane, segment.index)
                if not records:
                    continue
                x = records[0].start_s
            found.setdefault((round(x, 3), segment.named(by_batch)), []).append(lane)
    marks = [Mark(x, label, tuple(lanes)) for (x, label), lanes in sorted(found.items())]
    # One mark a change: lanes taking turns switch seconds apart, so one change of the model made one mark per lane
    # ("4000" twice beside "128"); consecutive marks of one model are one, at the first lane's switch.
    merged: list[Mark] = []
    for mark in marks:
        if merged and merged[-1].label == mark.label:
            last = merged[-1]
            merged[-1] = Mark(last.x, last.label, tuple(dict.fromkeys(last.lanes + mark.lanes)))
        else:
            merged.append(mark)
    return merged


def label_rows(xs: list[float], span: float) -> list[int]:
    """A row (an index into LABEL_ROWS) for each mark's label, left to right: the highest row whose last label lies
    at least a label's width (LABEL_SHARE of the plot's x span) to the left, else the row used longest ago, so that
    labels of close marks never sit on each other."""
    gap = LABEL_SHARE * span if span > 0 else 0.0
    last = [float("-inf")] * len(LABEL_ROWS)
    rows = []
    for x in xs:
        free = [r for r in range(len(LABEL_ROWS)) if x - last[r] >= gap]
        row = free[0] if free else min(range(len(LABEL_ROWS)), key=lambda r: last[r])
        last[row] = x
        rows.append(row)
    return rows


class SegmentMarks:
    """The marks drawn on a plot, kept in step with `segment_marks` (adds and removes only what changed)."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self._lines: dict[Mark, pg.InfiniteLine] = {}

    def clear(self) -> None:
        """Forget the lines (the plot was cleared, which removed them)."""
        self._lines = {}

    def update(self, live: LiveRun, x_kind: str, colors: SchemeColors) -> None:
        wanted = segment_marks(live, x_kind)
        for mark in set(self._lines) - set(wanted):
            self.plot.removeItem(self._lines.pop(mark))
        box = plot_item(self.plot).getViewBox()
        (x0, x1), _ = box.viewRange()
        xs = [m.x for m in wanted]
        span = max(x1 - x0, (max(xs) - min(xs)) if xs else 0.0)
        # A label's width on screen, in the x axis's units: the longest label at the labels' font, over the plot's
        # width now (a narrow window, a longer run and the presentation view all bring close marks' labels nearer).
        widest = max((len(m.label) for m in wanted), default=0) * label_px() * 0.62 + 10
        if box.width() > 0 and x1 > x0:
            span = widest * (x1 - x0) / box.width() / LABEL_SHARE
        rows = label_rows(xs, span)
        for i, mark in enumerate(wanted):
            line = self._lines.get(mark)
            if line is not None and line.label.orthoPos != LABEL_ROWS[rows[i]]:
                line.label.setPosition(LABEL_ROWS[rows[i]])  # the plot grew or narrowed: a row free of the others
            if mark not in self._lines:
                line = pg.InfiniteLine(pos=mark.x, angle=90, movable=False, label=mark.label,
                                       labelOpts={"position": LABEL_ROWS[rows[i]], "movable": False,
                                                  "anchors": [(0, 0.5), (0, 0.5)]})
                line.setToolTip(f"{', '.join(mark.lanes)}: model {mark.label} from here")
                plot_item(self.plot).addItem(line, ignoreBounds=True)
                self._lines[mark] = line
                self._style(mark, line, colors)

    def restyle(self, colors: SchemeColors) -> None:
        for mark, line in self._lines.items():
            self._style(mark, line, colors)

    def labels(self) -> list[str]:
        """The marks' labels, left to right (what a test checks)."""
        return [mark.label for mark in sorted(self._lines, key=lambda m: m.x)]

    @staticmethod
    def _style(mark: Mark, line: pg.InfiniteLine, colors: SchemeColors) -> None:
        color = lane_color(mark.lanes[0], colors.dark) if len(mark.lanes) == 1 else QColor(colors.neutral)
        line.setPen(pg.mkPen(color, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        line.label.setColor(color)
        line.label.fill = pg.mkBrush(*colors.label_fill)
        font = QFont()
        font.setPixelSize(label_px())
        line.label.setFont(font)
