"""Refinement: after the first widths, measure where the faster lane changes until each change is known within
the tolerance, the time budget is spent, or the lanes tie within noise over a range.

Pure logic: it talks to an injected `measure(width, level)` (the real one runs lanes, see
core/study/refined_sweep.py; tests pass a fake timer with a known crossing) and an injected clock.
One measurement at a time, each chosen with every point measured so far:

1. a weak lead at a bracket's end, that its neighbours contradict or that borders a tie, and a
   tie at an end of the range (any tie, while no change has been found), are measured again (up
   to `max_level` times), their new batches added to the old: more batches narrow the medians'
   intervals;
2. a bracket still wider than the tolerance gets a new width inside it, in log space, half a
   tolerance step either side of the estimated crossing (from the fitted cost models while the
   bracket is wide, from the points around it once narrow) so that one more lead closes it;
3. a bracket with ties (the lanes equal within noise there) gets widths between its ends and the
   ties until each gap is within half the tolerance, then more batches at the ties next to its
   ends: it is then tight, or, when the tie is wider than the tolerance, the answer is a range
   "within noise", never a made-up point.
"""
from __future__ import annotations

import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ..analysis.points import SweepPoint, by_lane, time_curves
from ..analysis.fits import fit_cost_model, predicted_crossover
from ..config import ConfigError
from ..analysis.refinement import Crossing, RefineTarget, Refinement, Tie
from ..analysis.verdict import Bracket, Site, brackets_and_ties, pair_sites

# (width, level) → a point per lane, none if it failed; level n > 0: the width's n+1-th measurement,
# whose points hold every batch measured there so far.
Measure = Callable[[int, int], Sequence[SweepPoint]]
# Probes aim a little inside the tolerance, so a probe rounded to whole units still closes a bracket.
MARGIN = 0.9
# While a bracket spans more than this ratio, the cost models (fitted over every width) place the
# next probe better than a straight line through the bracket's two ends.
FIT_ABOVE_RATIO = 3.0


# ---------------------------------------------------------------- the answer so far

def tight(bracket: Bracket, target: RefineTarget) -> bool:
    """Known within the tolerance, or to the unit."""
    a, b = bracket.interval()
    return b / a <= target.ratio or b - a <= 1


def only_noise_left(bracket: Bracket, target: RefineTarget) -> bool:
    """Not tight, but its ends reach its ties, and the ties next to them have had all their batches: a range within
    noise."""
    return (not tight(bracket, target) and bool(bracket.ties) and not gaps_to_split(bracket, target)
            and min(bracket.ties[0].level, bracket.ties[-1].level) >= target.max_level)


def crossing_of(bracket: Bracket, target: RefineTarget, open_reason: str) -> Crossing:
    """The answer for one bracket; one still open says why (`open_reason`: budget, cancelled, failed)."""
    lo, hi = bracket.interval()
    if tight(bracket, target):
        stopped = "tight"
    elif only_noise_left(bracket, target):
        stopped = "noise"
    else:
        stopped = open_reason or "failed"  # nothing left to measure, yet not tight: no width fitted in
    if bracket.ties and stopped != "tight":
        width: float | None = None  # a made-up point inside a tie would not be honest
    else:
        width = bracket.estimate()
    return Crossing(bracket.lanes, width, lo, hi, bracket.flops_at(width) if width else None,
                    bracket.faster_above, stopped)


def gaps_to_split(bracket: Bracket, target: RefineTarget) -> list[tuple[int, int]]:
    """The gaps between a bracket's ends and its ties that are wider than half the tolerance (in log space).

    Splitting them walks each end up to where the tie begins: a narrow tie then leaves a bracket
    within the tolerance, and a tie wider than the tolerance leaves the honest answer, a range.
    """
    s = bracket.sites
    return [(x.width, y.width) for x, y in ((s[0], s[1]), (s[-2], s[-1]))
            if y.width / x.width > math.sqrt(target.ratio) and y.width - x.width > 1]


def lane_pairs(points: Sequence[SweepPoint]) -> list[tuple[str, str]]:
    return list(itertools.combinations(sorted(by_lane(points)), 2))


