"""The tail rule: a latency percentile (p90, p99) is given only from enough calls to bound it, and says how many.

A percentile read off n calls is the order statistic near rank q·n. With few calls the largest one or two calls
decide it: a p99 from 59 calls is the slowest call, not the slowest in a hundred. MLPerf's loadgen states the
fewest queries from which its early-stopping estimate can bound a percentile at 99% confidence (its rules,
"Early stopping"): 64 for the 90th percentile and 662 for the 99th. Crossover withholds a tail below those counts
and says so, "p99 needs ≥ 662 calls (have 59)", wherever a tail is shown (the CLI, the window, the report,
`analyze`); files keep the calls behind each figure (`n_batches`), and a row that pools runs recomputes its tail
from the pooled calls (core/study/sweep.py with_batches).
"""
from __future__ import annotations

import math

# Percentile → the fewest calls from which it is given (MLPerf loadgen's early-stopping minimums).
MIN_CALLS = {90: 64, 99: 662}


def known(q: int, calls: int) -> bool:
    """Whether the q-th percentile of `calls` calls is given."""
    return calls >= MIN_CALLS[q]


def tail_or_nan(q: int, value: float, calls: int) -> float:
    """The percentile where it is given, else NaN (the one place a withheld tail becomes "unknown")."""
    return value if known(q, calls) and math.isfinite(value) else math.nan


def withheld(q: int, calls: int, unit: str = "calls") -> str:
    """Why a tail is not given: "p99 needs ≥ 662 calls (have 59)" (or requests, under a load)."""
    return f"p{q} needs ≥ {MIN_CALLS[q]:,} {unit} (have {calls:,})"


def calls_for_tail(q: int = 99) -> int:
    """How many steady calls a predict point runs for (unless its time limit ends it first): its p99's minimum."""
    return MIN_CALLS[q]
