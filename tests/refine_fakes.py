"""A fake pair of lanes for refinement tests: known step times, a known crossing, seeded noise, a fake clock."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.config import ModelSpec

STEADY = 60  # steady batches of a point at level 0


def flops(width: int) -> float:
    return float(ModelSpec((width,)).flops_per_batch(128))


@dataclass
class FakeLanes:
    """Two lanes whose log step-time ratio is `d(width)` (below 0: `a` is faster) around a common cost.

    Each measurement is a run of its own, as a refinement's is: STEADY batches per lane whose median carries the
    noise a median of that many batches has, given a p10-p90 spread of `spread` (log units), and the run's own
    offset (`run_noise`, log units per lane: lanes taking turns meet the machine in another state each run). A width
    measured again pools its runs as core/study/sweep.py with_batches does: their batches together, how many runs,
    how far their medians lie apart and each run's median. Every measurement advances the fake clock by what a point
    would cost.
    """

    d: Callable[[float], float]
    spread: float = 0.2
    seed: int = 0
    lanes: tuple[str, str] = ("a", "b")
    point_s: float = 2.0  # a point on both lanes, first or added
    run_noise: float = 0.02
    now: float = 0.0
    calls: list[tuple[int, int]] = field(default_factory=list)
    run_medians: dict[tuple[str, int], list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def clock(self) -> float:
        return self.now

    def measure(self, width: int, level: int) -> list[SweepPoint]:
        self.calls.append((width, level))
        self.now += self.point_s
        base = 0.5 + flops(width) / 5e10 * 1000  # ms: a fixed cost plus 50 GFLOP/s
        se = 1.2533 * self.spread / 2.563 / math.sqrt(STEADY / 3)  # neighbouring batches correlate: n / 3 count
        out = []
        for lane, sign in zip(self.lanes, (0.5, -0.5)):
            runs = self.run_medians.setdefault((lane, width), [])
            runs.append(base * math.exp(sign * self.d(width) + self.rng.normal(0, se)
                                        + self.rng.normal(0, self.run_noise)))
            logs = [math.log(m) for m in runs]
            median = math.exp(statistics.fmean(logs))  # the pooled batches' median: about their runs' middle
            out.append(SweepPoint(lane, width, flops(width), median, median * math.exp(-self.spread / 2),
                                  median * math.exp(self.spread / 2), "", 128, STEADY * len(runs),
                                  runs=len(runs), between_runs=statistics.stdev(logs) if len(runs) > 1 else math.nan,
                                  run_medians=tuple(runs) if len(runs) > 1 else ()))
        return out


def log_linear(crossings: tuple[float, ...], slope: float = 0.5, flat: tuple[float, float] | None = None
               ) -> Callable[[float], float]:
    """d that changes sign at each of `crossings` (rising first), |slope| per unit of log(width);
    with `flat` = (lo, hi), d is exactly 0 over that range (the lanes tie there) and rises around it."""
    def d(width: float) -> float:
        x = math.log(width)
        if flat:
            lo, hi = math.log(flat[0]), math.log(flat[1])
            return slope * (x - lo if x < lo else x - hi if x > hi else 0.0)
        value = slope
        for c in crossings:
            value *= x - math.log(c)
        if len(crossings) == 2:  # |slope| at both crossings
            value /= math.log(crossings[1] / crossings[0])
        return value
    return d
