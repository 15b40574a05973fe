"""Requests on their own clock: the open-loop arrivals of `--task predict --arrival-rate R`, in the lane process.

A closed loop (one client, one call after another: MLPerf's SingleStream) never queues, so it cannot show
what a server's users feel. Here requests arrive by a schedule made before the first one (Poisson arrivals
at R per second, or one every 1/R s), whatever the server is doing; the server answers one call at a time,
each call taking the oldest waiting request, or with `max_batch` > 1 up to that many waiting requests in one
call (dynamic batching, as TF Serving and Triton do). Each request is timed from its *intended* arrival to
its answer on the host, so the wait behind a slow call is charged to every request that queued behind it (no
coordinated omission: wrk2's rule).

A lane that cannot keep up stops its arrivals early rather than queueing forever: when the oldest waiting request
has waited BEHIND_S, the lane has fallen behind this rate (`fell_behind`, used by the lane and by the analysis
of its records alike).

`OpenLoop` is the schedule and the queue, on any clock: the lane drives it with perf_counter and the timer's
hooks around each call (core/lane/serving.py); tests drive it with a fake clock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..config import ARRIVALS, BEHIND_S, MAX_BATCH, MAX_RATE


def arrival_times(rate: float, count: int, kind: str = "poisson", seed: int = 0) -> np.ndarray:
    """`count` intended arrival times in seconds from the first (which is 0): Poisson arrivals (exponential
    gaps of mean 1/rate, seeded) or one every 1/rate s."""
    if not (0 < rate <= MAX_RATE) or count < 1 or kind not in ARRIVALS:
        raise ValueError(f"arrivals {kind!r} at {rate} per second, {count} requests")
    if kind == "constant":
        return np.arange(count, dtype=float) / rate
    gaps = np.random.default_rng(seed).exponential(1.0 / rate, count - 1)
    return np.concatenate(([0.0], np.cumsum(gaps)))


def arrival_server_words(max_batch: int) -> str:
    """What the lane's server does with requests that queued, as the sidecar and every view say it."""
    if max_batch == 1:
        return "one request per call, the rest wait in order"
    return f"dynamic batching: each call answers up to {max_batch} waiting requests at once"


def fell_behind(oldest_wait_s: float) -> bool:
    """Whether a lane whose oldest waiting request has waited this long has fallen behind the rate."""
    return oldest_wait_s >= BEHIND_S


@dataclass(frozen=True)
class Take:
    """What the next call answers: its requests' intended arrivals (seconds on the arrivals' clock), how many of
    them arrived while the server was still busy with an earlier call (they queued), and how many requests
    were still waiting behind them when the call began."""

    arrivals: tuple[float, ...]
    queued: int
    backlog: int


class OpenLoop:
    """The schedule and the queue. `take()` waits (with `sleep`) until a request has arrived if none is waiting,
    then returns the requests the next call answers, or None when the schedule is done, the lane fell behind, or
    `stop()` said so (then `ended` says which: "done", "behind", "stopped"). `answered(at)` marks the call done."""

    def __init__(self, offsets: np.ndarray, *, max_batch: int = 1, clock: Callable[[], float],
                 sleep: Callable[[float], None], stop: Callable[[], bool] = lambda: False,
                 poll_s: float = 0.05, spin_s: float = 0.0) -> None:
        if not 1 <= max_batch <= MAX_BATCH:
            raise ValueError(f"max batch {max_batch}: choose 1-{MAX_BATCH}")
        self.max_batch = max_batch
        # spin_s: the last stretch before a request's arrival is waited out by reading the clock, not sleeping (a
        # sleep wakes a fraction of a millisecond late, and every request that found the server idle would wait
        # that long for no reason a server has); 0 on a clock that only a sleep moves (a test's).
        self._clock, self._sleep, self._stop, self._poll, self._spin = clock, sleep, stop, poll_s, spin_s
        self.t0 = clock()
        self.arrivals = offsets + self.t0  # intended arrival of each request, on the clock
        self._next = 0  # the first request not yet answered
        self._free_at = self.t0  # when the server last finished a call
        self.ended = ""

    @property
    def scheduled(self) -> int:
        return len(self.arrivals)

    @property
    def answered_count(self) -> int:
        return self._next

    def take(self) -> Take | None:
        if self._next >= len(self.arrivals):
            self.ended = "done"
            return None
        first = float(self.arrivals[self._next])
        while True:  # idle until the next request arrives, in short sleeps so a stop is heard
            if self._stop():
                self.ended = "stopped"
                return None
            now = self._clock()
            if now >= first:
                break
            if first - now > self._spin:
                self._sleep(min(self._poll, first - now - self._spin))
        if fell_behind(now - first):
            self.ended = "behind"
            return None
        waiting = int(np.searchsorted(self.arrivals, now, side="right")) - self._next
        k = min(self.max_batch, waiting)
        taken = self.arrivals[self._next:self._next + k]
        queued = int(np.count_nonzero(taken < self._free_at))
        self._next += k
        return Take(tuple(float(a) for a in taken), queued, waiting - k)

    def answered(self, at: float) -> None:
        self._free_at = at


def mean_wait_pk(rate: float, service_s: np.ndarray) -> float:
    """The mean time a request waits in the queue of an M/G/1 server with these service times, by the
    Pollaczek–Khinchine formula: λ·E[S²] / (2(1 − ρ)), ρ = λ·E[S]. Infinite where ρ ≥ 1 (the queue grows)."""
    s = np.asarray(service_s, dtype=float)
    rho = rate * float(np.mean(s))
    if rho >= 1:
        return math.inf
    return rate * float(np.mean(s * s)) / (2 * (1 - rho))
