"""Energy per sample: each lane's joules per million samples along the widths, and where the lane that uses less
changes, by the one crossing rule (core/analysis/verdict.py), as for time and for money (core/analysis/costs.py).

Only points whose counters were read take part (a sweep point's energy_j_per_msample, core/files/sweeps/rows.py);
nothing is estimated where a lane had none.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from ..json_data import JsonObject, finite_or_none
from .points import Crossover, CurvePoint, SweepPoint, curves
from .verdict import crossovers_of, curve_verdicts


# What a counter's joules cover. A CPU lane is charged its whole package (every core, whatever else ran on them:
# shared with other work), with its memory where DRAM is counted; a GPU lane its board alone, not the CPU that
# feeds it. Two scopes compared are unlike things, and every view that compares them says so.
SCOPES = {"rapl-package": "package", "rapl-package+dram": "package+dram", "nvml-energy": "board",
          "nvml-power-samples": "board"}


def energy_scope(counter: str) -> str:
    """The scope of a counter's readings (SCOPES), "" for none or one not known."""
    return SCOPES.get(counter, "")


def unlike_scopes(points: Sequence[SweepPoint], a: str, b: str) -> tuple[str, str] | None:
    """The two lanes' scopes where their measured energies cover unlike things, else None."""
    scope = {lane: {p.energy_scope for p in points if p.lane == lane and p.energy_scope} for lane in (a, b)}
    sa, sb = "+".join(sorted(scope[a])), "+".join(sorted(scope[b]))
    return (sa, sb) if sa and sb and sa != sb else None


def energy_curves(points: Sequence[SweepPoint]) -> list[CurvePoint]:
    """Joules per million samples per lane and width, where measured, with a spread for the one rule.

    The counters give one reading per segment (its steady stretch's joules), not one per step, so energy has
    no spread of its own. Energy per step is mean power × step time, and the step time is what varies from
    step to step: each point takes the relative spread of its step time (p10/median, p90/median), as many
    readings as it has runs (one, unless a refinement or a recheck measured it again), and its lane's run-to-run
    noise. A lead in energy per sample is then less firm than the time lead of the same points, never firmer.
    """
    out = []
    for p in points:
        value = p.energy_j_per_msample
        if not (math.isfinite(value) and value > 0 and math.isfinite(p.median_ms) and p.median_ms > 0):
            continue
        lo = value * p.p10_ms / p.median_ms if math.isfinite(p.p10_ms) else math.nan
        hi = value * p.p90_ms / p.median_ms if math.isfinite(p.p90_ms) else math.nan
        # One counter reading per run, not one per step: the interval rests on the runs' readings (n), never on
        # the step count (it shrank to the 1% floor), and is widened by the lane's run-to-run noise as time is.
        out.append(CurvePoint(p.lane, p.width, value, lo, hi, max(p.runs, 1), p.flops_per_batch, p.runs,
                              p.between_runs))
    return out


def energy_crossovers(points: Sequence[SweepPoint]) -> list[Crossover]:
    """Widths where the lane using less energy per sample changes (`faster_above` reads "uses less above")."""
    return crossovers_of(curve_verdicts(energy_curves(points)))



@dataclass(frozen=True)
class EnergyAnalysis:
    """Each measured lane's joules per million samples per width, what its counter covered (`scope`), and where the
    lane using less energy changes (a crossover's `faster_above` is the lane using less above it)."""

    joules_per_million: dict[str, dict[int, float]]
    scope: dict[str, str]
    crossovers: tuple[Crossover, ...]

    @property
    def measured(self) -> bool:
        return any(self.joules_per_million.values())

    def to_json(self) -> JsonObject:
        return {"joules_per_million_samples": {lane: {str(w): finite_or_none(x) for w, x in per.items()}
                                               for lane, per in self.joules_per_million.items()},
                "scope": dict(self.scope),
                "crossovers": [{**asdict(c), "lanes": list(c.lanes), "less_energy_above": c.faster_above}
                               for c in self.crossovers]}


def energy_analysis(points: Sequence[SweepPoint]) -> EnergyAnalysis:
    """Each measured lane's joules per million samples per width, and the energy crossovers (by the one rule)."""
    measured = curves(energy_curves(points))
    return EnergyAnalysis(
        {lane: {w: p.value for w, p in sorted(measured[lane].items())} for lane in sorted(measured)},
        {lane: "+".join(sorted({p.energy_scope for p in points if p.lane == lane and p.energy_scope}))
         for lane in sorted(measured)},
        tuple(energy_crossovers(points)))
