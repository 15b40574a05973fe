"""A lane's run summarised from its records: robust statistics per training step, the tail rule's fewest calls
(core/analysis/tails.py says the rest), and whether a summary has a steady median to compare."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .records import BatchTiming, RunSummary

NAN = float("nan")
# Percentile → the fewest calls from which it is given (MLPerf loadgen's early-stopping minimums).
MIN_CALLS = {90: 64, 99: 662}


def known(q: int, calls: int) -> bool:
    """Whether the q-th percentile of `calls` calls is given."""
    return calls >= MIN_CALLS[q]


def tail_or_nan(q: int, value: float, calls: int) -> float:
    """The percentile where it is given, else NaN (the one place a withheld tail becomes "unknown")."""
    return value if known(q, calls) and math.isfinite(value) else math.nan


@dataclass(frozen=True)
class Stats:
    median: float
    p10: float
    p90: float
    mad: float  # median absolute deviation, unscaled
    n: int
    p99: float = NAN  # the tail a server's slowest call in a hundred sees


def percentiles(values: Sequence[float] | np.ndarray, qs: Sequence[float]) -> list[float]:
    """The `qs` percentiles of the finite values, by linear interpolation between the closest ranks (NumPy's
    default, Hyndman-Fan type 7): of 1, 2, … 100 the 99th is 99.01. NaN for each when there are none."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    return [float(x) for x in np.percentile(v, list(qs))] if v.size else [NAN] * len(qs)


def robust_stats(values: Sequence[float]) -> Stats:
    """Median, 10th/90th percentiles and MAD of the finite values; NaNs (n=0) when none."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return Stats(NAN, NAN, NAN, NAN, 0)
    med = float(np.median(v))
    p10, p90, p99 = percentiles(v, (10, 90, 99))
    return Stats(med, p10, p90, float(np.median(np.abs(v - med))), int(v.size), p99)


def _steady(records: Sequence[BatchTiming]) -> list[BatchTiming]:
    """The steady steps: not warm-up, and not a first step after a turn came back that was slower than the
    median of the steady steps before it (the rule for lanes taking turns: a resume may find caches cold)."""
    out: list[BatchTiming] = []
    for r in records:
        if r.warmup:
            continue
        if r.resumed and (not out or r.ms / max(r.batches, 1) > float(np.median([x.ms / max(x.batches, 1)
                                                                                 for x in out]))):
            continue
        out.append(r)
    return out


def _training_s(trained: Sequence[BatchTiming]) -> float:
    """Wall seconds the steps took, gaps between them included (epoch ends, slow callbacks), but not the
    waits for a turn: the stretch is cut where a turn came back."""
    total, first, last = 0.0, None, None
    for r in trained:
        if first is None or r.resumed:
            if first is not None and last is not None:
                total += last.start_s + last.ms / 1000.0 - first.start_s
            first = r
        last = r
    if first is not None and last is not None:
        total += last.start_s + last.ms / 1000.0 - first.start_s
    return total if trained else NAN


def summarize(records: Sequence[BatchTiming], *, run_id: str, lane: str, device: str, status: str,
              reason: str = "", flops_per_batch: int, wall_s: float,
              final_loss: float = NAN, final_accuracy: float = NAN) -> RunSummary:
    """A lane's run from its records; statistics are per training step and exclude warm-up."""
    steady = _steady(records)
    warm = [r for r in records if r.warmup]
    stats = robust_stats([r.ms / max(r.batches, 1) for r in steady])
    # Throughput from the same median as the step time, so samples/s can never contradict a verdict.
    per_step = float(np.median([r.samples / max(r.batches, 1) for r in steady])) if steady else NAN
    samples_per_s = per_step / (stats.median / 1000.0) if stats.median > 0 else NAN
    gflops = flops_per_batch / (stats.median / 1000.0) / 1e9 if stats.median > 0 else NAN
    trained = [r for r in records if not r.warmup]  # a resumed step is training time, slow or not
    steps = sum(max(r.batches, 1) for r in trained)
    stretch_s = _training_s(trained)
    return RunSummary(
        run_id=run_id, lane=lane, device=device, status=status, reason=reason,
        n_batches=sum(max(r.batches, 1) for r in steady), n_warmup=sum(max(r.batches, 1) for r in warm),
        median_ms=stats.median, p10_ms=stats.p10,
        p90_ms=stats.p90, p99_ms=tail_or_nan(99, stats.p99, stats.n), mad_ms=stats.mad, samples_per_s=samples_per_s,
        flops_per_batch=flops_per_batch, gflops=gflops, warmup_s=sum(r.ms for r in warm) / 1000.0,
        wall_s=wall_s, final_loss=final_loss, final_accuracy=final_accuracy,
        batches_per_record=records[0].batches if records else 1,
        mean_wall_ms=1000.0 * stretch_s / steps if steps and stretch_s > 0 else NAN)


def has_steady(s: RunSummary) -> bool:
    """The run has a steady-state median to compare."""
    return math.isfinite(s.median_ms) and s.median_ms > 0
