"""The report's pictures as inline SVG, drawn here (no plotting library, no script): a plot of points and lines
on linear or log axes, and stacked horizontal bars. Every text is escaped; colours come from classes that
the page's style sheet (or, for a standalone file, the SVG's own) sets for light and dark."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from markupsafe import Markup, escape

from ..words.numbers import fmt_flops, fmt_num

W, H = 720, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 200, 20, 50
COLOURS = 8  # classes c0…c7
_HEX = re.compile(r"#[0-9A-Fa-f]{6}")
STYLE = """
.fig-bg{fill:#fff}.fig-axis{stroke:#555;stroke-width:1;fill:none}.fig-grid{stroke:#ddd;stroke-width:1}
.fig-text{fill:#222;font:12px sans-serif}.fig-mark{stroke:#888;stroke-dasharray:4 3;stroke-width:1}
.c0{stroke:#1f77b4;fill:#1f77b4}.c1{stroke:#d62728;fill:#d62728}.c2{stroke:#2ca02c;fill:#2ca02c}
.c3{stroke:#9467bd;fill:#9467bd}.c4{stroke:#ff7f0e;fill:#ff7f0e}.c5{stroke:#8c564b;fill:#8c564b}
.c6{stroke:#e377c2;fill:#e377c2}.c7{stroke:#17becf;fill:#17becf}.fig-line{fill:none;stroke-width:2}
.fig-fit{fill:none;stroke-width:1.5;stroke-dasharray:6 4}
@media (prefers-color-scheme: dark){.fig-bg{fill:#1e1e1e}.fig-text{fill:#ddd}.fig-axis{stroke:#aaa}
.fig-grid{stroke:#3a3a3a}.c0{stroke:#6aaef0;fill:#6aaef0}.c1{stroke:#ff7b7b;fill:#ff7b7b}}
"""


@dataclass(frozen=True)
class Series:
    """One lane's figures: points (markers), a line through them, or a fitted line (dashed)."""

    name: str
    xy: Sequence[tuple[float, float]]
    style: str = "points"  # points | line | fit
    colour: int | str = 0  # a class c0…c7, or a lane's own colour ("#0072B2", core/colours.py) as the window draws it


@dataclass(frozen=True)
class Plot:
    title: str
    x_label: str
    y_label: str
    series: Sequence[Series]
    log_x: bool = True
    log_y: bool = True
    marks: Sequence[tuple[float, str]] = field(default_factory=tuple)  # vertical lines at x, with a label
    x_flops: bool = False  # x ticks as FLOP counts (26.2 MFLOP)


@dataclass(frozen=True)
class Bar:
    label: str
    parts: Sequence[tuple[str, float]]  # (part, value), stacked left to right


def _t(x: float) -> str:
    return f"{x:.1f}"


def _svg(body: list[str], title: str, height: int, standalone: bool) -> Markup:
    style = f"<style>{STYLE}</style>" if standalone else ""
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" '
            f'role="img" aria-label="{escape(title)}">{style}<title>{escape(title)}</title>'
            f'<rect class="fig-bg" x="0" y="0" width="{W}" height="{height}"/>')
    return Markup(head + "".join(body) + "</svg>")


class _Axis:
    def __init__(self, values: Sequence[float], log: bool, lo_px: float, hi_px: float) -> None:
        vals = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
        lo, hi = (min(vals), max(vals)) if vals else (1.0, 10.0)
        self.log = log
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5, hi + 0.5
        pad = (hi - lo) * 0.05
        self.lo, self.hi, self.lo_px, self.hi_px = lo - pad, hi + pad, lo_px, hi_px

    def __call__(self, v: float) -> float:
        u = math.log10(v) if self.log else v
        return self.lo_px + (u - self.lo) / (self.hi - self.lo) * (self.hi_px - self.lo_px)

    def ticks(self) -> list[float]:
        if self.log:
            return [10.0 ** k for k in range(math.ceil(self.lo), math.floor(self.hi) + 1)]
        step = 10 ** math.floor(math.log10((self.hi - self.lo) / 4 or 1))
        while (self.hi - self.lo) / step > 8:
            step *= 2
        return [k * step for k in range(math.ceil(self.lo / step), math.floor(self.hi / step) + 1)]

    def inside(self, v: float) -> bool:
        return math.isfinite(v) and (v > 0 or not self.log)


def plot_svg(plot: Plot, standalone: bool = False) -> Markup:
    """Points, lines and marks on two axes, with a legend on the right."""
    xs = [x for s in plot.series for x, _ in s.xy] + [x for x, _ in plot.marks]
    ys = [y for s in plot.series for _, y in s.xy]
    ax = _Axis(xs, plot.log_x, LEFT, W - RIGHT)
    ay = _Axis(ys, plot.log_y, H - BOTTOM, TOP)
    body: list[str] = []
    for t in ax.ticks():
        x = ax(t)
        body.append(f'<line class="fig-grid" x1="{_t(x)}" y1="{TOP}" x2="{_t(x)}" y2="{H - BOTTOM}"/>'
                    f'<text class="fig-text" x="{_t(x)}" y="{H - BOTTOM + 16}" text-anchor="middle">'
                    f'{escape(fmt_flops(t) if plot.x_flops else fmt_num(t))}</text>')
    for t in ay.ticks():
        y = ay(t)
        body.append(f'<line class="fig-grid" x1="{LEFT}" y1="{_t(y)}" x2="{W - RIGHT}" y2="{_t(y)}"/>'
                    f'<text class="fig-text" x="{LEFT - 6}" y="{_t(y + 4)}" text-anchor="end">'
                    f'{escape(fmt_num(t))}</text>')
    body.append(f'<rect class="fig-axis" x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}"/>')
    body.append(f'<text class="fig-text" x="{(LEFT + W - RIGHT) / 2}" y="{H - 12}" text-anchor="middle">'
                f'{escape(plot.x_label)}</text>')
    body.append(f'<text class="fig-text" transform="translate(16 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
                f'text-anchor="middle">{escape(plot.y_label)}</text>')
    for x, label in plot.marks:
        if ax.inside(x):
            px = _t(ax(x))
            body.append(f'<line class="fig-mark" x1="{px}" y1="{TOP}" x2="{px}" y2="{H - BOTTOM}"/>'
                        f'<text class="fig-text" x="{px}" y="{TOP + 12}" dx="4">{escape(label)}</text>')
    for i, s in enumerate(plot.series):
        c = f"c{s.colour % COLOURS}" if isinstance(s.colour, int) else "lane"
        # A lane's colour (checked to be one, so nothing else reaches the markup): the window's, in both schemes.
        own = isinstance(s.colour, str) and _HEX.fullmatch(s.colour) is not None
        paint = f' style="stroke:{s.colour};fill:{s.colour}"' if own else ""  # a point's marker
        stroke = f' style="stroke:{s.colour}"' if own else ""  # a line's: its class leaves it unfilled
        pts = [(ax(x), ay(y)) for x, y in s.xy if ax.inside(x) and ay.inside(y)]
        if s.style == "points":
            body += [f'<circle class="{c}"{paint} cx="{_t(x)}" cy="{_t(y)}" r="3.5"/>' for x, y in pts]
        elif pts:
            kind = "fig-fit" if s.style == "fit" else "fig-line"
            body.append(f'<polyline class="{c} {kind}"{stroke} points="{" ".join(f"{_t(x)},{_t(y)}" for x, y in pts)}"/>')
        ly = TOP + 14 + 18 * i
        sample = (f'<circle class="{c}"{paint} cx="{W - RIGHT + 18}" cy="{ly - 4}" r="3.5"/>' if s.style == "points" else
                  f'<line class="{c} {"fig-fit" if s.style == "fit" else "fig-line"}"{stroke} x1="{W - RIGHT + 10}" '
                  f'y1="{ly - 4}" x2="{W - RIGHT + 26}" y2="{ly - 4}"/>')
        body.append(sample + f'<text class="fig-text" x="{W - RIGHT + 32}" y="{ly}">{escape(_short(s.name))}</text>')
    return _svg(body, plot.title, H, standalone)


def _short(name: str, n: int = 26) -> str:
    return name if len(name) <= n else name[:n - 1] + "…"


def bars_svg(title: str, bars: Sequence[Bar], unit: str, standalone: bool = False) -> Markup:
    """Stacked horizontal bars on one linear scale, a legend of the parts below."""
    names = list(dict.fromkeys(part for b in bars for part, _ in b.parts))
    total = max((sum(v for _, v in b.parts) for b in bars), default=1.0) or 1.0
    left, right, row = 190, W - 30, 30
    height = TOP + row * len(bars) + 40 + 18 * len(names)
    body: list[str] = []
    for i, b in enumerate(bars):
        y, x = TOP + i * row, float(left)
        body.append(f'<text class="fig-text" x="{left - 8}" y="{y + 16}" text-anchor="end">{escape(_short(b.label, 28))}'
                    "</text>")
        for part, value in b.parts:
            w = max(value, 0.0) / total * (right - left)
            body.append(f'<rect class="c{names.index(part) % COLOURS}" x="{_t(x)}" y="{y + 4}" width="{_t(w)}" '
                        f'height="{row - 10}"><title>{escape(part)}: {escape(fmt_num(value))} {escape(unit)}</title>'
                        "</rect>")
            x += w
        body.append(f'<text class="fig-text" x="{_t(min(x + 4, right - 40))}" y="{y + 16}">'
                    f'{escape(fmt_num(sum(v for _, v in b.parts)))} {escape(unit)}</text>')
    y0 = TOP + row * len(bars) + 20
    for j, name in enumerate(names):
        y = y0 + 18 * j
        body.append(f'<rect class="c{j % COLOURS}" x="{left}" y="{y - 10}" width="12" height="12"/>'
                    f'<text class="fig-text" x="{left + 18}" y="{y}">{escape(name)}</text>')
    return _svg(body, title, height, standalone)
