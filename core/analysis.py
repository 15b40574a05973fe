"""Timing statistics, per-lane cost models and CPU/GPU crossover detection (pure numpy)."""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from crossover_lab.core.records import BatchTiming, RunSummary

NAN = float("nan")
_BISQUARE_C = 4.685  # 95% efficiency under Gaussian noise
# Real step times bend away from the straight line (caches, kernel choice) by 10-30%: that is
# model error, not an outlier, so only points far outside it lose weight.
_MIN_REL_SCALE = 0.15
_MIN_POINTS_TO_REJECT = 7  # with fewer, no point can be told apart from a bend in the curve
_MAX_START_POINTS = 60  # above this, the robust start looks at a seeded sample of pairs


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


# ---------------------------------------------------------------- cost model

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
    """Least-median-of-squares over lines through pairs: a start no single outlier can drag."""
    n = len(f)
    pairs: Any = itertools.combinations(range(n), 2)
    if n > _MAX_START_POINTS:
        rng = np.random.default_rng(0)
        pairs = (tuple(rng.choice(n, 2, replace=False)) for _ in range(2000))
    best, best_score = _constrained_wls(x, np.ones(n)), math.inf
    for i, j in pairs:
        if f[i] == f[j]:
            continue
        c = np.linalg.solve(x[[i, j]], np.ones(2))
        if not c[1] > 0:
            continue
        c[0] = max(c[0], 0.0)
        score = float(np.median(np.abs(1.0 - x @ c)))
        if score < best_score:
            best, best_score = c, score
    return best


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
        s = max(1.4826 * float(np.median(np.abs(r))), _MIN_REL_SCALE)
        u = r / (_BISQUARE_C * s)
        w = np.where(np.abs(u) < 1.0, (1.0 - u ** 2) ** 2, 0.0)
        if np.unique(f[w > 0]).size < 2:
            break
        new = _constrained_wls(x, w)
        done = np.allclose(new, c, rtol=1e-12, atol=1e-15)
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


# ---------------------------------------------------------------- measured crossovers

@dataclass(frozen=True)
class SweepPoint:
    lane: str
    width: int
    flops_per_batch: float
    median_ms: float
    p10_ms: float = NAN
    p90_ms: float = NAN
    device: str = ""
    batch_size: int = 0
    n_batches: int = 0
    floor_ms: float = NAN  # the on-device loop's ms per step (sweep --floor), NaN when not measured


@dataclass(frozen=True)
class Crossover:
    lanes: tuple[str, str]
    width: float
    width_lo: float
    width_hi: float
    flops_per_batch: float
    faster_above: str


_Lanes = dict[str, dict[int, SweepPoint]]  # lane -> width -> point


def by_lane(points: Sequence[SweepPoint]) -> _Lanes:
    lanes: _Lanes = {}
    for p in points:
        if math.isfinite(p.median_ms) and p.median_ms > 0 and p.width > 0:
            lanes.setdefault(p.lane, {})[p.width] = p  # a re-measured width replaces the old one
    return lanes


def _log_band(p: SweepPoint) -> tuple[float, float, float]:
    """log of (low, median, high) ms; no spread where the percentiles are missing."""
    med = math.log(p.median_ms)
    lo = math.log(p.p10_ms) if math.isfinite(p.p10_ms) and p.p10_ms > 0 else med
    hi = math.log(p.p90_ms) if math.isfinite(p.p90_ms) and p.p90_ms > 0 else med
    return min(lo, med), med, max(hi, med)


def _zero_at(di: float, dj: float, rising: bool) -> float:
    """Where d crosses 0 between 0 and 1; pinned to an end when the bounds leave no crossing."""
    if (di < 0 < dj) if rising else (dj < 0 < di):
        return di / (di - dj)
    crossed_by_i = di >= 0 if rising else di <= 0  # else d has not crossed even at j
    return 0.0 if crossed_by_i else 1.0


