"""Per-lane cost models: ms per step = a fixed cost + FLOPs / throughput, fitted robustly, and where two lines meet."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

NAN = float("nan")
_BISQUARE_C = 4.685  # 95% efficiency under Gaussian noise
# Real step times bend away from the straight line (caches, kernel choice) by 10-30%: that is
# model error, not an outlier, so only points far outside it lose weight.
_MIN_REL_SCALE = 0.15
_MIN_POINTS_TO_REJECT = 7  # with fewer, no point can be told apart from a bend in the curve
_MAX_START_POINTS = 60  # above this, the robust start looks at a seeded sample of pairs


@dataclass(frozen=True)
class CostFit:
    """ms = overhead_ms + flops / (gflops·1e9) · 1000; `ok`: slope > 0 and most points within 10%."""

    overhead_ms: float
    gflops: float  # inf when the times show no dependence on FLOPs
    n: int
    residuals: tuple[float, ...]  # (measured - predicted) / predicted, aligned with the input
    ok: bool

    @property
    def ms_per_flop(self) -> float:
        return 1e-6 / self.gflops

    def predict_ms(self, flops: float) -> float:
        return self.overhead_ms + flops * self.ms_per_flop


def _constrained_wls(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Minimise Σ w·(1 - x·c)² over c = (overhead, slope) with overhead ≥ 0, slope ≥ 0."""
    sw = np.sqrt(w)
    a, y = x * sw[:, None], sw
    c = np.linalg.lstsq(a, y, rcond=None)[0]
    if c[0] >= 0 and c[1] > 0:
        return c
    # The objective is a convex quadratic, so the constrained optimum lies on an axis.
    candidates = []
    for k in (0, 1):
        cand = np.zeros(2)
        cand[k] = max(float(a[:, k] @ y) / float(a[:, k] @ a[:, k]), 0.0)  # columns are 1/ms > 0
        candidates.append(cand)
    return min(candidates, key=lambda cand: float(np.sum((y - a @ cand) ** 2)))


