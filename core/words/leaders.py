"""Many lanes at once in words: per width, the lane that leads, its runner-up and what the one rule says of that lead
(core/analysis/leaders.py), as a table with one sentence over it saying what it rests on and where every pair is."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from ..analysis.leaders import Leaders, WidthLead
from ..analysis.significance import ALPHA
from ..files.rule_calibration import calibrated_false_leads
from .numbers import MISSING, fmt_count, fmt_dollars, fmt_joules, fmt_num, plural


@dataclass(frozen=True)
class Figure:
    """What a table ranks the lanes by, as its columns and its sentence name it."""

    best: str  # the column of the lane with the lowest figure: "fastest"
    value: str  # the figure's column: "median ms"
    what: str  # the leading lane in a sentence: "the fastest lane"
    fmt: Callable[[float], str]


TIME = Figure("fastest", "median ms", "the fastest lane", fmt_num)
FLOOR = Figure("fastest floor", "floor ms", "the fastest lane with an on-device loop (sweep --floor)", fmt_num)
COST = Figure("cheapest", "$ per M samples", "the cheapest priced lane per million samples", fmt_dollars)
ENERGY = Figure("least energy", "J per M samples", "the lane using the least energy per million samples", fmt_joules)


def header(figure: Figure, unit: str) -> list[str]:
    """The table's columns: along batch size its x is a batch size, else a width in the model's unit."""
    x = "batch size" if unit == "samples per batch" else f"width ({unit})"
    return [x, figure.best, figure.value, "runner-up", figure.value, "ratio", "lead, by the rule"]


def row(r: WidthLead, figure: Figure) -> list[str]:
    """One width's cells; "–" where one lane alone measured it."""
    second = r.second
    return [f"{r.width:,}", r.first.lane, figure.fmt(r.first.value), second.lane if second else MISSING,
            figure.fmt(second.value) if second else MISSING, ratio_words(r.ratio), rule_cell(r)]


def ratio_words(ratio: float) -> str:
    """The runner-up's figure over the leader's, as times; under 10% with its third digit: "1.03x", "1.00x"."""
    if not math.isfinite(ratio):
        return MISSING
    return f"{ratio:.2f}x" if ratio < 1.1 else f"{fmt_num(ratio, 2)}x"


def rule_cell(r: WidthLead) -> str:
    """What the one rule says of this width's lead: "clear" where it finds it; a tie as the verdict decided it
    (core/analysis/verdict.py Stretch.equal, an equivalence test at the rule's level): "equal within ±4%" where the
    data bound the difference that closely, else "no answer: up to 30% could hide"."""
    if r.second is None:
        return "no runner-up"
    s = r.stretch
    if s is None:
        return "not judged"
    if s.leader == r.first.lane:
        return "clear"
    if s.leader is not None:  # the whole sweep's lead, carried over a width that leans the other way within its error
        return f"{s.leader} leads over the sweep"
    if s.equal:
        return f"equal within ±{fmt_num(100 * s.within, 2)}%"
    return (f"no answer: up to {fmt_num(100 * s.within, 2)}% could hide" if math.isfinite(s.within)
            else "no answer")


def leaders_line(found: Leaders, figure: Figure, unit: str) -> str:
    """The sentence over the table: how many lanes and pairs, what was judged and at what error rate, and how to see
    any pair in full (the first judged pair as the example): "80 lanes make 3,160 pairs: per width, the fastest lane
    and its runner-up, …; every pair in full: analyze with --lanes s03/cpu,s07/cpu, or the two lanes' files alone"."""
    x = "batch size" if unit == "samples per batch" else "width"
    xs = "batch sizes" if x == "batch size" else "widths"
    if found.lanes < 2:
        return f"per {x}, {figure.what}: {fmt_count(found.lanes, 'lane')}, nothing to compare"
    k = len(found.judged)
    measured = calibrated_false_leads()
    rate = f", {fmt_num(100 * measured[0], 2)}% measured ({measured[1]})" if measured else ", not yet measured"
    alpha = found.judged[0].alpha if found.judged else ALPHA
    example = ",".join(found.judged[0].lanes) if found.judged else "LANE,LANE"
    each = "each over" if k > 1 else "over"
    return (f"{found.lanes} lanes make {found.pairs:,} {plural(found.pairs, 'pair')}: per {x}, {figure.what} and its "
            f"runner-up, and whether the one rule finds that lead ({fmt_count(k, 'pair')} judged, {each} every "
            f"{x} both measured, at most a {fmt_num(100 * alpha, 2)}% chance of any false lead over its {xs}{rate}); "
            f"every pair in full: analyze with --lanes {example}, or the two lanes' files alone")


def asked_lanes_words(unknown: Sequence[str], asked: Sequence[str], known: Sequence[str]) -> str:
    """--lanes naming lanes the files do not hold, or fewer than two: which, and a few lanes the files do hold (never
    all of a hundred)."""
    shown = ", ".join(known[:6]) + (f", … ({len(known)} in all)" if len(known) > 6 else "")
    if unknown:
        said = f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a lane of these files"
    else:
        said = f"{asked[0]} is one lane, and a comparison needs two" if asked else "it names no lane"
    return f"--lanes: {said} (they hold {shown}); name two or more, comma-separated, as the table names them"


def lanes_of_rates_words(path: str) -> str:
    return (f"--lanes: {path} is a rate sweep's file, whose lanes are said one rate at a time, never as pairs; "
            "analyze it without --lanes")