def lane_pair(lanes: _Lanes, a: str, b: str) -> tuple[list[int], list[float], list[Crossover]]:
    """Common widths, d = log ms_a - log ms_b at each, and the crossings of d through zero."""
    widths = sorted(set(lanes.get(a, {})) & set(lanes.get(b, {})))
    bands = []
    for w in widths:
        (alo, amed, ahi), (blo, bmed, bhi) = _log_band(lanes[a][w]), _log_band(lanes[b][w])
        bands.append((alo - bhi, amed - bmed, ahi - blo))
    found = []
    for i in range(len(widths) - 1):
        (ilo, di, ihi), (jlo, dj, jhi) = bands[i], bands[i + 1]
        if not di * dj < 0:
            continue
        rising = di < 0
        t = di / (di - dj)
        # t grows with both ends of d when d falls, and shrinks with them when it rises.
        t1, t2 = _zero_at(ilo, jlo, rising), _zero_at(ihi, jhi, rising)
        t_lo, t_hi = min(t1, t2, t), max(t1, t2, t)
        lw0, lw1 = math.log(widths[i]), math.log(widths[i + 1])
        # Both lanes should count the same FLOPs at a width; average in log space in case not.
        lf0, lf1 = (sum(math.log(max(lanes[k][w].flops_per_batch, 1e-300)) for k in (a, b)) / 2
                    for w in widths[i:i + 2])
        found.append(Crossover(
            lanes=(a, b), width=math.exp(lw0 + t * (lw1 - lw0)),
            width_lo=math.exp(lw0 + t_lo * (lw1 - lw0)), width_hi=math.exp(lw0 + t_hi * (lw1 - lw0)),
            flops_per_batch=math.exp(lf0 + t * (lf1 - lf0)), faster_above=a if dj < 0 else b))
    return widths, [d for _, d, _ in bands], found


def find_crossovers(points: Sequence[SweepPoint]) -> list[Crossover]:
    """Every width where one lane overtakes another, interpolated in log(width), sorted by width."""
    lanes = by_lane(points)
    found = [c for a, b in itertools.combinations(sorted(lanes), 2) for c in lane_pair(lanes, a, b)[2]]
    return sorted(found, key=lambda c: (c.width, c.lanes))


def _json_float(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def analyze_points(points: Sequence[SweepPoint]) -> dict[str, Any]:
    """Per-lane cost fits, measured and predicted crossovers, as JSON-ready data (no NaN/inf)."""
    lanes = by_lane(points)
    fits: dict[str, CostFit | None] = {}
    out: dict[str, Any] = {"lanes": {}, "crossovers": [], "predicted_crossovers": []}
    for lane in sorted(lanes):
        pts = list(lanes[lane].values())
        fit = fits[lane] = fit_cost_model([p.flops_per_batch for p in pts], [p.median_ms for p in pts])
        out["lanes"][lane] = {
            "overhead_ms": _json_float(fit.overhead_ms) if fit else None,
            "gflops": _json_float(fit.gflops) if fit else None, "n_points": len(pts),
            # (measured - predicted) / predicted per width, in the points' order; null: left out as an outlier
            "residuals": {str(p.width): _json_float(r) for p, r in zip(pts, fit.residuals)} if fit else {},
            "fit_ok": bool(fit.ok) if fit else False}
    out["crossovers"] = [{**asdict(c), "lanes": list(c.lanes)} for c in find_crossovers(points)]
    for a, b in itertools.combinations(sorted(lanes), 2):
        fa, fb = fits[a], fits[b]
        f = predicted_crossover(fa, fb) if fa and fb else None
        if f is not None:
            out["predicted_crossovers"].append({"lanes": [a, b], "flops_per_batch": f})
    return out


def analyze_groups(groups: dict[str, list[SweepPoint]]) -> dict[str, Any]:
    """The documented analysis JSON for the first group; with several, each one's under "groups" too."""
    results = {label: analyze_points(points) for label, points in groups.items()}
    first = next(iter(results.values()), analyze_points([]))
    return first if len(results) <= 1 else {**first, "group": next(iter(results)), "groups": results}


def has_steady(s: RunSummary) -> bool:
    """The run has a steady-state median to compare."""
    return math.isfinite(s.median_ms) and s.median_ms > 0
