"""What the user reads: the one number formatter, durations, times, and sentences about lanes and crossings.

The CLI, the window and the exports all take their words from here, so a figure reads the same
everywhere. Nothing here measures; it only says what core/analysis.py found.
"""
from __future__ import annotations

import datetime as _dt
import math
from typing import Mapping, Sequence

from crossover_lab.core.analysis import (CostFit, Crossover, SweepPoint, analyze_points, by_lane, has_steady,
                                         lane_pair, predicted_crossover)
from crossover_lab.core.costs import Prices, cost_points, price_for
from crossover_lab.core.records import RunSummary
from crossover_lab.core.refine_answer import Refinement

MISSING = "–"


def fmt_num(x: float | None, sig: int = 3) -> str:
    """`sig` significant figures, no exponent, thousands separated; "–" when missing."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return MISSING
    if x == 0:
        return "0"
    if abs(x) >= 10 ** sig:
        return f"{round(x, sig - 1 - math.floor(math.log10(abs(x)))):,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.{sig - 1}e}"
    digits = sig - 1 - math.floor(math.log10(abs(x)))
    text = f"{round(x, digits):.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_flops(x: float) -> str:
    """A FLOP count with its unit: 26.2 MFLOP, 1.07 TFLOP."""
    for unit, name in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if abs(x) >= unit:
            return f"{fmt_num(x / unit)} {name}"
    return f"{fmt_num(x)} FLOP"


def fmt_range(lo: float, hi: float, sig: int = 2) -> str:
    """A spread as its range, "290–1200": log-scale spreads are rarely symmetric, so never "±"."""
    return f"{fmt_num(lo, sig)}–{fmt_num(hi, sig)}"


def fmt_duration(seconds: float | None) -> str:
    """A time left or taken: 42 s, 3 min 5 s, 1 h 2 min."""
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def local_time(iso: str) -> str:
    """An ISO time as the user's clock shows it: 14:05:09 today, else 2026-11-30 14:05."""
    try:
        when = _dt.datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return iso
    today = _dt.datetime.now().astimezone().date()
    return when.strftime("%H:%M:%S" if when.date() == today else "%Y-%m-%d %H:%M")


# ---------------------------------------------------------------- two lanes on one model

def verdict(a: RunSummary, b: RunSummary) -> str:
    """Which lane trains this model faster, by median step time."""
    if not (has_steady(a) and has_steady(b)):
        return f"not enough steady batches yet to compare {a.lane} and {b.lane}"
    fast, slow = (a, b) if a.median_ms <= b.median_ms else (b, a)
    ratio = slow.median_ms / fast.median_ms
    if ratio <= 1.03:
        return f"{a.lane} and {b.lane} are about equal ({ratio:.2f}x)"
    shown = f"{ratio:.2f}" if ratio < 1.1 else f"{ratio:.1f}"  # "1.0x faster" would read as a tie
    return f"{fast.lane} is {shown}x faster than {slow.lane} on this model"


def verdict_lines(summaries: Sequence[RunSummary]) -> list[str]:
    """"A is N× faster than B on this model", the fastest lane against each other lane."""
    usable = [s for s in summaries if has_steady(s)]
    if len(usable) < 2:
        return []
    fastest = min(usable, key=lambda s: s.median_ms)
    return [verdict(fastest, other) for other in usable if other is not fastest]


def explain(a: RunSummary, b: RunSummary, fits: Mapping[str, CostFit] | None = None) -> str:
    """2-4 sentences on fixed per-step cost versus throughput, with the runs' own figures."""
    if not (has_steady(a) and has_steady(b)):
        return f"Not enough steady batches yet to explain the timings of {a.lane} and {b.lane}."
    flops = a.flops_per_batch or b.flops_per_batch
    out = [f"Per training step, {a.lane} spends {fmt_num(a.median_ms)} ms and {b.lane} "
           f"{fmt_num(b.median_ms)} ms (medians of steady batches)."]
    if flops:
        out.append(f"With {fmt_flops(flops)} per step, that is {fmt_num(a.gflops)} GFLOP/s on {a.lane} "
                   f"and {fmt_num(b.gflops)} GFLOP/s on {b.lane}.")
    out.append("Every step also pays a fixed cost (dispatch, kernel launches, synchronisation) "
               "that does not shrink with the model: for a small model it dominates, so the lane "
               "with the lower fixed cost wins; as FLOPs grow, throughput dominates and the lane "
               "with more GFLOP/s pulls ahead.")
    fa, fb = (fits or {}).get(a.lane), (fits or {}).get(b.lane)
    if fa and fb:
        fit_text = (f"Fitted over the model sizes measured, {a.lane} costs {fmt_num(fa.overhead_ms)} ms fixed "
                    f"plus {fmt_num(fa.gflops)} GFLOP/s, and {b.lane} {fmt_num(fb.overhead_ms)} ms plus "
                    f"{fmt_num(fb.gflops)} GFLOP/s")
        cross = predicted_crossover(fa, fb)
        if cross is None:
            low = a.lane if fa.predict_ms(flops or 1.0) <= fb.predict_ms(flops or 1.0) else b.lane
            out.append(f"{fit_text}; the lines do not cross, so {low} is predicted faster at every size.")
        else:
            side = ("below it, where fixed cost dominates" if flops < cross
                    else "above it, where throughput dominates")
            out.append(f"{fit_text}; those fitted lines cross near {fmt_flops(cross)} per step (the measured "
                       f"crossing can differ), and this model ({fmt_flops(flops)}) sits {side}.")
    return " ".join(out)


# ---------------------------------------------------------------- crossings

def other_lane(c: Crossover) -> str:
    return c.lanes[0] if c.faster_above == c.lanes[1] else c.lanes[1]


def crossing_label(c: Crossover, unit: str = "width") -> str:
    """A short label for a picture: "cpu beats cpu1 above ≈570" (width) or "… ≈26 MFLOP" (flops)."""
    where = fmt_flops(c.flops_per_batch) if unit == "flops" else fmt_num(c.width, 2)
    return f"{c.faster_above} beats {other_lane(c)} above ≈{where}"


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


def fmt_dollars(x: float | None) -> str:
    """Money as people write it, never in exponents: $1.20, $1,234.50, $0.42, $0.0000955."""
    if x is None or not math.isfinite(x):
        return MISSING
    if abs(x) >= 1:
        return f"${x:,.2f}"
    if 0 < abs(x) < 1e-4:
        return f"${x:.{2 - math.floor(math.log10(abs(x)))}f}"
    return f"${fmt_num(x)}"


def run_outcome(statuses: Mapping[str, str], failures: Mapping[str, str], map_points: int) -> tuple[str, bool]:
    """How a run ended, for the status bar: (sentence, is_error)."""
    points = f"{map_points} point{'s' if map_points != 1 else ''} added to the crossover map"
    failed = [f"{lane}: {failures.get(lane, '')}" for lane, status in statuses.items() if status == "failed"]
    if failed:
        return "Finished with failures — " + "; ".join(failed), True
    if "cancelled" in statuses.values():
        return f"Stopped; what was measured is kept ({points}).", False
    return f"Run finished; {points}.", False


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
    """A sweep picture's title for a slide: the model, the batch size and the machines it ran on."""
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
    return f"{model} · batch {', '.join(map(str, batches))} · {shown}"
