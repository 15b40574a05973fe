"""What a refined sweep knows at any moment: per lane pair, which lane leads at each width, the brackets around
each change of the faster lane, and the answer (intervals, ties, why it stopped) as words-ready data and JSON.

A lead counts only where the pair's one test finds it (core/analysis/significance.py: each width's log-ratio against
its batches' error and the pair's run-to-run noise, and the sweep as a whole, with Holm's step-down across them: at
most a 5% chance of any false lead over the whole sweep); a width without one is a tie "within noise". A
crossing's interval is the pair of nearest widths either side where one lane is measurably faster: no curve is
assumed between them. Nothing here measures.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..json_data import JsonObject, JsonValue
from .points import Crossover, CurvePoint, SweepPoint, by_lane, time_curves
from ..config import ConfigError
from .significance import PairTest, WidthData, point_se, judge_pair

DEFAULT_TOLERANCE, DEFAULT_BUDGET_S, DEFAULT_MAX_LEVEL = 0.15, 60.0, 2
STOP_REASONS = ("tight", "noise", "no crossover", "budget", "cancelled", "failed")


@dataclass(frozen=True)
class RefineTarget:
    """How tight the answer must be (± relative to the interval's middle), and the time it may take."""

    tolerance: float = DEFAULT_TOLERANCE
    budget_s: float = DEFAULT_BUDGET_S
    max_level: int = DEFAULT_MAX_LEVEL  # a tie gets this many more rounds of steady batches, added to its own

    def __post_init__(self) -> None:
        if not 0 < self.tolerance < 1:
            raise ConfigError(f"refine tolerance {self.tolerance:g}: choose above 0 and below 1 (0.15 is ±15%)")
        if not self.budget_s > 0:
            raise ConfigError(f"refine budget {self.budget_s:g} s: choose more than 0 seconds")
        if not 0 <= self.max_level <= 6:
            raise ConfigError(f"refine re-measure level {self.max_level}: choose 0-6")

    @property
    def ratio(self) -> float:
        """The widest hi/lo an interval may have: lo and hi within ±tolerance of their middle."""
        return (1 + self.tolerance) / (1 - self.tolerance)


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

    def tight(self, target: RefineTarget) -> bool:
        """Known within the tolerance, or to the unit."""
        a, b = self.interval()
        return b / a <= target.ratio or b - a <= 1

    def only_noise_left(self, target: RefineTarget) -> bool:
        """Not tight, but its ends reach its ties, and the ties next to them have had all their batches:
        a range within noise."""
        return (not self.tight(target) and bool(self.ties) and not gaps_to_split(self, target)
                and min(self.ties[0].level, self.ties[-1].level) >= target.max_level)

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


# ---------------------------------------------------------------- the answer

@dataclass(frozen=True)
class Crossing:
    """Where the faster lane changes; `width` is None when only a range is known (the lanes tie across it)."""

    lanes: tuple[str, str]
    width: float | None
    width_lo: float
    width_hi: float
    flops_per_batch: float | None
    faster_above: str
    stopped: str  # tight | noise, or why it was left open: budget | cancelled | failed


@dataclass(frozen=True)
class Tie:
    """Lanes equal within noise over a range of widths, with the same lane ahead on both sides (or at an end)."""

    lanes: tuple[str, str]
    width_lo: int
    width_hi: int


@dataclass(frozen=True)
class Refinement:
    """The outcome of a refined sweep: every crossing with its interval, the ties, and why it stopped."""

    target: RefineTarget
    crossings: tuple[Crossing, ...]
    ties: tuple[Tie, ...]
    stopped: str  # one of STOP_REASONS
    spent_s: float
    widths: tuple[int, ...]  # every width measured, coarse first, in the order measured (a re-measure again)
    unit: str = "units"  # what the widths count: a model's units (or filters, d_model), or "samples per batch"

    def marked(self) -> list[Crossover]:
        """The crossings to mark on a picture: those with a width (a range within noise has none to mark)."""
        return [Crossover(c.lanes, c.width, c.width_lo, c.width_hi, c.flops_per_batch or math.nan, c.faster_above)
                for c in self.crossings if c.width is not None]

    def to_json(self) -> JsonObject:
        return {"tolerance": self.target.tolerance, "budget_s": self.target.budget_s, "stopped": self.stopped,
                "spent_s": round(self.spent_s, 3), "widths_measured": list(self.widths), "unit": self.unit,
                "ties": [{**asdict(t), "lanes": list(t.lanes)} for t in self.ties]}


def refinement_of_sidecar(meta: Mapping[str, JsonValue]) -> Refinement | None:
    """A sweep file's refinement, read from its sidecar (the first variant's analysis), or None: what `analyze`
    and `report` of the file say beside the one rule's sentences, as the refined sweep said it when it ended."""
    sweep = meta.get("sweep")
    variants = sweep.get("variants") if isinstance(sweep, Mapping) else None
    base = next(iter(variants.values()), None) if isinstance(variants, Mapping) and variants else None
    analysis = base.get("analysis") if isinstance(base, Mapping) else None
    return refinement_from_json(analysis) if isinstance(analysis, Mapping) else None


def refinement_from_json(analysis: Mapping[str, JsonValue]) -> Refinement | None:
    """A refined sweep's answer as its sidecar keeps it (with_refinement's JSON), or None for a plain sweep
    or a damaged entry: what `analyze` of the file says beside the one rule's sentences. Read by key: a wrong
    shape is None."""
    info: Any = analysis.get("refinement")
    found: Any = analysis.get("crossovers")
    if not isinstance(info, Mapping) or not isinstance(found, list):
        return None
    try:
        target = RefineTarget(float(info["tolerance"]), float(info["budget_s"]))
        crossings = tuple(Crossing((str(c["lanes"][0]), str(c["lanes"][1])),
                                   None if c.get("width") is None else float(c["width"]), float(c["width_lo"]),
                                   float(c["width_hi"]), None if c.get("flops_per_batch") is None
                                   else float(c["flops_per_batch"]), str(c["faster_above"]), str(c["stopped"]))
                          for c in found if isinstance(c, Mapping))
        ties = tuple(Tie((str(t["lanes"][0]), str(t["lanes"][1])), int(t["width_lo"]), int(t["width_hi"]))
                     for t in info.get("ties") or [] if isinstance(t, Mapping))
        return Refinement(target, crossings, ties, str(info["stopped"]), float(info["spent_s"]),
                          tuple(int(w) for w in info.get("widths_measured") or []), str(info.get("unit") or "units"))
    except (KeyError, TypeError, ValueError, IndexError, ConfigError):
        return None


def crossing_of(bracket: Bracket, target: RefineTarget, open_reason: str) -> Crossing:
    """The answer for one bracket; one still open says why (`open_reason`: budget, cancelled, failed)."""
    lo, hi = bracket.interval()
    if bracket.tight(target):
        stopped = "tight"
    elif bracket.only_noise_left(target):
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


def with_refinement(analysis: JsonObject, refinement: Refinement | None) -> JsonObject:
    """The analysis JSON of a refined sweep: its crossovers are the refined ones, and it says why it stopped."""
    if refinement is None:
        return analysis
    crossovers = [{**asdict(c), "lanes": list(c.lanes)} for c in refinement.crossings]
    return {**analysis, "crossovers": crossovers, "refinement": refinement.to_json()}
