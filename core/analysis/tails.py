"""The tail rule: a latency percentile (p90, p99) is given only from enough calls to bound it, and says how many.

A percentile read off n calls is the order statistic near rank q·n. With few calls the largest one or two calls
decide it: a p99 from 59 calls is the slowest call, not the slowest in a hundred. MLPerf's loadgen states the
fewest queries from which its early-stopping estimate can bound a percentile at 99% confidence (its rules,
"Early stopping"): 64 for the 90th percentile and 662 for the 99th. Crossover withholds a tail below those counts
and says so, "p99 needs ≥ 662 calls (have 59)", wherever a tail is shown (the CLI, the window, the report,
`analyze`); files keep the calls behind each figure (`n_batches`), and a row that pools runs recomputes its tail
from the pooled calls (core/study/sweep.py with_batches).

Calls made one at a time (a closed loop) are independent of one another: their tail is the plain percentile, an
estimate said as one ("p99 ≈ 3.20 ms, from 700 calls"). MLPerf's `early_stopping` bound counts its values as
independent too. At an arrival rate they are not: requests queue, and one slow call delays every request behind it, so
neighbouring latencies are alike and a run of them is worth fewer independent ones (simulated M/M/1 queues of
1,000 requests: the early-stopping "99% bound" was at or over the true p99 in 80% of runs at 50% utilisation,
27% at 80%, 9% at 90%; benchmarks/tail_coverage.py, docs/results/cpu-2026-12-07/tail-coverage.txt). A rate's tail
(`queue_tail`, core/analysis/serving_rates.py) is the same binomial bound with each request counted at its worth:
the run's memory (`queue_memory`: its integrated autocorrelation time by Sokal's windowed sum, the largest of the
latencies' own and of the flags "slower than the p90" and "slower than the p99"), and the requests worth n / that
many independent ones (the bound itself counts them at the memory's 99% upper end). The bound is withheld, and says
why, where they are worth fewer than MIN_WORTH: too short a run, or too dependent a one, for its memory to be
measured or the tail bounded. docs/guide/numbers.md says why this method.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..config import Task
# The fewest calls for each percentile, and whether a tail is given, live with the statistics a run is summarised by
# (core/run_stats.py: its summary and the run's results withhold a tail by them); import them from there.
from ..run_stats import MIN_CALLS, known
from .special import bdtr  # the binomial CDF (scipy.stats cost the window 0.45 s more to import)

# Percentile → the fewest independent requests a rate's requests must be worth for its bound. The p99 keeps MLPerf's
# 662. For a p90, 64 would do for independent values, but a memory measured from a run only 64 times as long as it
# is too uncertain: while choosing this rule, p90 bounds from 64 were under the true p90 in about half the runs that
# gave one at 80% utilisation and 1,000 requests; from 200 they cover as the p99's do (benchmarks/tail_coverage.py).
MIN_WORTH = {90: 200, 99: 662}
MEMORY_WINDOW = 5.0  # Sokal's window: lags are summed up to MEMORY_WINDOW times the memory summed so far (emcee's c)
MEMORY_UPPER_Z = 2.326  # the one-sided 99% normal point: the memory's upper end, as the bound's own 99%


def spread_shown(task: Task, calls: int) -> bool:
    """Whether a p10–p90 spread is shown: a training step's is its batches' scatter, always; a served call's p90 is
    a tail, given by the tail rule only (its sidecar holds it null, results.summary_json)."""
    return task != Task.PREDICT or known(90, calls)


def withheld(q: int, calls: int, unit: str = "calls") -> str:
    """Why a tail is not given: "p99 needs ≥ 662 calls (have 59)" (or requests, at an arrival rate)."""
    return f"p{q} needs ≥ {MIN_CALLS[q]:,} {unit} (have {calls:,})"


def calls_for_tail(q: int = 99) -> int:
    """How many steady calls a predict point runs for (unless its time limit ends it first): its p99's minimum."""
    return MIN_CALLS[q]