def answer(points: Sequence[SweepPoint], levels: Mapping[int, int], target: RefineTarget, open_reason: str,
           spent_s: float, widths: Sequence[int]) -> Refinement:
    """The refinement's answer from the points measured; crossings not yet tight carry `open_reason`."""
    lanes = time_curves(points)
    crossings, ties = [], []
    for pair in lane_pairs(points):
        brackets, tie_runs = brackets_and_ties(pair_sites(lanes, *pair, levels), pair)
        crossings += [crossing_of(b, target, open_reason) for b in brackets]
        ties += [Tie(pair, run[0].width, run[-1].width) for run in tie_runs]
    crossings.sort(key=lambda c: (c.width_lo, c.lanes))
    ended = {c.stopped for c in crossings}
    if open_reason:
        stopped = open_reason
    elif not crossings:
        stopped = "no crossover"
    elif ended <= {"tight", "noise"}:
        stopped = "noise" if "noise" in ended else "tight"
    else:
        stopped = "failed"  # nothing left to measure, yet a crossing is neither tight nor noise
    return Refinement(target, tuple(crossings), tuple(ties), stopped, spent_s, tuple(widths))


# ---------------------------------------------------------------- what to measure next

def doubtful(sites: Sequence[Site]) -> list[Site]:
    """Weak leads that deserve more batches: ones both decided neighbours contradict (a double crossing,
    or chance), and ones next to a tie (where the lanes may be equal, and the lead chance)."""
    decided = [s for s in sites if s.sign != 0]
    out = [s for prev, s, nxt in zip(decided, decided[1:], decided[2:]) if prev.sign == nxt.sign != s.sign]
    for prev, nxt in zip(sites, sites[1:]):
        out += [site for site, other in ((prev, nxt), (nxt, prev)) if site.sign != 0 and other.sign == 0]
    return [s for s in out if s.weak]


@dataclass
class _Book:
    """Everything measured so far: the points per lane and width, each width's level, and the time each took."""

    points: dict[tuple[str, int], SweepPoint] = field(default_factory=dict)
    levels: dict[int, int] = field(default_factory=dict)
    widths: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)  # what each measurement took

    def add(self, width: int, level: int, points: Sequence[SweepPoint], seconds: float) -> None:
        self.widths.append(width)
        self.levels[width] = level
        self.seconds.append(seconds)
        for p in points:
            self.points[(p.lane, p.width)] = p

    def all_points(self) -> list[SweepPoint]:
        return list(self.points.values())

    def predict_s(self) -> float:
        """What the next measurement will likely take: the slowest of the last three (step times grow
        with the width), leaving out the first once there are others (it paid the lanes' start-up)."""
        recent = (self.seconds[1:] or self.seconds)[-3:]
        return max(recent) if recent else 0.0


@dataclass(frozen=True)
class _Step:
    width: int
    level: int


def refine(widths: Sequence[int], measure: Measure, target: RefineTarget, *,
           clock: Callable[[], float] = time.monotonic, cancel: threading.Event | None = None) -> Refinement:
    """Measure `widths` (the coarse sweep), then refine around every change of the faster lane; see the module."""
    coarse = sorted(set(widths))
    if len(coarse) < 2:
        raise ConfigError("refining needs at least two widths to look for a change of the faster lane between")
    cancel = cancel or threading.Event()
    book, t0 = _Book(), clock()
    queue = [_Step(w, 0) for w in coarse]
    reason = ""
    while not reason:
        step = queue.pop(0) if queue else next_step(book, target)
        if step is None:
            break
        if cancel.is_set():
            reason = "cancelled"
        elif book.seconds and clock() - t0 + book.predict_s() > target.budget_s:
            reason = "budget"
        else:
            started = clock()
            points = [p for p in measure(step.width, step.level) if math.isfinite(p.median_ms) and p.median_ms > 0]
            book.add(step.width, step.level, points, clock() - started)
            if cancel.is_set():
                reason = "cancelled"
            elif len({p.lane for p in points}) < 2:
                reason = "failed"  # fewer than two lanes measured this width: nothing to compare there
    return answer(book.all_points(), book.levels, target, reason, clock() - t0, book.widths)


def next_step(book: _Book, target: RefineTarget) -> _Step | None:
    """The one measurement that does the most for the answer now; None when there is nothing left to do."""
    lanes = time_curves(book.all_points())
    doubts: list[Site] = []
    brackets: list[Bracket] = []
    for pair in lane_pairs(book.all_points()):
        sites = pair_sites(lanes, *pair, book.levels)
        found = brackets_and_ties(sites, pair)[0]
        brackets += found
        # Only a lead that ends a bracket can move an answer: one elsewhere is left as measured. A tie
        # at an end of the range next to a lead can: the other lane may lead beyond it. While no
        # change has been found, so can any tie: the other lane may lead there, and change twice.
        ends = {b.sites[i].width for b in found for i in (0, -1)}
        doubts += [s for s in doubtful(sites) if s.width in ends]
        if any(s.sign for s in sites):
            doubts += [s for s in (sites if not found else (sites[0], sites[-1])) if s.sign == 0]
    doubts = [s for s in doubts if s.level < target.max_level]
    if doubts:
        site = min(doubts, key=lambda s: (s.level, s.width))
        return _Step(site.width, site.level + 1)
    for bracket in sorted(brackets, key=lambda b: -b.ratio):
        step = probe(bracket, target, lambda lo, hi: _fitted_estimate(book, bracket.lanes, lo, hi))
        if step is not None and (step.level > 0 or step.width not in book.levels):
            return step
    return None


