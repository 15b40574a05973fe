"""Sentences about serving at arrival rates (core/analysis/serving_rates.py): what each lane held, and which answers
sooner at each rate. The CLI's run and sweep and `analyze` of a rate sweep's CSV all say it in these words."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..analysis import tails
from .. import run_stats
from ..analysis.serving_rates import (BLOCKS, HOLD_SHARE, MIN_HOLD_S, RatePoint, RateChoice, faster_at, highest_held,
                                     rates_of)
from ..config import BEHIND_S
from .numbers import fmt_count, fmt_dollars, fmt_num, fmt_rate, fmt_rates

RATE_HEADER = ["lane", "asked /s", "answered /s", "requests", "median ms", "p90 ≤ ms", "p99 ≤ ms", "queued",
               "left waiting", "server busy", "held"]  # a rate's tails are bounds (bound_words)


def rate_words(rate: float) -> str:
    return fmt_rate(rate)


def tail_cell(value: float) -> str:
    """A rate's tail in its table: the bound, or "–" where it is withheld (its sentence says why)."""
    return fmt_num(value) if math.isfinite(value) else "–"


def withheld_words(q: int, requests: int, worth: float) -> str:
    """Why a rate's tail is withheld: too few requests ("p99 needs ≥ 662 requests (have 300)"), or requests that
    queued and are worth too few independent ones ("p99 needs requests worth ≥ 662 independent ones (from 1,000
    requests, worth 140)")."""
    if requests < run_stats.MIN_CALLS[q] or not math.isfinite(worth):
        return tails.withheld(q, requests, "requests")
    if worth >= tails.MIN_WORTH[q]:  # the gate passed, but its memory's upper end leaves no order statistic a bound
        return (f"p{q} withheld: their memory is too uncertain for even the slowest of "
                f"{fmt_count(requests, 'request')} (worth {worth:,.0f} independent ones) to be a 99% bound")
    return (f"p{q} needs requests worth ≥ {tails.MIN_WORTH[q]:,} independent ones "
            f"(from {fmt_count(requests, 'request')}, worth {worth:,.0f})")


def bound_words(q: int, value: float, requests: int, worth: float) -> str:
    """A rate's tail, the same way wherever it is said: "p99 ≤ 145 ms, a 99% bound from 10,000 requests worth 1,200
    independent ones" (core/analysis/tails.py queue_tail), or why it is withheld."""
    if not math.isfinite(value):
        return withheld_words(q, requests, worth)
    return f"p{q} ≤ {fmt_num(value)} ms, a 99% bound {_basis(requests, worth)}"


def _basis(requests: int, worth: float) -> str:
    return f"from {fmt_count(requests, 'request')} worth {worth:,.0f} independent ones"


def tails_words(p: RatePoint) -> str:
    """A point's p90 and p99, what they rest on said once: "p90 ≤ 2.5 ms and p99 ≤ 3.4 ms, 99% bounds from 10,000
    requests worth 1,200 independent ones"; "p90 ≤ 4.8 ms, a 99% bound from 1,000 requests worth 213 independent
    ones; p99 needs ≥ 662 independent ones"; "p90 and p99 need requests worth ≥ 200 and ≥ 662 independent ones
    (from 3,000 requests, worth 51)"."""
    if all(math.isfinite(v) for v in (p.p90_ms, p.p99_ms)):
        return (f"p90 ≤ {fmt_num(p.p90_ms)} ms and p99 ≤ {fmt_num(p.p99_ms)} ms, 99% bounds "
                f"{_basis(p.answered, p.worth)}")
    if math.isfinite(p.p90_ms) and _short_of_worth(p, 99):
        return (f"{bound_words(90, p.p90_ms, p.answered, p.worth)}; "
                f"p99 needs ≥ {tails.MIN_WORTH[99]:,} independent ones")
    if _short_of_worth(p, 90) and _short_of_worth(p, 99):
        return (f"p90 and p99 need requests worth ≥ {tails.MIN_WORTH[90]:,} and ≥ {tails.MIN_WORTH[99]:,} "
                f"independent ones (from {fmt_count(p.answered, 'request')}, worth {p.worth:,.0f})")
    said = [bound_words(q, v, p.answered, p.worth) for q, v in ((90, p.p90_ms), (99, p.p99_ms))]
    counted = any(math.isfinite(v) or (p.answered >= run_stats.MIN_CALLS[q] and math.isfinite(p.worth))
                  for q, v in ((90, p.p90_ms), (99, p.p99_ms)))  # a phrase above says the requests it rests on
    return "; ".join(said + ([] if counted else [f"from {fmt_count(p.answered, 'request')}"]))