def early_stopping(q: float, values: Iterable[float], confidence: float = 0.99) -> float:
    """MLPerf loadgen's early-stopping estimate of the q-th percentile of `values`: an upper bound on it at
    `confidence` (MLPerf Inference rules, "Early stopping"; loadgen's early_stopping.cc).

    Of n values sorted, the estimate is the k-th smallest (1-based), k the smallest integer for which a
    Binomial(n, q/100) count, how many of n calls fall at or under the true percentile, is below k with
    probability at least `confidence` (bdtr(k - 1, n, q/100) >= confidence). The true percentile is then
    above the estimate only where k or more of the n calls fell under it, which happens with probability at most
    1 - confidence: the estimate is at or above the true percentile in at least `confidence` of samples, where
    np.percentile is below it about half the time. NaN where no such k ≤ n exists (too few values: at 0.99,
    fewer than 44 for the 90th percentile and fewer than 459 for the 99th, which MIN_CALLS' 64 and 662 exceed).
    Values that are not finite are left out."""
    xs = np.sort(np.asarray([float(v) for v in values], dtype=float))
    xs = xs[np.isfinite(xs)]
    n = len(xs)
    if n == 0 or not (0.0 < q < 100.0) or not (0.0 < confidence < 1.0):
        return math.nan
    enough = np.flatnonzero(bdtr(np.arange(n), n, q / 100.0) >= confidence)  # index i: k = i + 1
    return float(xs[enough[0]]) if len(enough) else math.nan


def fewest_for_early_stopping(q: float, confidence: float = 0.99) -> int:
    """The fewest values from which early_stopping gives an estimate: the smallest n with q/100 ** n at most
    1 - confidence (k = n, the largest value, bounds the percentile)."""
    return math.ceil(math.log(1.0 - confidence) / math.log(q / 100.0) - 1e-12)


@dataclass(frozen=True)
class Memory:
    """Over how many consecutive requests a rate's latencies stay alike, and the independent requests they are
    worth."""

    length: float  # the integrated autocorrelation time in requests (1: independent; inf: longer than can be measured)
    upper: float  # its 99% upper end, by Sokal's variance of the windowed sum: what the bound counts a request at
    requests: int

    @property
    def worth(self) -> float:
        """How many independent requests they are worth: requests / length (what a tail's gate asks of them)."""
        return self.requests / self.length

    def enough(self, q: int) -> bool:
        return self.requests >= MIN_CALLS[q] and self.worth >= MIN_WORTH[q]


def _autocorrelation(series: np.ndarray) -> np.ndarray:
    """Each row's autocorrelation at lags 0..n-1, by one batched FFT (a rate's 100,000 requests take milliseconds);
    zeros for a row that does not vary."""
    from scipy import fft  # imported when first used, as core/analysis/special.py does; 3x numpy's FFT here
    n = series.shape[1]
    size = fft.next_fast_len(2 * n - 1, real=True)  # zero-padded past 2n - 1: no lag wraps around onto another
    f = np.asarray(fft.rfft(series - series.mean(axis=1, keepdims=True), size, axis=1))
    acov = np.asarray(fft.irfft(np.real(f) ** 2 + np.imag(f) ** 2, size, axis=1))[:, :n]
    var = acov[:, :1]
    return np.divide(acov, var, out=np.zeros_like(acov), where=var > 0)


def _windowed(rho: np.ndarray) -> tuple[float, int]:
    """Sokal's integrated autocorrelation time from autocorrelations `rho`, and the window it summed to (inf where no
    window up to the series' own length is MEMORY_WINDOW times the sum: the series is too short for its memory)."""
    sums = 2.0 * np.cumsum(rho) - 1.0  # 1 + 2 * (rho_1 + ... + rho_m) at each window m
    inside = np.flatnonzero(np.arange(len(rho)) >= MEMORY_WINDOW * sums)
    if not len(inside):
        return math.inf, len(rho)
    m = int(inside[0])
    return max(1.0, float(sums[m])), m  # a series cannot be worth more requests than it has


