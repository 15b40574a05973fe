"""A rate counted in trials (false leads in twin sweeps): its exact interval, which never claims more than K trials
can show."""
from __future__ import annotations

from dataclasses import dataclass

from .special import betaincinv

LEVEL = 0.95


@dataclass(frozen=True)
class CountedRate:
    """`count` events in `trials` trials: the share, and its Clopper-Pearson interval at `level` (exact: it covers
    the true rate at least that often, however few the trials; 0 of 6 is 0-46%, not 0)."""

    count: int
    trials: int
    low: float
    high: float
    level: float = LEVEL

    @property
    def rate(self) -> float:
        return self.count / self.trials


def counted_rate(count: int, trials: int, level: float = LEVEL) -> CountedRate:
    """The rate of `count` in `trials` (at least one) with its two-sided exact interval."""
    if not (isinstance(trials, int) and trials >= 1 and isinstance(count, int) and 0 <= count <= trials):
        raise ValueError(f"{count} of {trials}: a count of 0 to the trials, and at least one trial")
    if not 0 < level < 1:
        raise ValueError(f"level {level}: above 0 and below 1")
    tail = (1 - level) / 2
    low = 0.0 if count == 0 else float(betaincinv(count, trials - count + 1, tail))
    high = 1.0 if count == trials else float(betaincinv(count + 1, trials - count, 1 - tail))
    return CountedRate(count, trials, low, high, level)