def _short_of_worth(p: RatePoint, q: int) -> bool:
    """The tail is withheld for its requests' worth (they are enough in count)."""
    return (math.isnan({90: p.p90_ms, 99: p.p99_ms}[q]) and p.answered >= run_stats.MIN_CALLS[q]
            and math.isfinite(p.worth) and p.worth < tails.MIN_WORTH[q])


def held_cell(p: RatePoint) -> str:
    if p.held:
        return "yes"
    if p.hold_unknown_why:
        return f"not judged: {p.schedule_s:.2g} s < {MIN_HOLD_S:g} s"
    if p.ended == "done" and not p.kept_pace:
        return "no: queue grew"
    return {"behind": "no: fell behind", "stopped": "stopped"}.get(p.ended, p.status or "–")


def rate_row(p: RatePoint) -> list[str]:
    pct = (lambda x: f"{100 * x:.0f}%" if math.isfinite(x) else "–")
    held = p.kept_up or not p.measured  # a queue that only grew has no latency to give (its length is the
    # schedule's); a stopped schedule has those of the requests it answered
    return [p.lane, fmt_num(p.rate, 3), fmt_num(p.achieved, 3), f"{p.answered:,}/{p.scheduled:,}",
            fmt_num(p.median_ms) if held else "–", tail_cell(p.p90_ms) if held else "–",
            tail_cell(p.p99_ms) if held else "–",
            pct(p.waited), f"{p.max_backlog:,}", pct(p.busy), held_cell(p)]


def schedule_words(p: RatePoint) -> str:
    """"Poisson arrivals at 200 requests/s, a request of 1 sample, one request per call"."""
    server = ("one request per call" if p.max_batch == 1 else f"each call answers up to {p.max_batch} that queued")
    return (f"{'Poisson' if p.arrivals == 'poisson' else 'constant'} arrivals at {rate_words(p.rate)}, a request "
            f"of {fmt_count(p.batch_size, 'sample')}, {server}")


def point_words(p: RatePoint) -> str:
    """One lane at one rate, with what its figures rest on."""
    if p.ended == "behind":
        return (f"{p.lane} does not hold {rate_words(p.rate)}: after {p.answered:,} of {p.scheduled:,} requests the "
                f"oldest waiting one had waited {BEHIND_S:g} s, so its arrivals stopped (it answered "
                f"{fmt_num(p.achieved, 3)} per second; a call took {fmt_num(p.service_ms)} ms)")
    if p.ended == "done" and not p.kept_pace:
        return (f"{p.lane} does not hold {rate_words(p.rate)}: requests arrived at {fmt_num(p.offered, 3)} per second "
                f"and it answered {fmt_num(p.achieved, 3)} per second (under {100 * HOLD_SHARE:.0f}%), so its queue "
                f"only grew, to {p.max_backlog:,} waiting; its latencies (median {fmt_num(p.median_ms)} ms) are the "
                f"length of that queue, which a longer schedule makes longer, not a tail (a call took "
                f"{fmt_num(p.service_ms)} ms)")
    if p.answered == 0:
        return f"{p.lane} answered no request at {rate_words(p.rate)} ({p.status or 'not run'})"
    held = (f"holds {rate_words(p.rate)} (over {fmt_num(p.schedule_s, 2)} s of arrivals)" if p.held
            else f"kept up with {rate_words(p.rate)}, not judged held ({p.hold_unknown_why})" if p.hold_unknown_why
            else f"was {p.ended or p.status} at {rate_words(p.rate)}")
    return (f"{p.lane} {held}: a request waits and is answered in {fmt_num(p.median_ms)} ms "
            f"at the median ({tails_words(p)}), "
            f"{100 * p.waited:.0f}% of requests "
            f"queued behind another call, the server busy {100 * p.busy:.0f}% of the time "
            f"(a call {fmt_num(p.service_ms)} ms)")