def probe(bracket: Bracket, target: RefineTarget, fitted: Callable[[int, int], float | None]) -> _Step | None:
    """The next measurement for a bracket, or None when it is as tight as it can get (or only noise is left)."""
    if tight(bracket, target):
        return None
    if bracket.ties:
        return _probe_ties(bracket, target)
    a, b = bracket.interval()
    step = MARGIN * math.log(target.ratio)
    la, lb = math.log(a), math.log(b)
    guess = fitted(a, b) if bracket.ratio > FIT_ABOVE_RATIO else None
    le = math.log(guess) if guess and a < guess < b else _line_zero(bracket)
    if lb - la <= 2 * step:
        # Any width in [b/R, a·R] closes the bracket once it leads: take the end farther from the
        # estimate, where the lead is largest and so the least likely to be a tie.
        lo, hi = lb - step, la + step
        return _at(a, b, math.exp(lo if abs(lo - le) >= abs(hi - le) else hi))
    below, above = le - step / 2, le + step / 2
    if below <= la + step / 10:
        return _at(a, b, math.exp(la + step))
    if above >= lb - step / 10:
        return _at(a, b, math.exp(lb - step))
    # Both sides of the estimate are worth a width; start with the one that cuts the larger part away.
    return _at(a, b, math.exp(below if le - la > lb - le else above))


def _probe_ties(bracket: Bracket, target: RefineTarget) -> _Step | None:
    """Bring a bracket's ends up to its ties, then give the ties next to the ends their extra batches.

    A single tie most often sits on the crossing: half a tolerance step either side of it closes
    the bracket. A run of ties is a range: its edges are found by halving the gaps (in log space).
    """
    gaps = gaps_to_split(bracket, target)
    if gaps:
        lo, hi = max(gaps, key=lambda g: g[1] / g[0])
        walk = MARGIN * math.log(target.ratio) / 2
        if len(bracket.ties) == 1 or hi / lo <= target.ratio:
            tie_is_high = lo == bracket.sites[0].width  # the gap below the ties; else the one above them
            return _at(lo, hi, hi / math.exp(walk) if tie_is_high else lo * math.exp(walk))
        return _at(lo, hi, math.sqrt(lo * hi))
    for tie in sorted({bracket.ties[0], bracket.ties[-1]}, key=lambda s: s.level):
        if tie.level < target.max_level:
            return _Step(tie.width, tie.level + 1)
    return None


def _line_zero(bracket: Bracket) -> float:
    """log(width) where the straight line through the ends' leads meets 0."""
    first, last = bracket.sites[0], bracket.sites[-1]
    t = first.d / (first.d - last.d)
    return math.log(first.width) + t * (math.log(last.width) - math.log(first.width))


def _at(a: int, b: int, width: float) -> _Step | None:
    """A first measurement at `width` as a whole number strictly between a and b; None when there is none."""
    if b - a <= 1:
        return None
    return _Step(min(max(int(round(width)), a + 1), b - 1), 0)


def _fitted_estimate(book: _Book, lanes: tuple[str, str], a: int, b: int) -> float | None:
    """The width where the two lanes' fitted cost models cross, if it lies between a and b (a guess: the
    probes around it are what the answer rests on)."""
    fits, flops_of = [], {}
    for lane in lanes:
        points = [p for (name, _w), p in book.points.items() if name == lane]
        fit = fit_cost_model([p.flops_per_batch for p in points], [p.median_ms for p in points])
        if fit is None:
            return None
        fits.append(fit)
        flops_of.update({p.width: p.flops_per_batch for p in points})
    flops = predicted_crossover(*fits)
    if flops is None or a not in flops_of or b not in flops_of:
        return None
    fa, fb = math.log(flops_of[a]), math.log(flops_of[b])
    if not fa < math.log(flops) < fb:
        return None
    # FLOPs grow as a power of the width: interpolate in log-log between the bracket's ends.
    t = (math.log(flops) - fa) / (fb - fa)
    return math.exp(math.log(a) + t * (math.log(b) - math.log(a)))
