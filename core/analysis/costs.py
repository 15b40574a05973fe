"""Cost per sample: a price per hour per lane turns each timing into dollars per million samples.

With prices, the cheaper lane can change at another width than the faster one (a GPU that is
twice as fast at four times the price is dearer per sample): the cost crossover is found the
same way as the time crossover (core/analysis/), on the cost curves.
"""
from __future__ import annotations

from ..json_data import JsonObject, finite_or_none

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from .points import Crossover, CurvePoint, SweepPoint, curves
from .verdict import crossovers_of, curve_verdicts
from ..config import ConfigError

Prices = Mapping[str, float]  # lane → dollars per hour


def parse_prices(text: str) -> dict[str, float]:
    """`gpu0=2.50,cpu=0.40` (dollars per hour per lane) → {"gpu0": 2.5, "cpu": 0.4}."""
    prices: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        lane, eq, value = item.rpartition("=")
        try:
            price = float(value.strip().lstrip("$"))
        except ValueError:
            price = math.nan
        if not (eq and lane.strip() and math.isfinite(price) and price > 0):
            raise ConfigError(f"price {item!r}: use LANE=DOLLARS_PER_HOUR with a positive number, "
                              "e.g. --price gpu0=2.50,cpu=0.40")
        prices[lane.strip()] = price
    if not prices:
        raise ConfigError("no prices given: use LANE=DOLLARS_PER_HOUR, e.g. --price gpu0=2.50,cpu=0.40")
    return prices


def price_for(lane: str, prices: Prices) -> float | None:
    """The lane's price: by its full name, else by the name its own machine gives it
    (`cpu1` prices `laptop/cpu1` and `ssh://lab/cpu1`; `jax:gpu0` prices `h200/jax:gpu0`)."""
    if lane in prices:
        return prices[lane]
    return prices.get(lane.rpartition("/")[2])


def prices_of(lanes: Iterable[str], prices: Prices) -> dict[str, float]:
    """The prices of those of `lanes` that have one (what a run's or a sweep's sidecar records)."""
    return {lane: price for lane in lanes if (price := price_for(lane, prices)) is not None}


def dollars_per_million(ms_per_batch: float, batch_size: int, price_per_hour: float) -> float:
    """What a million samples cost at this step time: price/h × hours per sample × 10⁶."""
    if not (batch_size > 0 and math.isfinite(ms_per_batch) and ms_per_batch > 0):
        return math.nan
    return price_per_hour * (ms_per_batch / 3.6e6) / batch_size * 1e6


def cost_curves(points: Sequence[SweepPoint], prices: Prices) -> list[CurvePoint]:
    """The priced lanes' dollars per million samples at each width, with their spread: what the cost
    crossover compares."""
    out = []
    for p in points:
        price = price_for(p.lane, prices)
        if price is None or p.batch_size <= 0:
            continue
        out.append(CurvePoint(p.lane, p.width, dollars_per_million(p.median_ms, p.batch_size, price),
                              dollars_per_million(p.p10_ms, p.batch_size, price),
                              dollars_per_million(p.p90_ms, p.batch_size, price), p.n_batches, p.flops_per_batch,
                              p.runs, p.between_runs))  # a price scales every run's time alike
    return out


def cost_crossovers(points: Sequence[SweepPoint], prices: Prices) -> list[Crossover]:
    """Widths where the cheaper lane per sample changes (`faster_above` reads "cheaper above"), by the one rule."""
    return crossovers_of(curve_verdicts(cost_curves(points, prices)))



@dataclass(frozen=True)
class CostAnalysis:
    """Each priced lane's price ($ per hour) and dollars per million samples per width, and where the cheaper lane
    changes (a crossover's `faster_above` is the lane cheaper above it)."""

    prices: dict[str, float | None]
    dollars_per_million: dict[str, dict[int, float]]
    crossovers: tuple[Crossover, ...]

    def to_json(self) -> JsonObject:
        return {"prices": dict(self.prices),
                "dollars_per_million_samples": {lane: {str(w): finite_or_none(x) for w, x in per.items()}
                                                for lane, per in self.dollars_per_million.items()},
                "crossovers": [{**asdict(c), "lanes": list(c.lanes), "cheaper_above": c.faster_above}
                               for c in self.crossovers]}


def cost_analysis(points: Sequence[SweepPoint], prices: Prices) -> CostAnalysis:
    """Each priced lane's dollars per million samples per width, and the cost crossovers (by the one rule)."""
    priced = curves(cost_curves(points, prices))
    return CostAnalysis({lane: price_for(lane, prices) for lane in sorted(priced)},
                        {lane: {w: p.value for w, p in sorted(priced[lane].items())} for lane in sorted(priced)},
                        tuple(cost_crossovers(points, prices)))