def rate_lines(points: Sequence[RatePoint], rate: float) -> list[str]:
    """One arrival rate in words: its schedule, each lane, and which answers sooner (the CLI's, analyze's and
    the report's lines alike)."""
    at = [p for p in points if p.rate == rate]
    if not at:
        return []
    compare = compare_words(points, rate)
    return [schedule_words(at[0])] + [point_words(p) for p in at] + ([compare] if compare else [])


def compare_words(points: Sequence[RatePoint], rate: float) -> str:
    """Which lane answers sooner at `rate` (two lanes), by held rate first, then median latency beyond the noise."""
    at = [p for p in points if p.rate == rate]
    if len(at) != 2:
        return ""
    a, b = at
    unmeasured = [p.lane for p in at if not p.measured]
    if unmeasured:
        return (f"at {rate_words(rate)} not compared: {' and '.join(unmeasured)} "
                f"{'was' if len(unmeasured) == 1 else 'were'} stopped before {'its' if len(unmeasured) == 1 else 'their'} "
                "schedule ended")
    winner = faster_at(a, b)
    if winner is None:
        if not a.kept_up and not b.kept_up:
            return f"at {rate_words(rate)} neither lane keeps up"
        if math.isnan(a.low_ms) or math.isnan(b.low_ms):
            return (f"at {rate_words(rate)} too few requests to compare ({BLOCKS} blocks of consecutive requests "
                    "bound each median)")
        # Overlapping intervals are no evidence of a difference, not a test of equality: said as no answer.
        return (f"at {rate_words(rate)} no answer for {a.lane} and {b.lane}: their medians, {fmt_num(a.median_ms)} "
                f"and {fmt_num(b.median_ms)} ms, are inside the noise (the medians of {BLOCKS} blocks of consecutive "
                "requests overlap)")
    win, lose = (a, b) if winner == a.lane else (b, a)
    if not lose.kept_up:
        return f"at {rate_words(rate)} {win.lane} serves and {lose.lane} falls behind"
    return (f"at {rate_words(rate)} {win.lane} answers sooner: median {fmt_num(win.median_ms)} ms against "
            f"{fmt_num(lose.median_ms)} ms ({fmt_num(lose.median_ms / win.median_ms, 2)}x), beyond the noise")


