"""What a refined sweep knows at any moment: per lane pair, which lane leads at each width, the brackets around
each change of the faster lane, and the answer (intervals, ties, why it stopped) as words-ready data and JSON.

A lead counts only where the interval of the two medians' ratio leaves out 1: the interval comes
from each point's timing spread (p10-p90) and its number of steady batches, so more batches make
it narrower, but never narrower than the lane's run-to-run noise where a width measured in two runs
shows it (run_noise), and a width where it still holds 1 is a tie "within noise". A crossing's interval is
the pair of nearest widths either side where one lane is measurably faster: no curve is assumed
between them. Nothing here measures.
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

Z = 1.96  # a lead counts when the 95% interval of log(ms_a / ms_b) leaves out 0
MEDIAN_SE = 1.2533  # standard error of a median: 1.2533 σ / √n (normal data)
P10_P90_SIGMAS = 2.563  # p90 - p10 spans 2.563 σ (normal data)
# Batches within one run are not independent draws (caches, the other core's load), so no
# median is taken as known better than 1%, however many batches it has.
MIN_REL_SE = 0.01
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
    """One width measured on both lanes of a pair: d = log(ms of the first / ms of the second), ± half."""

    width: int
    flops: float
    d: float
    half: float
    level: int  # the width has been measured level + 1 times, its batches added together
    # Where this width's lead alone is inside the noise but it belongs to `pattern` neighbouring widths that lean the
    # same way and, judged together (with_patterns), lead beyond it: how many; 0 where the width was judged alone.
    pattern: int = 0

    @property
    def sign(self) -> int:
        """-1: the first lane is faster, +1: the second, 0: equal within noise."""
        if self.pattern:
            return 1 if self.d > 0 else -1
        return 0 if abs(self.d) <= self.half else (1 if self.d > 0 else -1)

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


def _log_se(p: CurvePoint, between: float = math.nan) -> float:
    """Relative standard error of a point's median, from its p10-p90 spread and batch count, and no less than its
    lane's run-to-run noise `between` over the runs it pools."""
    if not (p.n > 0 and 0 < p.lo <= p.hi and math.isfinite(p.hi)):
        return MIN_REL_SE * 3  # no spread recorded: assume a wide one rather than a false lead
    sigma = math.log(p.hi / p.lo) / P10_P90_SIGMAS
    se = max(MEDIAN_SE * sigma / math.sqrt(p.n), MIN_REL_SE)
    return max(se, between / math.sqrt(max(p.runs, 1))) if math.isfinite(between) else se


def ratio_noise(runs: Iterable[tuple[int, Mapping[str, float]]], a: str, b: str) -> tuple[float, int]:
    """The run-to-run scatter of the two lanes' ratio (the SD of log(ms_a / ms_b) between runs that measured both
    lanes at one width, pooled over the widths measured more than once), and how many runs it rests on: lanes taking
    turns are measured seconds apart, so a change of load moves both, and their ratio scatters less than either lane
    alone. `runs` gives, per run of a width, (width, each lane's median there). NaN, 0 where no width has two runs
    that measured both lanes."""
    by_width: dict[int, list[float]] = {}
    for width, medians in runs:
        ma, mb = medians.get(a, math.nan), medians.get(b, math.nan)
        if ma > 0 and mb > 0 and math.isfinite(ma) and math.isfinite(mb):
            by_width.setdefault(width, []).append(math.log(ma / mb))
    squares, free, used = 0.0, 0, 0
    for ds in by_width.values():
        if len(ds) > 1:
            mean = sum(ds) / len(ds)
            squares += sum((d - mean) ** 2 for d in ds)
            free += len(ds) - 1
            used += len(ds)
    return (math.sqrt(squares / free), used) if free else (math.nan, 0)


