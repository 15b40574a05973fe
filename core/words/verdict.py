"""The one crossing rule in words: a pair of lanes' verdict (core/analysis/verdict.py) as the sentence every
view shows — the CLI, the Sweep tab, the summary of a ramp, the map's caption — in width order, in the
units the user moves, with FLOPs per batch in brackets."""
from __future__ import annotations

import math
from typing import Sequence

from ..analysis.points import SweepPoint
from ..analysis.significance import PASSES_FOR_SWEEP, Prior
from ..families import Family, ModelKind
from ..analysis.verdict import Change, PairVerdict, State, Stretch
from ..files.rule_calibration import calibration_problem, design_of, design_rate
from ..files.rule_here import here_calibration
from .rule_here import rate_words
from .numbers import fmt_flops, fmt_num, fmt_range, plural


def unit_of(points: Sequence[SweepPoint]) -> str:
    """The unit the user moves along these points: what a model's width counts (an MLP's or an RNN's units, a
    CNN's filters, a transformer's d_model), or the batch size of a sweep along batch size at one width."""
    if any(p.axis == "batch" for p in points):
        return "samples per batch"
    kinds = {p.kind for p in points}
    return width_unit(kinds.pop()) if len(kinds) == 1 else "units"


def width_unit(kind: str) -> str:
    """What a kind of model's width counts: "units" (MLP, LSTM, GRU), "filters" (CNN), "d_model" (transformer)."""
    family = ModelKind.parse(kind).family
    return "filters" if family == Family.CNN else "d_model" if family == Family.TRANSFORMER else "units"


def _w(width: float) -> str:
    """A measured width, exact: 4,096."""
    return f"{int(width):,}"


def _of(x: float, unit: str) -> str:
    """A measured x in its unit: "4,096 units", "16 samples per batch", "1 sample per batch"."""
    return "1 sample per batch" if x == 1 and unit == "samples per batch" else f"{_w(x)} {unit}"


def _at(lo: float, hi: float, unit: str) -> str:
    if lo == hi:
        return f"at {_of(lo, unit)}"
    return f"from {_w(lo)} to {_w(hi)} {unit}"


def _times(lo: float, hi: float) -> str:
    """A ratio as times: "2.2x", "1.4–2.2x"; a lead under 10% keeps its third digit ("1.03x", never "1x")."""
    if lo < 1.1:
        return f"{fmt_num(lo, 3)}x" if fmt_num(lo, 3) == fmt_num(hi, 3) else f"{fmt_num(lo, 3)}–{fmt_num(hi, 2)}x"
    return f"{fmt_num(lo, 2)}x" if fmt_num(lo, 2) == fmt_num(hi, 2) else f"{fmt_range(lo, hi)}x"


# Medians this far apart (1.2: one 20% above the other) inside the noise are no answer, not "equal": the noise was
# wide, not the lanes close. Closer than this, "equal within noise" and "too close to call" say what they mean.
NOISE_GAP = 1.2


def stretch_words(s: Stretch, unit: str = "units") -> str:
    if s.leader is None and s.equal:  # the equivalence test's bound, decided in the verdict (core/analysis/verdict.py)
        return (f"equal within ±{fmt_num(100 * s.within, 2)}% {_at(s.width_lo, s.width_hi, unit)} (medians up to "
                f"{_percent(s.ratio_hi)} apart)")
    if s.leader is None:
        hide = f"; a difference of up to {_percent(1 + s.within)} could hide here" if math.isfinite(s.within) else ""
        apart = _times(s.ratio_hi, s.ratio_hi) if s.ratio_hi >= NOISE_GAP else _percent(s.ratio_hi)
        return f"no answer {_at(s.width_lo, s.width_hi, unit)} (medians up to {apart} apart there, inside the noise{hide})"
    together = ("; the sweep's widths together, those inside the noise alone too: the test of the whole sweep"
                if s.pattern else "")
    return f"{s.leader} is faster {_at(s.width_lo, s.width_hi, unit)} ({_times(s.ratio_lo, s.ratio_hi)}{together})"


def change_words(c: Change, unit: str = "units") -> str:
    if c.width is None:
        return (f"{c.faster_below} is faster up to {_of(c.width_lo, unit)} and {c.faster_above} from "
                f"{_of(c.width_hi, unit)}; between, the noise cannot tell them apart")
    flops = f"≈{fmt_flops(c.flops_per_batch)} per batch; " if c.flops_per_batch else ""
    return (f"{c.faster_above} is faster above about {fmt_num(c.width, 2)} {unit} ({flops}"
            f"{_w(c.width_lo)}–{_w(c.width_hi)} within the noise), {c.faster_below} below")


