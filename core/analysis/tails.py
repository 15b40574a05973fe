"""The tail rule: a latency percentile (p90, p99) is given only from enough calls to bound it, and says how many.

A percentile read off n calls is the order statistic near rank q·n. With few calls the largest one or two calls
decide it: a p99 from 59 calls is the slowest call, not the slowest in a hundred. MLPerf's loadgen states the
fewest queries from which its early-stopping estimate can bound a percentile at 99% confidence (its rules,
"Early stopping"): 64 for the 90th percentile and 662 for the 99th. Crossover withholds a tail below those counts
and says so, "p99 needs ≥ 662 calls (have 59)", wherever a tail is shown (the CLI, the window, the report,
`analyze`); files keep the calls behind each figure (`n_batches`), and a row that pools runs recomputes its tail
from the pooled calls (core/study/sweep.py with_batches).

Under a load the tail given is that estimate itself (`early_stopping`, core/analysis/serving_load.py): the
value the percentile is under at 99% confidence, not the plain np.percentile, which is under the true one about
half the time. Computed as its rule states, the estimate exists from 44 values for the 90th percentile and 459
for the 99th; the gate keeps MLPerf's larger counts, 64 and 662.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from .special import bdtr  # the binomial CDF (scipy.stats cost the window 0.45 s more to import)

# Percentile → the fewest calls from which it is given (MLPerf loadgen's early-stopping minimums).
MIN_CALLS = {90: 64, 99: 662}


def known(q: int, calls: int) -> bool:
    """Whether the q-th percentile of `calls` calls is given."""
    return calls >= MIN_CALLS[q]


def tail_or_nan(q: int, value: float, calls: int) -> float:
    """The percentile where it is given, else NaN (the one place a withheld tail becomes "unknown")."""
    return value if known(q, calls) and math.isfinite(value) else math.nan


def spread_shown(task: str, calls: int) -> bool:
    """Whether a p10–p90 spread is shown: a training step's is its batches' scatter, always; a served call's p90 is
    a tail, given by the tail rule only (its sidecar holds it null, results.summary_json)."""
    return task != "predict" or known(90, calls)


def withheld(q: int, calls: int, unit: str = "calls") -> str:
    """Why a tail is not given: "p99 needs ≥ 662 calls (have 59)" (or requests, under a load)."""
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
