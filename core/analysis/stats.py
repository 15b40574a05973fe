"""Timing statistics: robust median and percentiles, and a lane's run summarised from its records."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..records import BatchTiming, RunSummary

NAN = float("nan")


@dataclass(frozen=True)
class Stats:
    median: float
    p10: float
    p90: float
    mad: float  # median absolute deviation, unscaled
    n: int


def robust_stats(values: Sequence[float]) -> Stats:
    """Median, 10th/90th percentiles and MAD of the finite values; NaNs (n=0) when none."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return Stats(NAN, NAN, NAN, NAN, 0)
    med = float(np.median(v))
    p10, p90 = np.percentile(v, [10, 90])
    return Stats(med, float(p10), float(p90), float(np.median(np.abs(v - med))), int(v.size))


def summarize(records: Sequence[BatchTiming], *, run_id: str, lane: str, device: str, status: str,
              reason: str = "", flops_per_batch: int, wall_s: float,
              final_loss: float = NAN, final_accuracy: float = NAN) -> RunSummary:
    """A lane's run from its records; statistics are per training step and exclude warm-up."""
    steady = [r for r in records if not r.warmup]
    warm = [r for r in records if r.warmup]
    stats = robust_stats([r.ms / max(r.batches, 1) for r in steady])
    # Throughput from the same median as the step time, so samples/s can never contradict a verdict.
    per_step = float(np.median([r.samples / max(r.batches, 1) for r in steady])) if steady else NAN
    samples_per_s = per_step / (stats.median / 1000.0) if stats.median > 0 else NAN
    gflops = flops_per_batch / (stats.median / 1000.0) / 1e9 if stats.median > 0 else NAN
    return RunSummary(
        run_id=run_id, lane=lane, device=device, status=status, reason=reason,
        n_batches=sum(max(r.batches, 1) for r in steady), n_warmup=sum(max(r.batches, 1) for r in warm),
        median_ms=stats.median, p10_ms=stats.p10,
        p90_ms=stats.p90, mad_ms=stats.mad, samples_per_s=samples_per_s,
        flops_per_batch=flops_per_batch, gflops=gflops, warmup_s=sum(r.ms for r in warm) / 1000.0,
        wall_s=wall_s, final_loss=final_loss, final_accuracy=final_accuracy,
        batches_per_record=records[0].batches if records else 1)


def has_steady(s: RunSummary) -> bool:
    """The run has a steady-state median to compare."""
    return math.isfinite(s.median_ms) and s.median_ms > 0
