"""What the user reads about sweeps: where lanes cross (in time and in money), a refinement's answer, a picture's title.

Numbers are formatted by core/words/, so a figure reads the same here as everywhere else.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..machine import HostInfo
from ..analysis.crossings import SweepAnalysis, analyze_points
from ..analysis.fits import CostFit, crossover_interval
from ..analysis.points import Crossover, SweepPoint
from ..analysis.verdict import Change, State, curve_verdict, pair_verdict
from ..analysis.energy import energy_curves, unlike_scopes
from ..analysis.costs import Prices, cost_curves, price_for
from ..analysis.refinement import Refinement
from ..families import ModelKind
from ..json_data import JsonValue
from ..files.findings import Answer, Findings
from ..files.sweeps.rows import SweepRow, group_rows
from ..files.sweeps.files import run_rows
from ..records import BUSY_SHARE, Status
from ..results import RunResult
from .numbers import fmt_duration, fmt_flops, fmt_num
from .verdict import change_words, pair_words, unit_of, width_unit


# ---------------------------------------------------------------- crossings

def other_lane(c: Crossover) -> str:
    return c.lanes[0] if c.faster_above == c.lanes[1] else c.lanes[1]


def crossing_label(c: Crossover, unit: str = "width", spread: bool = False) -> str:
    """A short label for a picture: "cpu beats cpu1 above ≈570" (width) or "… ≈26 MFLOP" (flops); with
    `spread`, the measured widths either side where each lane leads, "≈570 (512–1,024)": rarely symmetric."""
    if math.isnan(c.width):  # a change hidden by a tie: where each lane leads, nothing between made up
        return f"{other_lane(c)} leads to {int(c.width_lo):,}, {c.faster_above} from {int(c.width_hi):,}"
    where = fmt_flops(c.flops_per_batch) if unit == "flops" else fmt_num(c.width, 2)
    within = f" ({int(c.width_lo):,}–{int(c.width_hi):,})" if spread and unit == "width" else ""  # measured widths
    return f"{c.faster_above} beats {other_lane(c)} above ≈{where}{within}"


def describe_pair(points: Sequence[SweepPoint], lane_a: str, lane_b: str, findings: Findings | None = None) -> str:
    """One sentence for the user on where, if anywhere, one lane's lead gives way to the other's: the one
    crossing rule (core/analysis/verdict.py), in width order; the `findings`' answer where they hold these points
    (several runs' pooled, their pair's noise known)."""
    v = findings.verdict_of(points, lane_a, lane_b) if findings is not None else pair_verdict(points, lane_a, lane_b)
    return pair_words(v, unit_of(points))


def run_crossing_lines(result: RunResult) -> list[str]:
    """Where the lanes of one run cross as its model changed (a ramp, or widths dragged): each pair's sentence
    by the one rule, over the completed segments of one kind, once the pair shares at least two widths."""
    groups = group_rows(r for r in run_rows(result) if r.status == Status.COMPLETED)
    if len(groups) != 1:
        return []
    points = next(iter(groups.values()))
    lanes = sorted({p.lane for p in points})
    return [describe_pair(points, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]
            if len({p.width for p in points if p.lane == a} & {p.width for p in points if p.lane == b}) >= 2]


def busy_lines(groups: Mapping[str, Sequence[SweepPoint]]) -> list[str]:
    """Where other work shared a lane's cores while its points were measured (more than BUSY_SHARE of them): "Other
    work used 46-51% of cpu's cores while 5 of its 6 points were measured (load up to 3.2): its figures, and any
    lead or crossing they show, may not hold". Said by every view of a sweep, as a run's verdict says it."""
    by_lane: dict[str, list[SweepPoint]] = {}
    for points in groups.values():
        for p in points:
            by_lane.setdefault(p.lane, []).append(p)
    lines = []
    for lane, points in sorted(by_lane.items()):
        busy = [p for p in points if math.isfinite(p.others_cpu) and p.others_cpu > BUSY_SHARE]
        if not busy:
            continue
        shares = sorted(100 * p.others_cpu for p in busy)
        share = f"{shares[0]:.0f}%" if round(shares[0]) == round(shares[-1]) else f"{shares[0]:.0f}-{shares[-1]:.0f}%"
        loads = [p.load_avg for p in busy if math.isfinite(p.load_avg)]
        load = f" (load up to {fmt_num(max(loads), 2)})" if loads else ""
        which = "all of its points" if len(busy) == len(points) else f"{len(busy)} of its {len(points)} points"
        lines.append(f"Other work used {share} of {lane}'s cores while {which} were measured{load}: its figures, "
                     "and any lead or crossing they show, may not hold")
    return lines