def _in_order(values: Iterable[float]) -> np.ndarray:
    """The finite values, in their order (a rate's 100,000 latencies as an array are not copied value by value)."""
    xs = np.asarray(values if isinstance(values, (np.ndarray, list, tuple)) else list(values), dtype=float)
    return xs[np.isfinite(xs)]


def queue_memory(values: Iterable[float]) -> Memory:
    """A rate's memory, from its latencies in the order the requests arrived: the largest of the integrated
    autocorrelation times of the latencies, and of the flags "slower than the run's p90" and "slower than its
    p99" (a tail's exceedances come in bursts longer than the latencies' own memory shows), with its 99% upper end
    (Sokal's variance of the windowed sum, 2(2m + 1)/n relative, for a window of m lags)."""
    xs = _in_order(values)
    n = len(xs)
    if n < 2:
        return Memory(math.inf, math.inf, n)
    series = np.vstack([xs] + [(xs > np.percentile(xs, q)).astype(float) for q in (90, 99)])
    length, window = max((_windowed(rho) for rho in _autocorrelation(series)), key=lambda lw: lw[0])
    if not math.isfinite(length):
        return Memory(math.inf, math.inf, n)
    return Memory(length, length * (1.0 + MEMORY_UPPER_Z * math.sqrt(2.0 * (2 * window + 1) / n)), n)


def counted_bound(q: float, values: Iterable[float], per_independent: float = 1.0, confidence: float = 0.99) -> float:
    """early_stopping's bound with every `per_independent` values counted as one independent value: the value with
    K of the values above it, K the most for which a Binomial(n / per_independent, 1 - q/100) count is at most
    K / per_independent with probability at most 1 - confidence (continuous in both, by the regularized incomplete
    beta function). At per_independent 1 it is early_stopping's order statistic. NaN where none is (too few)."""
    xs = np.sort(_in_order(values))
    n = len(xs)
    if n == 0 or not (0.0 < q < 100.0) or not (0.0 < confidence < 1.0) or not per_independent >= 1.0:
        return math.nan
    from scipy.special import betainc  # imported when first used, as core/analysis/special.py does
    p = 1.0 - q / 100.0
    worth = n / per_independent
    above = np.arange(min(n - 1, math.floor(p * n) + 1) + 1)  # a bound has at most about p * n values above it
    k = above / per_independent
    ok = k < worth  # a count of `worth` trials is at most k >= worth with certainty
    at_most = np.ones(len(above))
    at_most[ok] = betainc(worth - k[ok], k[ok] + 1.0, 1.0 - p)  # P(Binomial(worth, p) <= k)
    enough = np.flatnonzero(at_most <= 1.0 - confidence)
    return float(xs[n - 1 - enough[-1]]) if len(enough) else math.nan


@dataclass(frozen=True)
class QueueTail:
    """A rate's q-th percentile latency: a 99% upper bound (NaN where withheld) and what it rests on."""

    q: int
    value: float
    memory: Memory


def queue_tail(q: int, values: Iterable[float], memory: Memory | None = None) -> QueueTail:
    """The q-th percentile of a rate's latencies (in arrival order), bounded at 99% confidence for dependent
    requests: counted_bound with every `memory.upper` requests counted as one (queue_memory); NaN where the
    requests are fewer than MIN_CALLS or worth fewer than MIN_WORTH independent ones. Gating on the memory's own
    estimate and bounding with its upper end, the bound widens as a run nears the gate, to the slowest request
    there, instead of jumping from withheld to a tight figure that only the calmest short runs would reach."""
    xs = _in_order(values)
    mem = memory if memory is not None else queue_memory(xs)
    if not mem.enough(q):
        return QueueTail(q, math.nan, mem)
    return QueueTail(q, counted_bound(q, xs, mem.upper), mem)
