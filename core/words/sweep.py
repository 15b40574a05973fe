"""What the user reads about sweeps: where lanes cross (in time and in money), a refinement's answer, a picture's title.

Numbers are formatted by core/words/, so a figure reads the same here as everywhere else.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.crossings import Crossover, SweepPoint, analyze_points, by_lane, lane_pair
from ..analysis.costs import Prices, cost_points, price_for
from ..analysis.leads import Refinement
from .numbers import fmt_duration, fmt_flops, fmt_num, fmt_range


# ---------------------------------------------------------------- crossings

def other_lane(c: Crossover) -> str:
    return c.lanes[0] if c.faster_above == c.lanes[1] else c.lanes[1]


def crossing_label(c: Crossover, unit: str = "width", spread: bool = False) -> str:
    """A short label for a picture: "cpu beats cpu1 above ≈570" (width) or "… ≈26 MFLOP" (flops); with
    `spread`, the widths within the timing spread as a range, "≈570 (290–1,200)": rarely symmetric."""
    where = fmt_flops(c.flops_per_batch) if unit == "flops" else fmt_num(c.width, 2)
    within = f" ({fmt_range(c.width_lo, c.width_hi)})" if spread and unit == "width" else ""
    return f"{c.faster_above} beats {other_lane(c)} above ≈{where}{within}"


def describe_pair(points: Sequence[SweepPoint], lane_a: str, lane_b: str) -> str:
    """One sentence for the user on where, if anywhere, one lane overtakes the other."""
    a, b = sorted((lane_a, lane_b))
    widths, d, found = lane_pair(by_lane([p for p in points if p.lane in (a, b)]), a, b)
    if len(widths) < 2:
        return f"too few common points to compare {lane_a} and {lane_b}: need 2 widths measured on both"
    span = f"widths {widths[0]} to {widths[-1]}"
    if not found:
        if all(v == 0 for v in d):
            return f"no crossover in this range: {a} and {b} are equal throughout ({span})"
        faster = b if max(d) > 0 else a
        return f"no crossover in this range: {faster} faster throughout ({span})"
    parts = [f"{c.faster_above} is faster above about {fmt_num(c.width, 2)} units "
             f"({fmt_range(c.width_lo, c.width_hi)} within the timing spread), {other_lane(c)} below"
             for c in found]
    if len(parts) == 1:
        return parts[0]
    return f"{len(parts)} crossovers between {a} and {b} ({span}): " + "; then ".join(parts)


def sweep_lines(groups: Mapping[str, Sequence[SweepPoint]], crossings: bool = True) -> list[str]:
    """Per group of a sweep: where each pair of lanes crosses (unless `crossings` is False: a refined
    sweep says that itself), and each lane's fitted cost model."""
    lines = []
    for label, points in groups.items():
        lanes = sorted({p.lane for p in points}) if crossings else []
        pairs = [describe_pair(points, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
        fits = analyze_points(points)["lanes"]
        fit_text = "; ".join(f"{lane}: {fmt_num(f['overhead_ms'])} ms fixed + {fmt_num(f['gflops'])} GFLOP/s"
                             for lane, f in fits.items() if f["overhead_ms"] is not None)
        prefix = f"{label}: " if len(groups) > 1 else ""
        if not crossings:
            lines += [f"{prefix}Fits: {fit_text}."] if fit_text else []
            continue
        lines.append(prefix + ("; ".join(pairs) or "one lane: nothing to cross")
                     + (f". Fits: {fit_text}." if fit_text else ""))
    return lines


def describe_cost_pair(points: Sequence[SweepPoint], prices: Prices, lane_a: str, lane_b: str) -> str:
    """Where one lane becomes faster and where it becomes cheaper per sample:
    "gpu0 is faster than cpu above about 110 units and cheaper above about 900"."""
    a, b = sorted((lane_a, lane_b))
    pair = [p for p in points if p.lane in (a, b)]
    fast = lane_pair(by_lane(pair), a, b)[2]
    widths, d, cheap = lane_pair(by_lane(cost_points(pair, prices)), a, b)
    if len(widths) < 2:
        return f"too few priced points to compare what {a} and {b} cost: need 2 widths measured on both"
    if len(fast) == 1 and len(cheap) == 1 and fast[0].faster_above == cheap[0].faster_above:
        f, c = fast[0], cheap[0]
        return (f"{f.faster_above} is faster than {other_lane(f)} above about {fmt_num(f.width, 2)} units "
                f"and cheaper above about {fmt_num(c.width, 2)}")
    if not cheap:
        cheaper = b if max(d) > 0 else a
        return (f"per sample, {cheaper} is cheaper than {a if cheaper == b else b} throughout "
                f"(widths {widths[0]} to {widths[-1]})")
    return "per sample, " + "; then ".join(
        f"{c.faster_above} is cheaper than {other_lane(c)} above about {fmt_num(c.width, 2)} units "
        f"({fmt_range(c.width_lo, c.width_hi)} within the timing spread)" for c in cheap)


def cost_lines(groups: Mapping[str, Sequence[SweepPoint]], prices: Prices) -> list[str]:
    """Per group, for each pair of priced lanes: where the faster and the cheaper lane change."""
    lines = []
    for label, points in groups.items():
        lanes = sorted({p.lane for p in points if price_for(p.lane, prices) is not None})
        prefix = f"{label}: " if len(groups) > 1 else ""
        lines += [prefix + describe_cost_pair(points, prices, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
    return lines


# ---------------------------------------------------------------- refined sweeps

def refine_stop(r: Refinement) -> str:
    """Why a refinement stopped, as the end of a sentence."""
    tol = f"±{fmt_num(100 * r.target.tolerance)}%"
    return {"tight": f"every crossover is known within {tol}",
            "noise": "the lanes are equal within noise over a range, so no single width there is the crossover",
            "no crossover": f"no change of the faster lane was measured between {min(r.widths, default=0)} and "
                            f"{max(r.widths, default=0)} units, so there is nothing to refine",
            "budget": f"the time budget of {fmt_duration(r.target.budget_s)} ran out before every crossover was "
                      f"known within {tol}",
            "cancelled": "it was stopped",
            "failed": "a width could not be measured on every lane"}.get(r.stopped, r.stopped)


def refine_lines(r: Refinement) -> list[str]:
    """The refined answer: each crossover as a range (or a range within noise), the ties, and why it stopped."""
    lines = []
    for c in r.crossings:
        slower = c.lanes[0] if c.faster_above == c.lanes[1] else c.lanes[1]
        where = fmt_range(c.width_lo, c.width_hi, 4)  # measured widths: whole units, shown whole
        if c.width is None:
            lines.append(f"{c.lanes[0]} and {c.lanes[1]} are equal within noise between {fmt_num(c.width_lo, 4)} "
                         f"and {fmt_num(c.width_hi, 4)} units: {slower} is faster below, {c.faster_above} above")
        else:
            open_note = "" if c.stopped == "tight" else f" (not yet within ±{fmt_num(100 * r.target.tolerance)}%)"
            lines.append(f"{c.faster_above} is faster above about {fmt_num(c.width, 2)} units ({where}){open_note}, "
                         f"{slower} below")
    for t in r.ties:
        where = f"at {t.width_lo}" if t.width_lo == t.width_hi else f"between {t.width_lo} and {t.width_hi}"
        lines.append(f"{t.lanes[0]} and {t.lanes[1]} are equal within noise {where} units")
    lines.append(f"Refinement stopped after {fmt_duration(r.spent_s)} and {len(r.widths)} measurements "
                 f"of {len(set(r.widths))} widths: {refine_stop(r)}.")
    return lines


def picture_title(rows: Sequence, host: Mapping[str, object]) -> str:
    """A sweep picture's title for a slide: the model and the batch size, then on a line of its own the
    machines it ran on (the devices of its lanes; this machine's CPU when the rows name none)."""
    if not rows:
        return ""
    layers = sorted({r.layers for r in rows if r.layers})
    widths = sorted({r.width for r in rows})
    batches = sorted({r.batch_size for r in rows if r.batch_size})
    devices = list(dict.fromkeys(r.device for r in rows if r.device)) or [str(host.get("cpu", ""))]
    depth = "/".join(map(str, layers)) if layers else "?"
    model = (f"MLP, {depth} hidden layer{'s' if layers != [1] else ''} of {widths[0]:,}–{widths[-1]:,} units"
             if len(widths) > 1 else f"MLP, {depth} hidden layer{'s' if layers != [1] else ''} of {widths[0]:,}")
    shown = "; ".join(devices[:3]) + ("; …" if len(devices) > 3 else "")
    batch = f" · batch {', '.join(map(str, batches))}" if batches else ""
    return f"{model}{batch}\n{shown}"
