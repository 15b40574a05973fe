"""A sweep's analysis: each lane's cost fit, the measured crossovers (by the one rule) and the fitted lines' crossings."""
from __future__ import annotations

import itertools
import math
import dataclasses
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypeVar

from ..json_data import JsonObject, finite_or_none
from .fits import MIN_POINTS_TO_MEET, CostFit, fit_cost_model, predicted_crossover
from .points import Crossover, SweepPoint, by_lane
from .verdict import crossovers_of, verdicts

if TYPE_CHECKING:
    from .costs import CostAnalysis
    from .energy import EnergyAnalysis

_Part = TypeVar("_Part")

NAN = float("nan")


def find_crossovers(points: Sequence[SweepPoint], between: bool = False) -> list[Crossover]:
    """Every width where one lane's lead gives way to another's, by the one rule (core/analysis/verdict.py),
    sorted by width; a change with a stretch equal within noise in between has no width to mark (with `between`,
    for a picture, it is there with a NaN width: crossovers_of)."""
    return crossovers_of(verdicts(points), between)



@dataclass(frozen=True)
class LaneFit:
    """One lane's fitted cost model over a sweep's points (None: too few points, or no fit)."""

    lane: str
    fit: CostFit | None
    n_points: int
    # Per width, in the points' order: (measured - predicted) / predicted; None: left out as an outlier.
    residuals: tuple[tuple[int, float | None], ...] = ()

    @property
    def overhead_ms(self) -> float | None:
        return finite_or_none(self.fit.overhead_ms) if self.fit else None

    @property
    def gflops(self) -> float | None:
        return finite_or_none(self.fit.gflops) if self.fit else None

    @property
    def ok(self) -> bool:
        return bool(self.fit.ok) if self.fit else False

    def to_json(self) -> JsonObject:
        return {"overhead_ms": self.overhead_ms, "gflops": self.gflops, "n_points": self.n_points,
                "residuals": {str(w): r for w, r in self.residuals}, "fit_ok": self.ok}


@dataclass(frozen=True)
class FittedCrossing:
    """Where two lanes' fitted cost lines meet, in FLOPs per batch."""

    lanes: tuple[str, str]
    flops_per_batch: float

    def to_json(self) -> JsonObject:
        return {"lanes": list(self.lanes), "flops_per_batch": self.flops_per_batch}


@dataclass(frozen=True)
class SweepAnalysis:
    """A sweep's analysis: each lane's cost fit, the measured crossovers and the fitted lines' crossings.
    Of several groups (several files or batch sizes), the first group's, with every group's in `groups`."""

    lanes: dict[str, LaneFit]
    crossovers: tuple[Crossover, ...]
    predicted: tuple[FittedCrossing, ...]
    group: str = ""
    groups: dict[str, SweepAnalysis] = field(default_factory=dict)
    cost: CostAnalysis | None = None  # where lanes were priced (with_parts)
    energy: EnergyAnalysis | None = None  # where any point's energy was measured

    def with_parts(self, cost: Mapping[str, CostAnalysis] | None = None,
                   energy: Mapping[str, EnergyAnalysis] | None = None) -> SweepAnalysis:
        """The analysis with each group's cost or energy analysis (keyed by group label) beside its time analysis;
        the first group's at the top, as its time analysis is."""
        def part(found: Mapping[str, _Part] | None, label: str) -> _Part | None:
            return None if found is None else found.get(label)

        first = self.group or next(iter(cost or energy or {}), "")
        groups = {label: dataclasses.replace(g, cost=part(cost, label) or g.cost, energy=part(energy, label) or g.energy)
                  for label, g in self.groups.items()}
        return dataclasses.replace(self, groups=groups, cost=part(cost, first) or self.cost,
                                   energy=part(energy, first) or self.energy)

    def to_json(self) -> JsonObject:
        """The documented analysis JSON (no NaN or inf)."""
        out: dict[str, Any] = {
            "lanes": {lane: fit.to_json() for lane, fit in self.lanes.items()},
            "crossovers": [{**asdict(c), "lanes": list(c.lanes)} for c in self.crossovers],
            "predicted_crossovers": [p.to_json() for p in self.predicted]}
        if self.cost is not None:
            out["cost"] = self.cost.to_json()
        if self.energy is not None:
            out["energy"] = self.energy.to_json()
        if self.groups:
            out.update(group=self.group, groups={label: g.to_json() for label, g in self.groups.items()})
        return out


def analyze_points(points: Sequence[SweepPoint]) -> SweepAnalysis:
    """Per-lane cost fits, measured and predicted crossovers."""
    lanes = by_lane(points)
    fits: dict[str, LaneFit] = {}
    for lane in sorted(lanes):
        pts = list(lanes[lane].values())
        fit = fit_cost_model([p.flops_per_batch for p in pts], [p.median_ms for p in pts])
        residuals = tuple((p.width, finite_or_none(r)) for p, r in zip(pts, fit.residuals)) if fit else ()
        fits[lane] = LaneFit(lane, fit, len(pts), residuals)
    predicted = []
    measured = find_crossovers(points)
    crossing = {tuple(sorted(c.lanes)) for c in measured}
    for a, b in itertools.combinations(sorted(lanes), 2):
        fa, fb = fits[a].fit, fits[b].fit
        # Two points fit a line exactly: no residual says how far its meeting point could move, so none is said. And
        # the lines meet only where both fits are good and the rule itself finds the lanes change places across the
        # measured range (their difference changes sign beyond its noise): two equal lanes' fitted lines meet
        # somewhere by chance, and "meet at X (95%: …)" beside "no answer" read as an answer (issue 57).
        enough = (fa is not None and fb is not None and min(fa.n, fb.n) >= MIN_POINTS_TO_MEET
                  and fits[a].ok and fits[b].ok and (a, b) in crossing)
        f = predicted_crossover(fa, fb) if fa and fb and enough else None
        if f is not None:
            predicted.append(FittedCrossing((a, b), f))
    return SweepAnalysis(fits, tuple(measured), tuple(predicted))


def analyze_groups(groups: dict[str, list[SweepPoint]]) -> SweepAnalysis:
    """The first group's analysis; with several, each one's under `groups` too."""
    results = {label: analyze_points(points) for label, points in groups.items()}
    first = next(iter(results.values()), analyze_points([]))
    if len(results) <= 1:
        return first
    return dataclasses.replace(first, group=next(iter(results)), groups=results)