def pair_sites(lanes: Mapping[str, Mapping[int, CurvePoint]], a: str, b: str,
               levels: Mapping[int, int], known_noise: Mapping[str, float] | None = None,
               pair_noise: float = math.nan) -> list[Site]:
    """The widths both lanes have, in order, each with its lead and the lead's interval. A lane whose points show no
    run-to-run noise of their own (one run each) takes `known_noise`'s figure for it, where given: what an earlier
    sweep on this machine measured (core/files/noise.py), so one run's lead is bounded as a sweep's is. Where the
    pair's own ratio was seen to scatter between runs (`pair_noise`, ratio_noise), that bounds each width's lead
    instead of the two lanes' noises apart: it is how lanes measured in turns vary."""
    out = []
    noise = {lane: run_noise(lanes.get(lane, {}).values()) for lane in (a, b)}
    for lane in (a, b):
        if not math.isfinite(noise[lane]) and known_noise and math.isfinite(known_noise.get(lane, math.nan)):
            noise[lane] = known_noise[lane]
    for w in sorted(set(lanes.get(a, {})) & set(lanes.get(b, {}))):
        pa, pb = lanes[a][w], lanes[b][w]
        if math.isfinite(pair_noise):
            runs = max(min(pa.runs, pb.runs), 1)
            half = Z * max(math.hypot(_log_se(pa), _log_se(pb)), pair_noise / math.sqrt(runs))
        else:
            half = Z * math.hypot(_log_se(pa, noise[a]), _log_se(pb, noise[b]))
        flops = math.sqrt(max(pa.flops_per_batch, 1.0) * max(pb.flops_per_batch, 1.0))
        out.append(Site(w, flops, math.log(pa.value / pb.value), half, levels.get(w, 0)))
    return with_patterns(out)


# Neighbouring widths, each inside the noise alone, that all lean to one lane are judged together from this many.
PATTERN_WIDTHS = 3


def with_patterns(sites: Sequence[Site]) -> list[Site]:
    """The sites, where PATTERN_WIDTHS or more neighbouring ties all lean to the same lane and their pooled lead
    leaves out 0, marked as led by that lane (`pattern`: how many widths). Pooled by inverse variance: each width's
    interval half-width over Z is its standard deviation, the pooled mean's is 1/√Σ(1/σ²). Sound because each width
    was measured at its own time, and the noise that bounds it is what separate measurements of one width scattered
    by (its batches, and between runs: the load met at different times), so neighbours draw it apart; a pattern
    whose sum stays inside the noise is left a tie. Each stretch of ties that lean one way is one test, at most one
    per change of lean: no width is counted twice."""
    out = list(sites)
    i = 0
    while i < len(out):
        lean = 1 if out[i].d > 0 else -1 if out[i].d < 0 else 0
        j = i
        while j < len(out) and lean and out[j].sign == 0 and out[j].d * lean > 0 and out[j].half > 0:
            j += 1
        if j - i >= PATTERN_WIDTHS:
            weights = [(Z / s.half) ** 2 for s in out[i:j]]
            mean = sum(w * s.d for w, s in zip(weights, out[i:j])) / sum(weights)
            if abs(mean) > Z / math.sqrt(sum(weights)):
                out[i:j] = [dataclasses.replace(s, pattern=j - i) for s in out[i:j]]
        i = max(j, i + 1)
    return out


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


def doubtful(sites: Sequence[Site]) -> list[Site]:
    """Weak leads that deserve more batches: ones both decided neighbours contradict (a double crossing,
    or chance), and ones next to a tie (where the lanes may be equal, and the lead chance)."""
    decided = [s for s in sites if s.sign != 0]
    out = [s for prev, s, nxt in zip(decided, decided[1:], decided[2:]) if prev.sign == nxt.sign != s.sign]
    for prev, nxt in zip(sites, sites[1:]):
        out += [site for site, other in ((prev, nxt), (nxt, prev)) if site.sign != 0 and other.sign == 0]
    return [s for s in out if s.weak]


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
