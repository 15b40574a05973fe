"""Sentences about serving under load (core/analysis/serving_load.py): what each lane held, and which answers
sooner at each rate. The CLI's run and sweep and `analyze` of a load sweep's CSV all say it in these words."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..analysis import tails
from ..analysis.serving_load import (BLOCKS, HOLD_SHARE, MIN_HOLD_S, LoadPoint, RateChoice, faster_at, highest_held,
                                     rates_of)
from ..config import BEHIND_S
from .numbers import fmt_count, fmt_dollars, fmt_num, fmt_rate, fmt_rates

LOAD_HEADER = ["lane", "asked /s", "answered /s", "requests", "median ms", "p90 ms", "p99 ms", "queued",
               "left waiting", "server busy", "held"]


def rate_words(rate: float) -> str:
    return fmt_rate(rate)


def tail_cell(q: int, value: float, n: int) -> str:
    return fmt_num(value) if tails.known(q, n) and math.isfinite(value) else "–"


# What a load's p90 and p99 are (core/analysis/tails.py early_stopping), said beside them.
UPPER_BOUND = "99%-confidence upper bound, MLPerf early stopping"


def held_cell(p: LoadPoint) -> str:
    if p.held:
        return "yes"
    if p.hold_unknown_why:
        return f"not judged: {p.schedule_s:.2g} s < {MIN_HOLD_S:g} s"
    if p.ended == "done" and not p.kept_pace:
        return "no: queue grew"
    return {"behind": "no: fell behind", "stopped": "stopped"}.get(p.ended, p.status or "–")


def load_row(p: LoadPoint) -> list[str]:
    pct = (lambda x: f"{100 * x:.0f}%" if math.isfinite(x) else "–")
    held = p.kept_up or not p.measured  # a queue that only grew has no latency to give (its length is the
    # schedule's); a stopped load has those of the requests it answered
    return [p.lane, fmt_num(p.rate, 3), fmt_num(p.achieved, 3), f"{p.answered:,}/{p.scheduled:,}",
            fmt_num(p.median_ms) if held else "–", tail_cell(90, p.p90_ms, p.answered) if held else "–",
            tail_cell(99, p.p99_ms, p.answered) if held else "–",
            pct(p.waited), f"{p.max_backlog:,}", pct(p.busy), held_cell(p)]


def schedule_words(p: LoadPoint) -> str:
    """"Poisson arrivals at 200 requests/s, a request of 1 sample, one request per call"."""
    server = ("one request per call" if p.max_batch == 1 else f"each call answers up to {p.max_batch} that queued")
    return (f"{'Poisson' if p.arrivals == 'poisson' else 'constant'} arrivals at {rate_words(p.rate)}, a request "
            f"of {fmt_count(p.batch_size, 'sample')}, {server}")


def point_words(p: LoadPoint) -> str:
    """One lane at one rate, with what its figures rest on."""
    if p.ended == "behind":
        return (f"{p.lane} does not hold {rate_words(p.rate)}: after {p.answered:,} of {p.scheduled:,} requests the "
                f"oldest waiting one had waited {BEHIND_S:g} s, so the load stopped (it answered "
                f"{fmt_num(p.achieved, 3)} per second; a call took {fmt_num(p.service_ms)} ms)")
    if p.ended == "done" and not p.kept_pace:
        return (f"{p.lane} does not hold {rate_words(p.rate)}: requests arrived at {fmt_num(p.offered, 3)} per second "
                f"and it answered {fmt_num(p.achieved, 3)} per second (under {100 * HOLD_SHARE:.0f}%), so its queue "
                f"only grew, to {p.max_backlog:,} waiting; its latencies (median {fmt_num(p.median_ms)} ms) are the "
                f"length of that queue, which a longer schedule makes longer, not a tail (a call took "
                f"{fmt_num(p.service_ms)} ms)")
    if p.answered == 0:
        return f"{p.lane} answered no request at {rate_words(p.rate)} ({p.status or 'not run'})"
    tail = [tails.withheld(q, p.answered, "requests") if not tails.known(q, p.answered) else f"p{q} {fmt_num(v)} ms"
            for q, v in ((90, p.p90_ms), (99, p.p99_ms))]
    given = sum(tails.known(q, p.answered) for q in (90, 99))
    bounds = ((UPPER_BOUND.replace("bound,", "bounds,") if given == 2 else UPPER_BOUND) + ", ") if given else ""
    held = (f"holds {rate_words(p.rate)} (over {fmt_num(p.schedule_s, 2)} s of arrivals)" if p.held
            else f"kept up with {rate_words(p.rate)}, not judged held ({p.hold_unknown_why})" if p.hold_unknown_why
            else f"was {p.ended or p.status} at {rate_words(p.rate)}")
    return (f"{p.lane} {held}: a request waits and is answered in {fmt_num(p.median_ms)} ms "
            f"at the median ({', '.join(tail)}; {bounds}from {fmt_count(p.answered, 'request')}), "
            f"{100 * p.waited:.0f}% of requests "
            f"queued behind another call, the server busy {100 * p.busy:.0f}% of the time "
            f"(a call {fmt_num(p.service_ms)} ms)")


def rate_lines(points: Sequence[LoadPoint], rate: float) -> list[str]:
    """One rate of a load in words: its schedule, each lane, and which answers sooner (the CLI's, analyze's and
    the report's lines alike)."""
    at = [p for p in points if p.rate == rate]
    if not at:
        return []
    compare = compare_words(points, rate)
    return [schedule_words(at[0])] + [point_words(p) for p in at] + ([compare] if compare else [])


def compare_words(points: Sequence[LoadPoint], rate: float) -> str:
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
        return (f"at {rate_words(rate)} {a.lane} and {b.lane} are equal within noise (medians {fmt_num(a.median_ms)} "
                f"and {fmt_num(b.median_ms)} ms; the medians of {BLOCKS} blocks of consecutive requests overlap)")
    win, lose = (a, b) if winner == a.lane else (b, a)
    if not lose.kept_up:
        return f"at {rate_words(rate)} {win.lane} serves and {lose.lane} falls behind"
    return (f"at {rate_words(rate)} {win.lane} answers sooner: median {fmt_num(win.median_ms)} ms against "
            f"{fmt_num(lose.median_ms)} ms ({fmt_num(lose.median_ms / win.median_ms, 2)}x), beyond the noise")


def sweep_lines(points: Sequence[LoadPoint], p99_ms: float | None = None,
                prices: Mapping[str, float] | None = None) -> list[str]:
    """A load sweep's answer: which lane is faster at each rate, where that changes (in requests per second), the
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
        line = f"{lane} holds up to {rate_words(best.rate)} of those asked"
        if p99_ms is not None:
            unknown = [p for p in points if p.lane == lane and p.held and p.p99_within(p99_ms) is None]
            if bounded is not None:
                line += f", and {rate_words(bounded.rate)} with its p99 at most {fmt_num(p99_ms)} ms " \
                        f"(p99 {fmt_num(bounded.p99_ms)} ms: {UPPER_BOUND}, " \
                        f"{fmt_count(bounded.answered, 'request')})"
            else:
                line += f", none of them with its p99 at most {fmt_num(p99_ms)} ms"
            if unknown:
                line += f" ({tails.withheld(99, min(p.answered for p in unknown), 'requests')} at some rates)"
        lines.append(line + _unjudged(points, lane))
    if p99_ms is not None and prices and len(lanes) >= 2:
        lines += _cheaper(points, lanes, p99_ms, prices)
    return lines


def _unjudged(points: Sequence[LoadPoint], lane: str) -> str:
    """"; not judged at 800 requests/s: its arrivals lasted 1.2 s; …" for the rates `lane` kept up with too
    briefly."""
    short = [p for p in points if p.lane == lane and p.hold_unknown_why]
    if not short:
        return ""
    return (f"; not judged at {fmt_rates(p.rate for p in short)}: {short[0].hold_unknown_why} "
            "(raise --requests)")


def _cheaper(points: Sequence[LoadPoint], lanes: Sequence[str], p99_ms: float,
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
    """"for 300 requests/s with p99 at most 50 ms: use cpu1 (it held 400 requests/s, p99 2.58 ms; …)"."""
    asked = f"for {rate_words(rate)}" + (f" with p99 at most {fmt_num(p99_ms)} ms" if p99_ms is not None else "")
    if choice.lane is None or choice.point is None:
        return f"{asked}: no lane: {choice.reason}"
    p = choice.point
    tail = (f"p99 {fmt_num(p.p99_ms)} ms: {UPPER_BOUND}, {fmt_count(p.answered, 'request')}"
            if math.isfinite(p.p99_ms) else tails.withheld(99, p.answered, "requests"))
    return (f"{asked}: use {choice.lane} (it held {rate_words(p.rate)}, median {fmt_num(p.median_ms)} ms, {tail}; "
            f"{choice.reason})")
