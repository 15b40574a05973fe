"""The one judge of a pair of lanes, for every view: where each lane leads, where the lead changes hands, where the
two are equal (an equivalence bound at the rule's own level) or no answer can be given, as the typed verdict that the
CLI, the summary, the map, the report and the files render. One entry point, curve_verdict (pair_verdict, verdicts and
curve_verdicts call it); the statistics under it (each width's log-ratio against its batches' error and the pair's
run-to-run noise, the test of the whole sweep, Holm's step-down: at most an ALPHA (5%) chance of any false lead over
the whole sweep) are core/analysis/significance.py's, called from here alone among the views.

Neighbouring widths without a lead merge into one stretch, "equal within ±X%" where the data bound the difference
(EQUAL_WITHIN), else no answer; a crossing is stated only where one lane's lead gives way to the other's, between the
nearest widths either side where each leads. Everything comes in width order. Nothing here measures or words.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..json_data import JsonObject
from .points import Crossover, CurvePoint, SweepPoint, curves
from .significance import ALPHA, PairNoise, PairTest, WidthData, judge_pair, point_se


# ---------------------------------------------------------------- each width, and each change of the lead

@dataclass(frozen=True)
class Site:
    """One width measured on both lanes of a pair: d = log(ms of the first / ms of the second), ± half (its interval
    at the level the sweep's test took it at), and whether the test found a lead there (core/analysis/significance.py)."""

    width: int
    flops: float
    d: float
    half: float
    level: int  # the width has been measured level + 1 times, its batches added together
    # Where no width alone shows a lead but the test of the whole sweep does, and none leans the other way by more
    # than its standard error: how many widths the sweep has; 0 where the width was judged alone.
    pattern: int = 0
    lead: bool = False
    p: float = 1.0
    lean: int = 0  # with `pattern`: the way the whole sweep leads (-1: the first lane faster, +1: the second)

    @property
    def sign(self) -> int:
        """-1: the first lane is faster, +1: the second, 0: equal within noise."""
        if self.lead:
            return 1 if self.d > 0 else -1
        return self.lean if self.pattern else 0

    @property
    def weak(self) -> bool:
        """A lead, but one a chance draw could give: under twice its interval's half-width."""
        return self.sign != 0 and abs(self.d) <= 2 * self.half


def run_noise(points: Iterable[CurvePoint]) -> float:
    """A lane's run-to-run noise, where it has measured a width in more than one run: the root mean square of the
    spreads between those runs' medians (log units). One run's median may be off by that much however many batches
    it has (a run of its own meets the machine in another state); NaN where no width was measured twice."""
    spreads = [p.between_runs for p in points if p.runs > 1 and math.isfinite(p.between_runs)]
    return math.sqrt(sum(s * s for s in spreads) / len(spreads)) if spreads else math.nan


def width_data(pa: CurvePoint, pb: CurvePoint) -> WidthData:
    """What one width gives the pair's test: the pooled medians' log-ratio, its variance from the batches, and each
    run's ratio where both lanes kept their runs' figures and those line up."""
    within = point_se(pa.lo, pa.hi, pa.n) ** 2 + point_se(pb.lo, pb.hi, pb.n) ** 2
    runs = max(min(pa.runs, pb.runs), 1)
    run_ds: tuple[float, ...] = ()
    if (len(pa.run_values) == len(pb.run_values) == runs > 1
            and all(x > 0 for x in pa.run_values + pb.run_values)):
        run_ds = tuple(math.log(x / y) for x, y in zip(pa.run_values, pb.run_values))
    flops = math.sqrt(max(pa.flops_per_batch, 1.0) * max(pb.flops_per_batch, 1.0))
    apart = bool(pa.session and pb.session and pa.session != pb.session)  # e.g. `analyze A B`: one lane each
    return WidthData(pa.width, flops if math.isfinite(flops) else 1.0, math.log(pa.value / pb.value), within, runs,
                     () if apart else run_ds, (pa.between_runs, pb.between_runs), apart)


def pair_test(lanes: Mapping[str, Mapping[int, CurvePoint]], a: str, b: str,
              known_noise: Mapping[str, float] | None = None) -> tuple[list[WidthData], PairTest]:
    """The widths both lanes have, in order, and the one test of the pair over them (core/analysis/significance.py).
    `known_noise` (each lane's run-to-run noise as an earlier sweep here measured it, core/files/noise.py) is the
    prior for the pair's noise where given for both lanes."""
    data = [width_data(lanes[a][w], lanes[b][w]) for w in sorted(set(lanes.get(a, {})) & set(lanes.get(b, {})))]
    prior = math.nan
    if known_noise and all(math.isfinite(known_noise.get(lane, math.nan)) for lane in (a, b)):
        prior = math.hypot(known_noise[a], known_noise[b])
    return data, judge_pair(data, prior)


def pair_sites(lanes: Mapping[str, Mapping[int, CurvePoint]], a: str, b: str,
               levels: Mapping[int, int], known_noise: Mapping[str, float] | None = None) -> list[Site]:
    """The widths both lanes have, in order, each with its lead and the lead's interval, by the pair's one test
    (pair_test). Where the whole sweep shows a lead that no width shows alone, and no width leans the other way by
    more than its standard error, the widths are marked as led that way (`pattern`)."""
    data, test = pair_test(lanes, a, b, known_noise)
    return sites_of(data, test, levels)


def sites_of(data: Sequence[WidthData], test: PairTest, levels: Mapping[int, int]) -> list[Site]:
    sites = [Site(w.width, w.flops, w.d, t.half, levels.get(w.width, 0), lead=t.lead, p=t.p)
             for w, t in zip(data, test.widths)]
    sweep = test.sweep
    if sweep is not None and sweep.lead:
        lean = 1 if sweep.d > 0 else -1
        # The whole sweep's lead is said as a lead over its widths only where no width leads alone (else the widths
        # speak for themselves, and a mean over them may rest on one) and none leans the other way by more than its
        # own standard error (else it is a mean over a curve, not where one lane leads).
        if not any(s.lead for s in sites) and all(s.d * lean > -t.se for s, t in zip(sites, test.widths)):
            sites = [s if s.lead else dataclasses.replace(s, pattern=len(sites), lean=lean) for s in sites]
    return sites


@dataclass(frozen=True)
class Bracket:
    """A change of the faster lane: the decided sites at each end, and the ties between them."""

    lanes: tuple[str, str]
    sites: tuple[Site, ...]

    @property
    def ratio(self) -> float:
        return self.sites[-1].width / self.sites[0].width

    @property
    def ties(self) -> tuple[Site, ...]:
        return self.sites[1:-1]

    @property
    def faster_above(self) -> str:
        return self.lanes[0] if self.sites[-1].sign < 0 else self.lanes[1]

    def interval(self) -> tuple[int, int]:
        """The nearest widths either side where one lane is measurably faster: the change lies between."""
        return self.sites[0].width, self.sites[-1].width

    def estimate(self) -> float:
        """Where the medians' lead changes: a line through d over the bracket's sites, kept inside the interval."""
        lo, hi = self.interval()
        x = np.log([s.width for s in self.sites])
        y = np.array([s.d for s in self.sites])
        slope, offset = np.polyfit(x, y, 1)
        guess = math.exp(-offset / slope) if slope != 0 and math.isfinite(slope) else math.sqrt(lo * hi)
        return min(max(guess, lo), hi)

    def flops_at(self, width: float) -> float:
        widths = np.log([s.width for s in self.sites])
        return float(np.exp(np.interp(math.log(width), widths, np.log([s.flops for s in self.sites]))))


def brackets_and_ties(sites: Sequence[Site], lanes: tuple[str, str]) -> tuple[list[Bracket], list[tuple[Site, ...]]]:
    """Each change of the decided lead (with the ties between), and the runs of ties that are not inside one."""
    brackets, ties, run = [], [], []
    last: Site | None = None
    for site in sites:
        if site.sign == 0:
            run.append(site)
            continue
        if last is not None and site.sign != last.sign:
            brackets.append(Bracket(lanes, (last, *run, site)))
        elif run:
            ties.append(tuple(run))
        last, run = site, []
    if run:
        ties.append(tuple(run))
    return brackets, ties


# ---------------------------------------------------------------- the verdict

class State(str, Enum):
    """What can be said of a pair of lanes over the widths both measured."""

    NOT_ENOUGH = "not enough"  # no width measured on both
    LEADS = "leads"  # one lane leads wherever a lead is measured, and never the other
    CROSSES = "crosses"  # the lead changes hands at least once
    TOO_CLOSE = "too close"  # no width where either lane measurably leads

    def __str__(self) -> str:
        return self.value


# The widest difference still said as "equal within ±X%": wider, a tie is no answer (absence of evidence is not
# equality: medians 16% apart were called equal).
EQUAL_WITHIN = 0.10


@dataclass(frozen=True)
class Stretch:
    """Neighbouring widths where the same lane leads (`leader`), or neither does (None: equal within noise)."""

    leader: str | None
    width_lo: int
    width_hi: int
    ratio_lo: float  # the slower lane's median over the faster's, smallest and largest in the stretch
    ratio_hi: float  # (for a tie: the medians' largest ratio either way, ≥ 1)
    # Neighbouring widths in it whose leads were each inside the noise, and beyond it together (leads.with_patterns).
    pattern: int = 0
    # For a tie: how far apart the lanes could be there, at the rule's own level (each width's |d| plus its interval's
    # half-width, the largest): an equivalence bound, "equal within ±X%" only where X ≤ EQUAL_WITHIN.
    within: float = math.nan

    @property
    def equal(self) -> bool:
        """A tie the data bound closely enough to say "equal within ±X%" (an equivalence test at the rule's level);
        a tie that is not is no answer: a difference of up to `within` could hide there."""
        return self.leader is None and math.isfinite(self.within) and self.within <= EQUAL_WITHIN


@dataclass(frozen=True)
class Change:
    """Where one lane's lead gives way to the other's: between `width_lo` (the last width where
    `faster_below` leads) and `width_hi` (the first where `faster_above` does). `width` estimates where
    the medians cross; None when a stretch equal within noise lies between (no point is made up there)."""

    faster_below: str
    faster_above: str
    width: float | None
    width_lo: int
    width_hi: int
    flops_per_batch: float | None  # at `width`


@dataclass(frozen=True)
class PairVerdict:
    """The answer for one pair of lanes over the widths both measured, by the one rule."""

    lanes: tuple[str, str]
    state: State
    stretches: tuple[Stretch, ...]  # in width order, covering every common width
    changes: tuple[Change, ...]  # in width order
    widths: tuple[int, ...]  # the common widths
    max_gap: float  # the largest ratio of the medians either way, anywhere (1.09: "within 9%")
    # Each lane's run-to-run noise (leads.run_noise, log units) where a width measured twice showed it, else NaN:
    # it bounds every interval of the lane, and the words say it where it made leads ties.
    run_noise: tuple[float, float] = (math.nan, math.nan)
    # The pair's run-to-run noise (one run's log-ratio beyond its batches, and what it rests on), the error rate for
    # the whole sweep, and how many tests it is shared by (each width, and the sweep as one).
    noise: PairNoise | None = None
    alpha: float = ALPHA
    tests: int = 0
    # The widest gap, whoever led it: the lane that looked faster there, at which width (what a tie's words name).
    widest_lane: str = ""
    widest_width: int = 0
    runs: int = 1  # the most runs any common width pools: 1 where every width was measured once
    # Whether, at the widest gap, the lanes' batches (their medians' errors) weigh more than the pair's run-to-run
    # noise: what a tie's words name as what swallowed the gap.
    widest_by_batches: bool = False

    @property
    def leader(self) -> str | None:
        """The lane that leads throughout (state LEADS), else None."""
        return next((s.leader for s in self.stretches if s.leader), None) if self.state is State.LEADS else None

    def to_json(self) -> JsonObject:
        return {"lanes": list(self.lanes), "state": self.state.value, "widths": list(self.widths),
                "max_gap": self.max_gap, "run_noise": [None if math.isnan(x) else x for x in self.run_noise],
                "noise": self.noise.to_json() if self.noise else None, "alpha": self.alpha, "tests": self.tests,
                "runs": self.runs,
                "stretches": [{"leader": s.leader, "width_lo": s.width_lo, "width_hi": s.width_hi,
                               "ratio_lo": s.ratio_lo, "ratio_hi": s.ratio_hi, "pattern": s.pattern,
                               "equal_within": s.within if s.equal else None,
                               "could_hide": s.within if s.leader is None and not s.equal
                               and math.isfinite(s.within) else None}
                              for s in self.stretches],
                "changes": [{"faster_below": c.faster_below, "faster_above": c.faster_above, "width": c.width,
                             "width_lo": c.width_lo, "width_hi": c.width_hi,
                             "flops_per_batch": c.flops_per_batch} for c in self.changes]}


def _stretches(sites: Sequence[Site], lanes: tuple[str, str]) -> list[Stretch]:
    out: list[Stretch] = []
    run: list[Site] = []
    for site in sites:
        if run and site.sign != run[-1].sign:
            out.append(_stretch(run, lanes))
            run = []
        run.append(site)
    if run:
        out.append(_stretch(run, lanes))
    return out


def _stretch(run: Sequence[Site], lanes: tuple[str, str]) -> Stretch:
    sign = run[0].sign
    ratios = [math.exp(sign * s.d) if sign else math.exp(abs(s.d)) for s in run]
    leader = None if sign == 0 else (lanes[0] if sign < 0 else lanes[1])
    within = max(math.exp(abs(s.d) + s.half) - 1 for s in run) if sign == 0 else math.nan
    return Stretch(leader, run[0].width, run[-1].width, min(ratios), max(ratios), max(s.pattern for s in run),
                   within)


def pair_verdict(points: Sequence[SweepPoint], a: str, b: str, levels: Mapping[int, int] | None = None,
                 known_noise: Mapping[str, float] | None = None) -> PairVerdict:
    """The verdict on lanes `a` and `b` from `points` (any lanes; others are ignored): by ms per step; `known_noise`
    (each lane's run-to-run noise as a sweep here measured it) is the prior for the pair's noise (leads.pair_test)."""
    return curve_verdict([p.curve_point() for p in points if p.lane in (a, b)], a, b, levels, known_noise)


def curve_verdict(points: Sequence[CurvePoint], a: str, b: str, levels: Mapping[int, int] | None = None,
                  known_noise: Mapping[str, float] | None = None) -> PairVerdict:
    """The verdict on two lanes' curves of any figure (ms per step, dollars per million samples)."""
    lanes = (a, b) if a <= b else (b, a)
    by_lane = curves([p for p in points if p.lane in lanes])
    data, test = pair_test(by_lane, *lanes, known_noise)
    sites = sites_of(data, test, levels or {})
    noise = (run_noise(by_lane.get(lanes[0], {}).values()), run_noise(by_lane.get(lanes[1], {}).values()))
    widths = tuple(s.width for s in sites)
    if not sites:
        return PairVerdict(lanes, State.NOT_ENOUGH, (), (), widths, math.nan)
    widest = max(sites, key=lambda s: abs(s.d))
    widest_lane = lanes[0] if widest.d < 0 else lanes[1]
    at_widest = next(w for w in data if w.width == widest.width)
    by_batches = test.noise is not None and at_widest.within > test.noise.tau ** 2 / at_widest.runs
    stretches = _stretches(sites, lanes)
    decided = [s for s in sites if s.sign != 0]
    changes = []
    for i, (x, y) in enumerate(zip(decided, decided[1:])):
        if x.sign == y.sign:
            continue
        between = tuple(s for s in sites if x.width < s.width < y.width)
        bracket = Bracket(lanes, (x, *between, y))
        width = None if between else bracket.estimate()
        below, above = (lanes[0], lanes[1]) if x.sign < 0 else (lanes[1], lanes[0])
        changes.append(Change(below, above, width, x.width, y.width,
                              bracket.flops_at(width) if width is not None else None))
    if changes:
        state = State.CROSSES
    elif decided:
        state = State.LEADS
    else:
        state = State.TOO_CLOSE
    return PairVerdict(lanes, state, tuple(stretches), tuple(changes), widths,
                       max(math.exp(abs(s.d)) for s in sites), noise, test.noise, test.alpha, test.tests, widest_lane,
                       widest.width, max(w.runs for w in data), by_batches)


def verdicts(points: Sequence[SweepPoint], levels: Mapping[int, int] | None = None) -> list[PairVerdict]:
    """Every pair of lanes in `points`, in name order, by ms per step."""
    return curve_verdicts([p.curve_point() for p in points], levels)


def curve_verdicts(points: Sequence[CurvePoint], levels: Mapping[int, int] | None = None) -> list[PairVerdict]:
    """Every pair of lanes' curves in `points`, in name order."""
    names = sorted(curves(points))
    return [curve_verdict(points, x, y, levels) for i, x in enumerate(names) for y in names[i + 1:]]


def crossovers_of(found: Sequence[PairVerdict], between: bool = False) -> list[Crossover]:
    """The changes with a width, as crossovers to mark on a picture or list in JSON, sorted by width; with
    `between` (a picture), also each change that a stretch equal within noise hides, its width NaN: a band over
    the widths between the two leads, with no line at a width nobody measured."""
    out = [Crossover(v.lanes, c.width if c.width is not None else math.nan, c.width_lo, c.width_hi,
                     c.flops_per_batch or math.nan, c.faster_above)
           for v in found for c in v.changes if c.width is not None or between]
    return sorted(out, key=lambda c: (math.sqrt(c.width_lo * c.width_hi) if math.isnan(c.width) else c.width,
                                      c.lanes))
