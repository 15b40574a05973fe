"""What a sweep measured, as the analysis reads it: a lane's median at a width, and a crossover between two lanes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

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