def sweep_lines(groups: Mapping[str, Sequence[SweepPoint]], findings: Findings | None = None) -> list[str]:
    """Per group of a sweep: where each pair of lanes crosses (the one rule, or the `findings`' answer; a refined
    sweep adds refine_lines after it), and each lane's fitted cost model."""
    lines = []
    for label, points in groups.items():
        lanes = sorted({p.lane for p in points})
        pairs = [describe_pair(points, a, b, findings) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
        fit_text = fits_words({lane: f.fit for lane, f in analyze_points(points).lanes.items()})
        prefix = f"{label}: " if len(groups) > 1 else ""
        lines.append(prefix + ("; ".join(pairs) or "one lane: nothing to cross")
                     + (f". Fits: {fit_text}." if fit_text else ""))
    return lines


def fits_words(fits: Mapping[str, CostFit | None]) -> str:
    """Each lane's fitted cost model: "cpu: 0.94 ms intercept + 340 GFLOP/s; cpu1: …" (lanes without a fit left
    out). The intercept is the fitted line's value at no FLOPs, not a measured step: it may lie above the smallest
    one measured."""
    return "; ".join(f"{lane}: {fmt_num(f.overhead_ms)} ms intercept + {fmt_num(f.gflops)} GFLOP/s"
                     for lane, f in fits.items() if f is not None and math.isfinite(f.overhead_ms))


def fit_crossing_lines(points: Sequence[SweepPoint], analysis: SweepAnalysis) -> list[str]:
    """Where each pair's fitted cost lines meet, said as the fits' extrapolation with its 95% interval (a bootstrap
    of each fit's residuals, core/analysis/fits.py crossover_interval), never as a second answer beside the rule's:
    "the fitted lines of jax:cpu and jax:gpu0 meet at 148 MFLOP per batch (95%: 60–310 MFLOP, 200 resamples of the
    fits' residuals): the fits' extrapolation, not a measured crossing"; where the lines meet in fewer than half the
    resamples, that is said instead of a figure."""
    lines = []
    for p in analysis.predicted:
        a, b = p.lanes
        pa = sorted((x for x in points if x.lane == a), key=lambda x: x.flops_per_batch)
        pb = sorted((x for x in points if x.lane == b), key=lambda x: x.flops_per_batch)
        interval = crossover_interval([x.flops_per_batch for x in pa], [x.median_ms for x in pa],
                                      [x.flops_per_batch for x in pb], [x.median_ms for x in pb])
        if interval is None:
            lines.append(f"the fitted lines of {a} and {b} meet at {fmt_flops(p.flops_per_batch)} per batch, but in "
                         "most resamples of the fits' residuals they do not: the fits' extrapolation, no answer")
            continue
        lo, hi, n = interval
        lines.append(f"the fitted lines of {a} and {b} meet at {fmt_flops(p.flops_per_batch)} per batch (95%: "
                     f"{fmt_flops(lo)}–{fmt_flops(hi)}, {n} resamples of the fits' residuals): the fits' "
                     "extrapolation, not a measured crossing")
    return lines


def answer_words(answer: Answer) -> str:
    """The findings' answer on a pair (core/files/findings.py) as the one rule's sentence, in its group's unit."""
    return pair_words(answer.verdict, unit_of(answer.points))


def answer_lines(answers: Sequence[Answer], fits: bool = True) -> list[str]:
    """Per group of the findings' answers, as sweep_lines says a sweep's: each pair's sentence, then (with `fits`)
    each lane's fitted cost model over the group's points; the group named where there are several. Every view
    of what was measured (the Sweep tab, the map, the headline of a ramp, `analyze`, the report) says these."""
    by_group: dict[str, list[Answer]] = {}
    for a in answers:
        by_group.setdefault(a.group, []).append(a)
    lines = []
    for label, group in by_group.items():
        fit_text = fits_words({lane: fit for a in group for lane, fit in sorted(a.fits.items())}) if fits else ""
        prefix = f"{label}: " if len(by_group) > 1 else ""
        lines.append(prefix + "; ".join(answer_words(a) for a in group) + (f". Fits: {fit_text}." if fit_text else ""))
    return lines


def describe_cost_pair(points: Sequence[SweepPoint], prices: Prices, lane_a: str, lane_b: str) -> str:
    """Where one lane becomes faster and where it becomes cheaper per sample, by the one rule:
    "gpu0 is faster than cpu above about 110 units and cheaper above about 900"."""
    pair = [p for p in points if p.lane in (lane_a, lane_b)]
    fast, cheap = pair_verdict(pair, lane_a, lane_b), curve_verdict(cost_curves(pair, prices), lane_a, lane_b)
    a, b = cheap.lanes
    if cheap.state is State.NOT_ENOUGH:
        return f"too few priced points to compare what {a} and {b} cost: need a width measured on both"
    marked_fast = [c for c in fast.changes if c.width is not None]
    marked_cheap = [c for c in cheap.changes if c.width is not None]
    if len(marked_fast) == len(marked_cheap) == 1 and marked_fast[0].faster_above == marked_cheap[0].faster_above:
        f, c = marked_fast[0], marked_cheap[0]
        return (f"{f.faster_above} is faster than {f.faster_below} above about {fmt_num(f.width, 2)} "
                f"{unit_of(points)} and cheaper above about {fmt_num(c.width, 2)}")
    if cheap.state is State.LEADS:
        cheaper = cheap.leader
        where = "throughout" if all(s.leader for s in cheap.stretches) else "wherever they differ"
        return (f"per sample, {cheaper} is cheaper than {a if cheaper == b else b} {where} "
                f"(widths {cheap.widths[0]:,} to {cheap.widths[-1]:,})")
    if cheap.state is State.TOO_CLOSE:
        return f"per sample, {a} and {b} cost the same within noise (widths {cheap.widths[0]:,} to {cheap.widths[-1]:,})"
    return "per sample, " + "; then ".join(
        change_words(c, unit_of(points)).replace(" is faster ", " is cheaper ") for c in cheap.changes)


def cost_lines(groups: Mapping[str, Sequence[SweepPoint]], prices: Prices) -> list[str]:
    """Per group, for each pair of priced lanes: where the faster and the cheaper lane change."""
    lines = []
    for label, points in groups.items():
        lanes = sorted({p.lane for p in points if price_for(p.lane, prices) is not None})
        prefix = f"{label}: " if len(groups) > 1 else ""
        lines += [prefix + describe_cost_pair(points, prices, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
    return lines


def _energy_change(c: Change, unit: str = "units") -> str:
    if c.width is None:
        return (f"{c.faster_below} uses less energy per sample up to {c.width_lo:,} {unit} and {c.faster_above} "
                f"from {c.width_hi:,} {unit}; between, the noise cannot tell them apart")
    return (f"{c.faster_above} uses less energy per sample above about {fmt_num(c.width, 2)} {unit} "
            f"({c.width_lo:,}–{c.width_hi:,})")


def describe_energy_pair(points: Sequence[SweepPoint], lane_a: str, lane_b: str) -> str:
    """Where the lane that uses less energy per sample changes, by the one rule on the energy curves:
    "jax:gpu0 uses less energy per sample above about 300 units (220–410)"."""
    v = curve_verdict(energy_curves([p for p in points if p.lane in (lane_a, lane_b)]), lane_a, lane_b)
    a, b = v.lanes
    if v.state is State.NOT_ENOUGH:
        return f"too few points with energy measured to compare {a} and {b}: need a width measured on both"
    span = f"widths {v.widths[0]:,} to {v.widths[-1]:,}"
    if v.state is State.LEADS:
        less = v.leader
        where = "throughout" if all(s.leader for s in v.stretches) else "wherever they differ"
        return f"per sample, {less} uses less energy than {a if less == b else b} {where} ({span})"
    if v.state is State.TOO_CLOSE:
        return f"per sample, {a} and {b} use the same energy within noise ({span})"
    return "; then ".join(_energy_change(c, unit_of(points)) for c in v.changes)


SCOPE_WORDS = {"package": "its whole CPU package (every core, other work's included)",
               "package+dram": "its whole CPU package and memory (other work's included)",
               "board": "its GPU board alone (not the CPU that feeds it)"}


def scope_caveat(points: Sequence[SweepPoint], a: str, b: str) -> str:
    """Where two lanes' joules cover unlike things, the sentence that says so; "" where they are alike."""
    unlike = unlike_scopes(points, a, b)
    return unlike_words(a, unlike[0], b, unlike[1]) if unlike is not None else ""


def unlike_words(a: str, scope_a: str, b: str, scope_b: str) -> str:
    """Two lanes whose joules cover unlike scopes (core/analysis/energy.py SCOPES), in words; "" when alike."""
    if not scope_a or not scope_b or scope_a == scope_b:
        return ""
    unlike = (scope_a, scope_b)
    words = [" and ".join(SCOPE_WORDS.get(part, part) for part in scope.split("+") if part) for scope in unlike]
    return (f"unlike things: {a} is charged {words[0]}, {b} {words[1]}; the comparison is of what each counter "
            "covers, not of the whole machine")


def energy_lines(groups: Mapping[str, Sequence[SweepPoint]]) -> list[str]:
    """Per group, for each pair of lanes with energy measured: where the one using less energy per sample changes,
    and what each lane's joules cover where the two differ."""
    lines = []
    for label, points in groups.items():
        lanes = sorted({p.lane for p in energy_curves(points)})
        prefix = f"{label}: " if len(groups) > 1 else ""
        for i, a in enumerate(lanes):
            for b in lanes[i + 1:]:
                lines.append(prefix + describe_energy_pair(points, a, b))
                caveat = scope_caveat(points, a, b)
                if caveat:
                    lines.append(prefix + caveat)
    return lines


def run_energy_lines(result: RunResult) -> list[str]:
    """Where the lanes of one run (a ramp, or widths dragged) change which uses less energy per sample: as
    run_crossing_lines, on the completed segments whose energy was measured."""
    groups = group_rows(r for r in run_rows(result) if r.status == Status.COMPLETED)
    if len(groups) != 1:
        return []
    points = next(iter(groups.values()))
    measured = energy_curves(points)
    lanes = sorted({p.lane for p in measured})
    return [describe_energy_pair(points, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]
            if len({p.width for p in measured if p.lane == a} & {p.width for p in measured if p.lane == b}) >= 2]


# ---------------------------------------------------------------- refined sweeps

def refine_stop(r: Refinement) -> str:
    """Why a refinement stopped, as the end of a sentence."""
    tol = f"±{fmt_num(100 * r.target.tolerance)}%"
    lo, hi = min(r.widths, default=0), max(r.widths, default=0)
    whole = next((t for t in r.ties if t.width_lo <= lo and t.width_hi >= hi), None)
    if r.stopped == "no crossover" and whole is not None:  # too close to call everywhere: that is the answer
        return (f"{whole.lanes[0]} and {whole.lanes[1]} are too close to call from {lo:,} to {hi:,} {r.unit} "
                "(equal within noise at every one measured), so there is no crossover to refine")
    return {"tight": f"every crossover is known within {tol}",
            "noise": f"the lanes are equal within noise over a range, so no single "
                     f"{'batch size' if r.unit == 'samples per batch' else 'width'} there is the crossover",
            "no crossover": f"no change of the faster lane was measured between {min(r.widths, default=0)} and "
                            f"{max(r.widths, default=0)} {r.unit}, so there is nothing to refine",
            "budget": f"the time budget of {fmt_duration(r.target.budget_s)} ran out before every crossover was "
                      f"known within {tol}",
            "cancelled": "it was stopped",
            "failed": "a width could not be measured on every lane"}.get(r.stopped, r.stopped)


def refine_lines(r: Refinement) -> list[str]:
    """What a refinement adds to the sweep's sentences (which the one rule makes, as for any sweep): the
    crossings not yet within the tolerance, and why it stopped."""
    tol = f"±{fmt_num(100 * r.target.tolerance)}%"
    lines = [f"{c.faster_above} overtakes {c.lanes[0] if c.faster_above == c.lanes[1] else c.lanes[1]} between "
             f"{int(c.width_lo):,} and {int(c.width_hi):,} {r.unit}, not yet known within {tol}"
             for c in r.crossings if c.stopped not in ("tight", "noise")]
    xs = "batch sizes" if r.unit == "samples per batch" else "widths"
    lines.append(f"Refinement stopped after {fmt_duration(r.spent_s)} and {len(r.widths)} measurements "
                 f"of {len(set(r.widths))} {xs}: {refine_stop(r)}.")
    return lines


KIND_NAMES = {"mlp": ("MLP", "hidden layer"), "cnn": ("CNN", "block"), "lstm": ("LSTM", "recurrent layer"),
              "gru": ("GRU", "recurrent layer"), "transformer": ("Transformer", "encoder block")}


def picture_title(rows: Sequence[SweepRow], host: Mapping[str, JsonValue]) -> str:
    """A sweep picture's title for a slide: the model and the batch size, then on a line of its own the
    machines it ran on (the devices of its lanes; this machine's CPU when the rows name none)."""
    if not rows:
        return ""
    layers = sorted({r.layers for r in rows if r.layers})
    widths = sorted({r.width for r in rows})
    batches = sorted({r.batch_size for r in rows if r.batch_size})
    devices = list(dict.fromkeys(r.device for r in rows if r.device)) or [HostInfo.from_json(dict(host)).cpu]
    depth = "/".join(map(str, layers)) if layers else "?"
    kinds = sorted({r.family for r in rows})
    kind = kinds[0] if len(kinds) == 1 else ""
    parts = ModelKind.parse(kind)
    if parts.saved:
        model = f"your model {parts.detail or '(saved)'}"
    elif parts.factory and widths:  # a user's function of the width
        called = parts.detail or "FUNCTION"
        model = f"your model {called}(width), width {widths[0]:,}" + (f"–{widths[-1]:,}" if len(widths) > 1 else "")
    else:
        name, layer = KIND_NAMES.get(parts.base, ("models of several kinds", "layer"))
        plural = "s" if layers != [1] else ""
        model = (f"{name}, {depth} {layer}{plural} of {widths[0]:,}–{widths[-1]:,} {width_unit(kind)}"
                 if len(widths) > 1 else f"{name}, {depth} {layer}{plural} of {widths[0]:,}")
    shown = "; ".join(devices[:3]) + ("; …" if len(devices) > 3 else "")
    batch = f" · batch {', '.join(map(str, batches))}" if batches else ""
    return f"{model}{batch}\n{shown}"
