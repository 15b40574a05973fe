"""The one crossing rule, for every view: where each lane of a pair leads, where the lead changes hands, where
the two are equal within noise, and the typed verdict that the CLI, the summary, the map and the files render.

The rule is the pair's one test (core/analysis/significance.py, through core/analysis/leads.py): each width's
log-ratio of the two medians against its batches' error and the pair's run-to-run noise, and the sweep as a whole,
with Holm's step-down across them, so that any false lead anywhere in the sweep has at most an ALPHA (5%) chance.
Neighbouring widths without a lead merge into one stretch "equal within noise"; a crossing is stated only where
one lane's lead gives way to the other's, between the nearest widths either side where each leads. Everything
comes in width order. Nothing here measures or words.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Sequence

from ..json_data import JsonObject
from .points import Crossover, CurvePoint, SweepPoint, curves
from .leads import Bracket, Site, pair_test, run_noise, sites_of
from .significance import ALPHA, PairNoise


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
