"""What a lane did at an arrival rate, requests on their own clock (predict --arrival-rate, core/lane/arrivals.py),
from its records.

One `RatePoint` per lane and rate, computed once from the calls' records (each call's requests, their waits
from their intended arrivals, the call's own time) and the summary's `arrivals_ended`; every view (the CLI's run and
sweep, `analyze` of a rate sweep's CSV) renders these fields and computes none of its own.

- **Latency** is each request's, intended arrival to answer on the host (wait + call): the median, and p90 and
  p99 as 99% upper bounds for requests that queue (core/analysis/tails.py queue_tail: the binomial bound with each
  request counted at its worth, for a queue's latencies are not independent), withheld where the requests are
  worth too few independent ones (`worth`; p99 from ≥ 662, and said). Whether a p99 is under a bound is decided
  on that bound.
- **Achieved rate**: requests answered over the time from the first intended arrival to the last answer.
- **Waited**: the share of requests that arrived while the server was busy with an earlier call (they queued).
- **Held**: every scheduled request answered without the oldest waiting BEHIND_S, at HOLD_SHARE of the rate the
  requests arrived at (or more): a lane whose queue only grew is reported as not holding the rate, never with
  a p99 of its growing queue, however short the schedule that ended before the wait reached BEHIND_S. A rate is
  judged held only from MIN_HOLD_S of arrivals or more (the schedule's requests over its rate): a shorter one
  that kept pace says neither (`hold_unknown_why`), for a queue that grows slowly has not yet grown.
- **Noise**: latencies at an arrival rate are correlated (one slow call delays every request behind it), so their
  count overstates certainty. The interval of a median is the spread of the medians of BLOCKS consecutive
  blocks of requests (lowest to highest), and two lanes whose intervals overlap at a rate are "inside the noise".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..config import BEHIND_S, MIN_HOLD_S, TrainSpec  # MIN_HOLD_S: the seconds of arrivals a held rate needs
from ..records import BatchTiming, RunSummary
from ..results import RunResult
from . import tails

HOLD_SHARE = 0.95  # a lane holds a rate when it answers at least this share of the rate requests arrived at
BLOCKS = 8  # consecutive blocks of requests whose medians bound a point's median
MIN_BLOCK = 16  # requests per block, at least: fewer requests give no interval


@dataclass(frozen=True)
class RatePoint:
    """One lane at one arrival rate."""

    lane: str
    rate: float  # requests per second asked (the schedule's mean rate)
    arrivals: str  # poisson | constant
    max_batch: int  # 1: one request per call; more: dynamic batching up to that many
    batch_size: int  # samples per request
    scheduled: int  # requests the schedule held
    answered: int  # requests answered (steady: after the warm-up calls)
    span_s: float  # first intended arrival to last answer
    arrivals_s: float  # first intended arrival to last: the schedule's own length
    median_ms: float
    p90_ms: float  # NaN where the tail rule withholds it
    p99_ms: float
    low_ms: float  # the median's interval: lowest and highest median of BLOCKS consecutive blocks (NaN: too few)
    high_ms: float
    service_ms: float  # median time of one call (its own clock, no wait)
    mean_wait_ms: float
    waited: float  # share of requests that arrived while the server was busy
    max_backlog: int  # most requests waiting behind a call as it began
    busy: float  # share of the span the server spent in calls (its utilisation)
    ended: str  # done | behind | stopped (RunSummary.arrivals_ended)
    status: str  # the lane's run status
    worth: float = math.nan  # the independent requests its requests are worth, as its tails' bounds count them

    @property
    def achieved(self) -> float:
        """Requests answered per second, measured over the span."""
        return self.answered / self.span_s if self.span_s > 0 else math.nan

    @property
    def offered(self) -> float:
        """Requests per second as they arrived (the schedule's own rate, which a Poisson schedule draws near `rate`)."""
        return (self.answered - 1) / self.arrivals_s if self.arrivals_s > 0 and self.answered > 1 else math.nan

    @property
    def kept_pace(self) -> bool:
        """It answered at HOLD_SHARE of the rate requests arrived at, or more: its queue did not only grow."""
        return self.achieved >= HOLD_SHARE * self.offered

    @property
    def measured(self) -> bool:
        """Its schedule ran to its end, or until the lane fell behind: a point that says whether the lane holds
        the rate (a stopped or failed one says neither)."""
        return self.ended in ("done", "behind") and self.answered > 0

    @property
    def schedule_s(self) -> float:
        """How long the requests kept arriving, in seconds: the schedule's requests over its rate."""
        return self.scheduled / self.rate if self.rate > 0 else math.nan

    @property
    def kept_up(self) -> bool:
        """It answered every scheduled request, without falling behind, at the rate they came (however briefly)."""
        return self.ended == "done" and self.answered >= self.scheduled and self.kept_pace

    @property
    def hold_unknown_why(self) -> str:
        """Why a point that kept up does not say it held the rate: its arrivals lasted under MIN_HOLD_S ("" where
        it says, either way)."""
        if not self.kept_up or not math.isfinite(self.schedule_s) or self.schedule_s >= MIN_HOLD_S:
            return ""
        return (f"its arrivals lasted {self.schedule_s:.2g} s; a rate is judged held from at least {MIN_HOLD_S:g} s, "
                f"{math.ceil(MIN_HOLD_S * self.rate):,} requests at this rate")

    @property
    def held(self) -> bool:
        """The lane held the rate: it kept up (kept_up) over at least MIN_HOLD_S of arrivals."""
        return self.kept_up and self.schedule_s >= MIN_HOLD_S

    def p99_within(self, bound_ms: float) -> bool | None:
        """Whether the p99 (its 99% upper bound, tails.queue_tail) is at most `bound_ms`: None where the p99 is
        withheld (requests worth too few independent ones); False where the lane did not hold the rate."""
        if not self.held:
            return False
        return None if math.isnan(self.p99_ms) else self.p99_ms <= bound_ms


def rate_point(lane: str, records: Iterable[BatchTiming], summary: RunSummary | None, train: TrainSpec) -> RatePoint:
    """A lane's RatePoint from its records at one rate (its steady calls: warm-up calls are no request's)."""
    calls = [r for r in records if r.requests > 0 and not r.warmup]
    latencies = np.array([lat for r in calls for lat in r.latencies_ms], dtype=float)
    waits = np.array([w for r in calls for w in r.waits_ms], dtype=float)
    n = len(latencies)
    if calls:
        arrived = [r.start_s - w / 1000.0 for r in calls for w in r.waits_ms]
        first = min(arrived)
        last = max(r.start_s + r.ms / 1000.0 for r in calls)
        span, arrivals_span = max(0.0, last - first), max(arrived) - first
    else:
        span = arrivals_span = 0.0
    median = float(np.median(latencies)) if n else math.nan
    memory = tails.queue_memory(latencies)  # once for both tails: the requests' worth is the run's, said once
    low, high = block_interval(latencies)
    ended = summary.arrivals_ended if summary is not None else ""
    # A lane that says it was done answered its whole schedule: what it answered is what the schedule held. The
    # settings alone would say otherwise for a file of an older default schedule (1,000 requests at any rate), and
    # for a file whose damaged rows were dropped on reading (core/files/run_files.py): neither fell behind.
    scheduled = n if ended == "done" and n else train.rate_requests
    return RatePoint(
        lane=lane, rate=float(train.arrival_rate or 0.0), arrivals=train.arrivals, max_batch=train.max_batch,
        batch_size=train.batch_size, scheduled=scheduled, answered=n, span_s=span,
        arrivals_s=arrivals_span, median_ms=median,
        p90_ms=tails.queue_tail(90, latencies, memory).value,
        p99_ms=tails.queue_tail(99, latencies, memory).value,
        low_ms=low, high_ms=high,
        service_ms=float(np.median([r.ms for r in calls])) if calls else math.nan,
        mean_wait_ms=float(waits.mean()) if n else math.nan,
        waited=sum(r.queued for r in calls) / n if n else math.nan,
        max_backlog=max((r.backlog for r in calls), default=0),
        busy=sum(r.ms for r in calls) / 1000.0 / span if span > 0 else math.nan,
        ended=ended,
        status=summary.status if summary is not None else "",
        worth=memory.worth)


def run_points(runs: Iterable[RunResult]) -> list[RatePoint]:
    """Every lane's RatePoint of every run at an arrival rate among `runs` (the one place a run becomes its points:
    the CLI, analyze, the report and the window all take them from here)."""
    return [rate_point(name, lane.records, lane.summary, run.config.train)
            for run in runs if run.config.train.arrival_rate is not None for name, lane in run.lanes.items()]


def block_interval(latencies: np.ndarray) -> tuple[float, float]:
    """The lowest and highest median of BLOCKS consecutive blocks of requests; NaN where a block would hold fewer
    than MIN_BLOCK requests."""
    if len(latencies) < BLOCKS * MIN_BLOCK:
        return math.nan, math.nan
    medians = [float(np.median(b)) for b in np.array_split(latencies, BLOCKS)]
    return min(medians), max(medians)


def faster_at(a: RatePoint, b: RatePoint) -> str | None:
    """Which lane answers requests at this rate sooner: a lane that kept up beats one that did not; of two that
    kept up (however briefly: `held` also asks for MIN_HOLD_S of arrivals), the lower median latency where their
    intervals do not overlap. None: both fell behind, or the difference is inside the noise (or not known)."""
    if not (a.measured and b.measured):
        return None
    if a.kept_up != b.kept_up:
        return a.lane if a.kept_up else b.lane
    if not a.kept_up:
        return None
    if any(math.isnan(v) for v in (a.low_ms, a.high_ms, b.low_ms, b.high_ms)):
        return None
    if a.high_ms < b.low_ms:
        return a.lane
    if b.high_ms < a.low_ms:
        return b.lane
    return None


def highest_held(points: Sequence[RatePoint], lane: str, bound_ms: float | None = None) -> RatePoint | None:
    """The highest rate `lane` held (with its p99 at most `bound_ms`, where given and known)."""
    ok = [p for p in points if p.lane == lane and p.held and (bound_ms is None or p.p99_within(bound_ms))]
    return max(ok, key=lambda p: p.rate, default=None)


@dataclass(frozen=True)
class RateChoice:
    """Which lane to use for a rate of requests (with its p99 under a bound, where given): the lane, the point that
    shows it holds that rate (a measured rate at least as high), or None and why not."""

    lane: str | None
    point: RatePoint | None
    reason: str = ""


def lane_for_rate(points: Sequence[RatePoint], rate: float, p99_ms: float | None = None,
                  prices: Mapping[str, float] | None = None) -> RateChoice:
    """The lane to use for `rate` requests per second: among lanes that held a measured rate at least that high
    (its p99 at most `p99_ms` there, where a bound is given and the p99 known), the cheapest per hour where every
    such lane is priced, else the one with the lowest median latency at the lowest such rate. Never beyond the
    rates measured: a rate above every held one has no lane, and says so."""
    if not (rate > 0 and math.isfinite(rate)):
        return RateChoice(None, None, f"{rate!r} requests per second is not a rate")
    able: dict[str, RatePoint] = {}
    for p in sorted(points, key=lambda p: p.rate):
        if p.rate >= rate and p.held and (p99_ms is None or p.p99_within(p99_ms)) and p.lane not in able:
            able[p.lane] = p
    if not able:
        top = max((p.rate for p in points if p.held), default=0.0)
        bound = f" with its p99 at most {p99_ms:g} ms" if p99_ms is not None else ""
        short = next((p for p in points if p.rate >= rate and p.hold_unknown_why), None)
        unjudged = (f" ({short.lane} at {short.rate:,.0f} requests/s not judged: {short.hold_unknown_why})"
                    if short else "")
        return RateChoice(None, None, f"none held {rate:,.0f} requests/s or more{bound} among the rates measured, "
                                      f"the highest any held being {top:,.0f} requests/s{unjudged}; the rule "
                                      "does not extrapolate")
    if prices and all(lane in prices for lane in able):
        lane = min(able, key=lambda lane: prices[lane])
        return RateChoice(lane, able[lane], "the cheapest per hour of the lanes that hold it")
    lane = min(able, key=lambda lane: (able[lane].rate, able[lane].median_ms))
    return RateChoice(lane, able[lane], "the lowest median latency of the lanes that hold it")


def rates_of(points: Sequence[RatePoint]) -> list[float]:
    return sorted({p.rate for p in points})


__all__ = ["BEHIND_S", "BLOCKS", "HOLD_SHARE", "MIN_HOLD_S", "RatePoint", "RateChoice",
           "lane_for_rate", "run_points", "block_interval", "faster_at", "highest_held", "rate_point", "rates_of"]