def _percent(ratio: float) -> str:
    return f"{fmt_num(100 * (ratio - 1), 2)}%"


def scatter(noise: float) -> str:
    """A scatter in log units (a standard deviation of logs) as a reader takes it: "±22%"; "–" where unknown."""
    return f"±{_percent(math.exp(noise))}" if math.isfinite(noise) else "–"


def pair_words(v: PairVerdict, unit: str = "units", machine: str = "on this machine") -> str:
    """One sentence for a pair of lanes, its clauses in width order, and in brackets what it rests on and the error
    rate it carries for the whole sweep (error_words)."""
    said = _pair_sentence(v, unit, machine)
    rests = error_words(v, "batch sizes" if "per batch" in unit else "widths")
    return f"{said} ({rests})" if rests else said


def _pair_sentence(v: PairVerdict, unit: str, machine: str) -> str:
    a, b = v.lanes
    if v.state is State.NOT_ENOUGH:
        return f"{a} and {b} have no width measured on both: nothing to compare"
    lo, hi = v.widths[0], v.widths[-1]
    if v.state is State.TOO_CLOSE and v.max_gap >= NOISE_GAP and v.widest_lane:
        # Noise said as noise: what the gap looked like, what scattered more, and that there is no answer yet.
        # How big a gap would have to be to be told from the noise there: what a room can weigh 1.3x against.
        at = next((x for x in v.stretches if x.width_lo <= v.widest_width <= x.width_hi and math.isfinite(x.within)),
                  None)
        bound = ("" if at is None else f", so a gap of up to {_percent(1 + at.within)} could be noise there"
                 if at.within < 1 else ", so even a 2x gap could be noise there")
        return (f"no answer for {a} and {b} {machine}: {v.widest_lane} looked {_times(v.max_gap, v.max_gap)} faster "
                f"at {_of(v.widest_width, unit)}, but {_scatter_words(v)}{bound}; measure again when the machine is "
                "quiet")
    if v.state is State.TOO_CLOSE and all(s.equal for s in v.stretches):
        # Equal as the verdict's equivalence bound decided it, never because no lead was found.
        bound = max(s.within for s in v.stretches)
        return (f"{a} and {b} are equal within ±{fmt_num(100 * bound, 2)}% {machine} {_at(lo, hi, unit)} (medians "
                f"up to {_percent(v.max_gap)} apart)")
    if v.state is State.TOO_CLOSE:
        return (f"{a} and {b} are too close to call {machine} (medians up to {_percent(v.max_gap)} apart "
                f"{_at(lo, hi, unit)}, inside the noise){_noise_words(v)}")
    if v.state is State.LEADS:
        return _with_subject("; ".join(stretch_words(s, unit) for s in v.stretches), a, b)
    # CROSSES: each change, in width order with every stretch it does not describe: a lead or a tie before or
    # after it (a lead at the smallest width, then a tie, then the lead that gives way). The stretches at a
    # change's two ends are its own words; a tie between them is its "between, they are equal within noise".
    clauses = [(float(c.width_lo), change_words(c, unit)) for c in v.changes]
    ends = {w for c in v.changes for w in (c.width_lo, c.width_hi)}
    inside = [(c.width_lo, c.width_hi) for c in v.changes]
    clauses += [(float(s.width_lo), stretch_words(s, unit)) for s in v.stretches
                if not (s.width_lo in ends or s.width_hi in ends)
                and not any(lo < s.width_lo and s.width_hi < hi for lo, hi in inside)]
    return _with_subject("; then ".join(text for _, text in sorted(clauses)), a, b)


def _scatter_words(v: PairVerdict) -> str:
    """What made a wide gap no answer: the pair's run-to-run noise and what it rests on."""
    if v.noise is not None and not v.widest_by_batches:
        return f"one run's ratio of the two is uncertain by {scatter(v.noise.tau)} here ({noise_basis(v)})"
    return "each lane's batches spread wider than the gap"


def _noise_words(v: PairVerdict) -> str:
    """Why a gap that wide is still a tie, where the pair's run-to-run noise is more than 2%: ": one run's ratio is
    uncertain by ±8% (…)", the noise its batches cannot show."""
    if v.noise is None or v.noise.tau <= 0.02:
        return ""
    return f": one run's ratio of the two is uncertain by {scatter(v.noise.tau)} ({noise_basis(v)})"


