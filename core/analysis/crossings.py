"""Measured crossovers: sweep points per lane, where one lane overtakes another, and a sweep's analysis as JSON."""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from .fits import CostFit, fit_cost_model, predicted_crossover

NAN = float("nan")


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