def _robust_start(x: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Least-median-of-squares over lines through pairs: a start no single outlier can drag. Every pair's line at
    once (the 2×2 systems by Cramer's rule, the medians along rows): a bootstrap of a sweep fits 400 lines."""
    n = len(f)
    if n > _MAX_START_POINTS:
        rng = np.random.default_rng(0)
        i, j = np.array([rng.choice(n, 2, replace=False) for _ in range(2000)]).T
    else:
        i, j = np.triu_indices(n, 1)  # in itertools.combinations' order, so ties go to the same (first) pair
    best = _constrained_wls(x, np.ones(n))
    use = f[i] != f[j]
    i, j = i[use], j[use]
    (a_i, b_i), (a_j, b_j) = x[i].T, x[j].T
    det = a_i * b_j - a_j * b_i
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.column_stack([(b_j - b_i) / det, (a_i - a_j) / det])
    c = c[c[:, 1] > 0]
    if not len(c):
        return best
    c[:, 0] = np.maximum(c[:, 0], 0.0)
    scores = np.median(np.abs(1.0 - c @ x.T), axis=1)
    scores[~np.isfinite(scores)] = np.inf
    k = int(np.argmin(scores))
    return c[k].copy() if np.isfinite(scores[k]) else best


def _median(values: np.ndarray) -> float:
    """np.median of a short 1-D array, without its wrappers' cost (called for every step of every fit)."""
    s = np.sort(values)
    m = len(s) // 2
    return float(s[m]) if len(s) % 2 else float((s[m - 1] + s[m]) / 2)


def fit_cost_model(flops: Sequence[float], ms: Sequence[float]) -> CostFit | None:
    """Robust fit of fixed per-step cost plus FLOP throughput; None with under 2 distinct FLOP counts.

    Timings span orders of magnitude, so residuals are relative ((ms - pred)/ms): an
    ordinary fit would let the largest model decide everything. Bisquare IRLS from a
    least-median start lets one wild point fall out instead of bending the line.
    """
    f_all, t_all = np.asarray(flops, dtype=float), np.asarray(ms, dtype=float)
    keep = np.isfinite(f_all) & np.isfinite(t_all) & (f_all >= 0) & (t_all > 0)
    f, t = f_all[keep], t_all[keep]
    if np.unique(f).size < 2:
        return None
    scale = float(f.max())  # conditions the slope column: FLOPs reach 1e12 while ms are ~1
    x = np.column_stack([1.0 / t, f / scale / t])  # relative residual = 1 - x @ c
    if len(f) < _MIN_POINTS_TO_REJECT:
        c = _constrained_wls(x, np.ones(len(f)))
    else:
        c = _robust_start(x, f)
    for _ in range(100 if len(f) >= _MIN_POINTS_TO_REJECT else 0):
        r = 1.0 - x @ c
        s = max(1.4826 * _median(np.abs(r)), _MIN_REL_SCALE)
        u = r / (_BISQUARE_C * s)
        w = np.where(np.abs(u) < 1.0, (1.0 - u ** 2) ** 2, 0.0)
        kept = f[w > 0]
        if kept.size < 2 or kept.min() == kept.max():  # fewer than 2 distinct FLOP counts keep weight
            break
        new = _constrained_wls(x, w)
        done = bool(np.all(np.abs(new - c) <= 1e-15 + 1e-12 * np.abs(c)))  # np.allclose's test, without its cost
        c = new
        if done:
            break
    overhead, slope = float(c[0]), float(c[1]) / scale
    gflops = 1e-6 / slope if slope > 0 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        pred = overhead + f_all * slope
        resid = np.where(keep & (pred > 0), (t_all - pred) / pred, NAN)
    ok = slope > 0 and float(np.median(np.abs(resid[keep]))) <= 0.1
    return CostFit(overhead, gflops, int(keep.sum()), tuple(float(v) for v in resid), bool(ok))


def predicted_crossover(a: CostFit, b: CostFit) -> float | None:
    """FLOPs per step where the two fitted lines meet; None unless that is at positive FLOPs."""
    dslope = a.ms_per_flop - b.ms_per_flop
    if dslope == 0 or not math.isfinite(dslope):
        return None
    f = (b.overhead_ms - a.overhead_ms) / dslope
    return f if f > 0 and math.isfinite(f) else None


FIT_RESAMPLES = 200
# Where two lanes' fitted lines meet is said only where each line rests on this many points or more: a line of two
# passes through both, its residuals are zero, and a bootstrap of them would give an interval of no width.
MIN_POINTS_TO_MEET = 3


def crossover_interval(flops_a: Sequence[float], ms_a: Sequence[float], flops_b: Sequence[float],
                       ms_b: Sequence[float], resamples: int = FIT_RESAMPLES,
                       seed: int = 0) -> tuple[float, float, int] | None:
    """Where two lanes' fitted cost lines meet, as a 95% interval in FLOPs per step from a bootstrap of each fit's
    relative residuals (each lane's points made again from its fitted line and its own residuals, drawn with
    replacement, and fitted again), and how many resamples met at positive FLOPs; None where the fits do not meet.
    The fits' extrapolation: where the lines would meet, not where the lanes were measured to change places."""
    fit_a, fit_b = fit_cost_model(flops_a, ms_a), fit_cost_model(flops_b, ms_b)
    if fit_a is None or fit_b is None or predicted_crossover(fit_a, fit_b) is None:
        return None
    fits = (fit_a, fit_b)
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(resamples):
        again = []
        for fit, flops in zip(fits, (flops_a, flops_b)):
            f = np.asarray(flops, dtype=float)
            resid = np.array([r for r in fit.residuals if math.isfinite(r)])
            pred = fit.overhead_ms + f * fit.ms_per_flop
            ms = pred * (1 + rng.choice(resid, len(f))) if resid.size else pred
            again.append(fit_cost_model(f.tolist(), ms.tolist()))
        if again[0] is not None and again[1] is not None:
            meet = predicted_crossover(again[0], again[1])
            if meet is not None:
                found.append(meet)
    if len(found) < resamples // 2:
        return None  # in most resamples the lines do not meet: no interval to give
    lo, hi = np.percentile(found, [2.5, 97.5])
    return float(lo), float(hi), len(found)
