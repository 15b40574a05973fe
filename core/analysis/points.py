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
    energy_j_per_msample: float = NAN  # joules per million samples over the steady stretch; NaN unmeasured
    axis: str = "width"  # what `width` holds: the model's width, or ("batch") the batch size of a batch-size sweep
    kind: str = "mlp"  # the kind of model (core/families.py kind_word): what its width counts (units, filters…)
    runs: int = 1  # separate runs pooled in the median (a width measured again by a refinement)
    between_runs: float = NAN  # the spread of those runs' medians (SD of their logs); NaN with one run
    others_cpu: float = NAN  # the share of the lane's cores other processes used while it was measured
    load_avg: float = NAN  # the 1-minute load average then
    energy_scope: str = ""  # what its joules cover (analysis/energy.py SCOPES: package, package+dram, board), "" none
    run_medians: tuple[float, ...] = ()  # each pooled run's own median, in the order measured; () where not kept
    session: str = ""  # the run it was (first) measured in: two lanes of different runs were measured apart

    def curve_point(self) -> CurvePoint:
        """The point as the crossing rule reads it: its median ms per step, with its spread."""
        return CurvePoint(self.lane, self.width, self.median_ms, self.p10_ms, self.p90_ms, self.n_batches,
                          self.flops_per_batch, self.runs, self.between_runs, self.run_medians, self.session)


@dataclass(frozen=True)
class CurvePoint:
    """One lane's figure at one width, as the one crossing rule compares it: `value` is ms per step for time,
    dollars per million samples for money, joules per million samples for energy, each with its spread (p10,
    p90) and the steady batches behind it."""

    lane: str
    width: int
    value: float
    lo: float = NAN
    hi: float = NAN
    n: int = 0
    flops_per_batch: float = NAN
    runs: int = 1  # separate runs behind `value`, and the spread between their figures (SD of logs; NaN with one)
    between_runs: float = NAN
    # Each run's own figure, in the order measured (the pair's runs line up: a point's lanes take their turns in
    # one run); () where not kept (files older than the column, money and energy curves).
    run_values: tuple[float, ...] = ()
    session: str = ""  # the run the figure was (first) measured in ("" where not known)


@dataclass(frozen=True)
class Crossover:
    lanes: tuple[str, str]
    width: float
    width_lo: float
    width_hi: float
    flops_per_batch: float
    faster_above: str


_Lanes = dict[str, dict[int, SweepPoint]]  # lane -> width -> point


def _plotted(value: float, width: int) -> bool:
    """A figure the analysis can use: finite and positive, at a positive width."""
    return math.isfinite(value) and value > 0 and width > 0


def by_lane(points: Sequence[SweepPoint]) -> _Lanes:
    lanes: _Lanes = {}
    for p in points:
        if _plotted(p.median_ms, p.width):
            lanes.setdefault(p.lane, {})[p.width] = p  # a re-measured width replaces the old one
    return lanes


Curves = dict[str, dict[int, CurvePoint]]  # lane -> width -> its figure there: one curve per lane


def curves(points: Sequence[CurvePoint]) -> Curves:
    out: Curves = {}
    for p in points:
        if _plotted(p.value, p.width):
            out.setdefault(p.lane, {})[p.width] = p  # a re-measured width replaces the old one
    return out


def time_curves(points: Sequence[SweepPoint]) -> Curves:
    """Each lane's ms per step along the widths it measured."""
    return curves([p.curve_point() for p in points])