def sweep_lines(points: Sequence[RatePoint], p99_ms: float | None = None,
                prices: Mapping[str, float] | None = None) -> list[str]:
    """A rate sweep's answer: which lane is faster at each rate, where that changes (in requests per second), the
    highest rate each lane holds (with its p99 under the bound, where given), and the cheaper one where priced."""
    lanes = list(dict.fromkeys(p.lane for p in points))
    rates = rates_of(points)
    lines: list[str] = []
    winners: list[tuple[float, str | None]] = []
    if len(lanes) == 2:
        for rate in rates:
            at = {p.lane: p for p in points if p.rate == rate}
            if len(at) == 2:
                winners.append((rate, faster_at(at[lanes[0]], at[lanes[1]])))
        known = [(r, w) for r, w in winners if w is not None]
        changes = [(r0, w0, r1, w1) for (r0, w0), (r1, w1) in zip(known, known[1:]) if w0 != w1]
        for r0, w0, r1, w1 in changes:
            lines.append(f"the faster lane changes between {rate_words(r0)} ({w0}) and {rate_words(r1)} ({w1})")
        if known and not changes:
            lines.append(f"{known[0][1]} answers sooner at every rate where the two differ beyond the noise "
                         f"({fmt_rates(r for r, _ in known)})")
        ties = [r for r, w in winners if w is None]
        if ties:
            lines.append(f"no faster lane at {fmt_rates(ties)} (inside the noise, "
                         "too few requests, neither keeps up, or a lane stopped before its schedule ended)")
    for lane in lanes:
        best = highest_held(points, lane)
        bounded = highest_held(points, lane, p99_ms) if p99_ms is not None else None
        if best is None:
            if not any(p.measured for p in points if p.lane == lane):
                lines.append(f"{lane} was not measured to the end of any rate (stopped or failed)")
            else:
                lines.append(f"{lane} held none of the rates asked ({', '.join(fmt_num(r, 3) for r in rates)} "
                             f"requests/s){_unjudged(points, lane)}")
            continue
        # "Holds" is the rule's word for keeping pace (the queue did not grow without end), not for answering
        # quickly: the latency there is said beside it, so that "holds 1,600 requests/s" at a 145 ms median with
        # hundreds waiting is not read as "copes".
        line = (f"{lane} holds up to {rate_words(best.rate)} of those asked (keeps pace with them: its queue did not "
                f"grow without end; there a request took {fmt_num(best.median_ms)} ms at the median, up to "
                f"{fmt_count(best.max_backlog, 'request')} waiting)")
        if p99_ms is not None:
            unknown = [p for p in points if p.lane == lane and p.held and p.p99_within(p99_ms) is None]
            if bounded is not None:
                line += f", and {rate_words(bounded.rate)} with its p99 at most {fmt_num(p99_ms)} ms " \
                        f"({bound_words(99, bounded.p99_ms, bounded.answered, bounded.worth)})"
            else:
                line += f", none of them with its p99 at most {fmt_num(p99_ms)} ms"
            if unknown:
                least = min(unknown, key=lambda p: (p.answered, p.worth))
                line += f" ({withheld_words(99, least.answered, least.worth)} at some rates)"
        lines.append(line + _unjudged(points, lane))
    if p99_ms is not None and prices and len(lanes) >= 2:
        lines += _cheaper(points, lanes, p99_ms, prices)
    return lines


def _unjudged(points: Sequence[RatePoint], lane: str) -> str:
    """"; not judged at 800 requests/s: its arrivals lasted 1.2 s; …" for the rates `lane` kept up with too
    briefly."""
    short = [p for p in points if p.lane == lane and p.hold_unknown_why]
    if not short:
        return ""
    return (f"; not judged at {fmt_rates(p.rate for p in short)}: {short[0].hold_unknown_why} "
            "(raise --requests)")


def _cheaper(points: Sequence[RatePoint], lanes: Sequence[str], p99_ms: float,
             prices: Mapping[str, float]) -> list[str]:
    """At each rate that two priced lanes both serve within the p99 bound: which one costs less per million
    requests (its price per hour over the requests an hour at that rate)."""
    lines = []
    for rate in rates_of(points):
        ok = [p for p in points if p.rate == rate and p.lane in prices and p.p99_within(p99_ms)]
        if len(ok) >= 2:
            cost = {p.lane: prices[p.lane] / (3600 * p.rate) * 1e6 for p in ok}
            cheap = min(cost, key=lambda lane: cost[lane])
            lines.append(f"at {rate_words(rate)} within p99 {fmt_num(p99_ms)} ms, {cheap} serves more cheaply: "
                         + ", ".join(f"{lane} {fmt_dollars(c)} per million requests" for lane, c in cost.items()))
    return lines


def choice_words(choice: RateChoice, rate: float, p99_ms: float | None = None) -> str:
    """"for 300 requests/s with p99 at most 50 ms: use cpu1 (it held 400 requests/s, median 1.2 ms, p99 ≤ 2.58 ms,
    a 99% bound from …; …)"."""
    asked = f"for {rate_words(rate)}" + (f" with p99 at most {fmt_num(p99_ms)} ms" if p99_ms is not None else "")
    if choice.lane is None or choice.point is None:
        return f"{asked}: no lane: {choice.reason}"
    p = choice.point
    tail = bound_words(99, p.p99_ms, p.answered, p.worth)
    return (f"{asked}: use {choice.lane} (it held {rate_words(p.rate)}, median {fmt_num(p.median_ms)} ms, {tail}; "
            f"{choice.reason})")