def noise_basis(v: PairVerdict) -> str:
    """What the pair's run-to-run noise rests on: "2 widths measured twice, the sweep's shape and a prior"."""
    n = v.noise
    if n is None:
        return "no estimate"
    parts = []
    if n.repeat_widths:
        parts.append(f"{n.repeat_widths} {plural(n.repeat_widths, 'width')} measured in several runs")
    if n.shape_dof > 0:
        parts.append(f"the shape of {len(v.widths)} widths")
    if n.floored:
        parts.append("this machine's earlier sweep" if n.prior == Prior.MACHINE else
                     f"the rule's floor of ±{fmt_num(100 * n.tau, 2)}%" + (
                         ", as the noise was not measured on enough degrees of freedom (sweep --passes 5 measures it)"
                         if n.prior == Prior.UNMEASURED else ""))
    said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "the rule's floor"
    dof = fmt_num(n.dof, 2)
    return f"{said}; {dof} {plural(float(dof.replace(',', '')), 'degree')} of freedom"


def error_words(v: PairVerdict, points: str = "widths") -> str:
    """The error rate the answer carries, for the whole sweep, and what it rests on: "one run per width; at most a 5%
    chance of any false lead over these 10 widths, 1.8% measured (rule calibration, 2026-12-06)" (`points`: what
    the sweep steps along, "batch sizes" for a sweep along batch size)."""
    if v.state is State.NOT_ENOUGH:
        return ""
    point = points.removesuffix("s")
    runs = f"one run per {point}" if v.runs <= 1 else f"up to {v.runs} runs per {point}"
    if v.noise is not None and v.noise.passes >= PASSES_FOR_SWEEP:
        runs = f"every {point} in {v.noise.passes} passes"
    if len(v.widths) == 1:
        runs = "one run of each lane" if v.runs <= 1 else f"{v.runs} runs of each lane"
    over = f"over these {len(v.widths)} {points}" if len(v.widths) > 1 else f"at this {point}"
    rate = design_words(v)
    return f"{runs}; at most a {fmt_num(100 * v.alpha, 2)}% chance of any false lead {over}{rate}"


def design_words(v: PairVerdict) -> str:
    """The false-lead rate measured for this answer's own design (its widths, passes, files), never another's:
    ", 2.5% measured for this design (95%: 0.7–8.8%, the worst of 7 noise models; rule calibration, 2026-12-07)";
    or that its design was not calibrated; or why the calibration cannot be used."""
    n = v.noise
    if n is None:
        return ""
    passes = n.passes
    rechecked = n.repeat_dof > 0 and passes < PASSES_FOR_SWEEP
    files = 2 if n.session > 0 else 1
    row = design_rate(len(v.widths), passes, rechecked, files)
    here = here_words()
    if row is not None:
        more = row.false_lead > v.alpha  # honest where noise the rule does not model beat its design
        return (f"{', but' if more else ','} {fmt_num(100 * row.false_lead, 2)}% measured for this design (95%: "
                f"{fmt_num(100 * row.lo, 2)}–{fmt_num(100 * row.hi, 2)}%, the worst noise model of the calibration, "
                f"{row.worst_noise}{': more than it is designed for' if more else ''}; {row.source}){here}")
    problem = calibration_problem()
    if problem:  # a damaged calibration file is named as the fault, not left to look like the user's own file's
        return f", not measured (the rule's calibration cannot be used: {problem})"
    files_words = "two files measured apart" if files > 1 else "one file"
    return (f"; this design ({len(v.widths)} {plural(len(v.widths), 'width')}, {design_of(passes, rechecked)}, "
            f"{files_words}) is outside the rule's calibration (benchmarks/rule_calibration.py){here}")


def here_words() -> str:
    """This machine's own false-lead rate, where `calibrate` measured it (twin sweeps of a lane against itself):
    "; on this machine, 0 false leads in 6 twin sweeps of cpu1 (95%: 0–46%; calibrate, 2026-12-07)"."""
    here = here_calibration()
    if here is None:
        return ""
    said = rate_words(here).removesuffix(")")  # "… (95%: 0–46%": the source joins its bracket
    return f"; on this machine, {said}; calibrate, {here.measured_at[:10]})"


def _with_subject(text: str, a: str, b: str) -> str:
    """A sentence that opens on a tie names who is equal: "cpu and cpu1 are equal within noise at 64 units"."""
    if text.startswith("equal within"):
        return f"{a} and {b} are {text}"
    return f"for {a} and {b}, {text}" if text.startswith("no answer") else text
