"""A refined sweep's answer as data: how tight it must be (RefineTarget), every crossing with its interval, the ties,
why it stopped (Refinement), and its JSON in a sweep's sidecar. The judge of each width and each change of the lead is
core/analysis/verdict.py; choosing what to measure next, and the answer from the points, is core/study/refine.py.
Nothing here measures or judges.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..json_data import JsonObject, JsonValue
from .points import Crossover
from ..config import ConfigError

DEFAULT_TOLERANCE, DEFAULT_BUDGET_S, DEFAULT_MAX_LEVEL = 0.15, 60.0, 2
STOP_REASONS = ("tight", "noise", "no crossover", "budget", "cancelled", "failed")


@dataclass(frozen=True)
class RefineTarget:
    """How tight the answer must be (± relative to the interval's middle), and the time it may take."""

    tolerance: float = DEFAULT_TOLERANCE
    budget_s: float = DEFAULT_BUDGET_S
    max_level: int = DEFAULT_MAX_LEVEL  # a tie gets this many more rounds of steady batches, added to its own

    def __post_init__(self) -> None:
        if not 0 < self.tolerance < 1:
            raise ConfigError(f"refine tolerance {self.tolerance:g}: choose above 0 and below 1 (0.15 is ±15%)")
        if not self.budget_s > 0:
            raise ConfigError(f"refine budget {self.budget_s:g} s: choose more than 0 seconds")
        if not 0 <= self.max_level <= 6:
            raise ConfigError(f"refine re-measure level {self.max_level}: choose 0-6")

    @property
    def ratio(self) -> float:
        """The widest hi/lo an interval may have: lo and hi within ±tolerance of their middle."""
        return (1 + self.tolerance) / (1 - self.tolerance)


@dataclass(frozen=True)
class Crossing:
    """Where the faster lane changes; `width` is None when only a range is known (the lanes tie across it)."""

    lanes: tuple[str, str]
    width: float | None
    width_lo: float
    width_hi: float
    flops_per_batch: float | None
    faster_above: str
    stopped: str  # tight | noise, or why it was left open: budget | cancelled | failed


@dataclass(frozen=True)
class Tie:
    """Lanes equal within noise over a range of widths, with the same lane ahead on both sides (or at an end)."""

    lanes: tuple[str, str]
    width_lo: int
    width_hi: int


@dataclass(frozen=True)
class Refinement:
    """The outcome of a refined sweep: every crossing with its interval, the ties, and why it stopped."""

    target: RefineTarget
    crossings: tuple[Crossing, ...]
    ties: tuple[Tie, ...]
    stopped: str  # one of STOP_REASONS
    spent_s: float
    widths: tuple[int, ...]  # every width measured, coarse first, in the order measured (a re-measure again)
    unit: str = "units"  # what the widths count: a model's units (or filters, d_model), or "samples per batch"

    def marked(self) -> list[Crossover]:
        """The crossings to mark on a picture: those with a width (a range within noise has none to mark)."""
        return [Crossover(c.lanes, c.width, c.width_lo, c.width_hi, c.flops_per_batch or math.nan, c.faster_above)
                for c in self.crossings if c.width is not None]

    def to_json(self) -> JsonObject:
        return {"tolerance": self.target.tolerance, "budget_s": self.target.budget_s, "stopped": self.stopped,
                "spent_s": round(self.spent_s, 3), "widths_measured": list(self.widths), "unit": self.unit,
                "ties": [{**asdict(t), "lanes": list(t.lanes)} for t in self.ties]}


def refinement_of_sidecar(meta: Mapping[str, JsonValue]) -> Refinement | None:
    """A sweep file's refinement, read from its sidecar (the first variant's analysis), or None: what `analyze`
    and `report` of the file say beside the one rule's sentences, as the refined sweep said it when it ended."""
    sweep = meta.get("sweep")
    variants = sweep.get("variants") if isinstance(sweep, Mapping) else None
    base = next(iter(variants.values()), None) if isinstance(variants, Mapping) and variants else None
    analysis = base.get("analysis") if isinstance(base, Mapping) else None
    return refinement_from_json(analysis) if isinstance(analysis, Mapping) else None


def refinement_from_json(analysis: Mapping[str, JsonValue]) -> Refinement | None:
    """A refined sweep's answer as its sidecar keeps it (with_refinement's JSON), or None for a plain sweep
    or a damaged entry: what `analyze` of the file says beside the one rule's sentences. Read by key: a wrong
    shape is None."""
    info: Any = analysis.get("refinement")
    found: Any = analysis.get("crossovers")
    if not isinstance(info, Mapping) or not isinstance(found, list):
        return None
    try:
        target = RefineTarget(float(info["tolerance"]), float(info["budget_s"]))
        crossings = tuple(Crossing((str(c["lanes"][0]), str(c["lanes"][1])),
                                   None if c.get("width") is None else float(c["width"]), float(c["width_lo"]),
                                   float(c["width_hi"]), None if c.get("flops_per_batch") is None
                                   else float(c["flops_per_batch"]), str(c["faster_above"]), str(c["stopped"]))
                          for c in found if isinstance(c, Mapping))
        ties = tuple(Tie((str(t["lanes"][0]), str(t["lanes"][1])), int(t["width_lo"]), int(t["width_hi"]))
                     for t in info.get("ties") or [] if isinstance(t, Mapping))
        return Refinement(target, crossings, ties, str(info["stopped"]), float(info["spent_s"]),
                          tuple(int(w) for w in info.get("widths_measured") or []), str(info.get("unit") or "units"))
    except (KeyError, TypeError, ValueError, IndexError, ConfigError):
        return None


def with_refinement(analysis: JsonObject, refinement: Refinement | None) -> JsonObject:
    """The analysis JSON of a refined sweep: its crossovers are the refined ones, and it says why it stopped."""
    if refinement is None:
        return analysis
    crossovers = [{**asdict(c), "lanes": list(c.lanes)} for c in refinement.crossings]
    return {**analysis, "crossovers": crossovers, "refinement": refinement.to_json()}
