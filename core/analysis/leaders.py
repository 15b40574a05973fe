"""Many lanes at once: per width, the lane with the lowest figure and its nearest rival, their lead judged by the one
crossing rule (core/analysis/verdict.py) and nothing else; what `analyze` says where every pair would be too many.

Every pair of N lanes is N·(N−1)/2 verdicts and as many sentences: forty files of two lanes each are 3,160. A
reader of that many lanes asks which lane is fastest at each width and whether its lead over the next one holds,
so only that pair is judged: at most one pair per width, each distinct pair once over every width both measured
(the same verdict the pair gets where it is judged alone, so `analyze --lanes A,B` says the same in full).
Finding the two lowest figures is one pass over the points: the work grows with the points, not with their pairs.
Nothing here words.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..json_data import JsonObject, finite_or_none
from .points import CurvePoint, curves
from .verdict import PairVerdict, Stretch, curve_verdict


@dataclass(frozen=True)
class WidthLead:
    """One width: the lane with the lowest figure there (`first`), the next lowest (`second`; None where one lane
    alone measured the width), and the one rule's verdict on those two over every width both measured."""

    width: int
    first: CurvePoint
    second: CurvePoint | None = None
    verdict: PairVerdict | None = None

    @property
    def ratio(self) -> float:
        """The runner-up's figure over the first's (≥ 1); NaN without a runner-up."""
        return self.second.value / self.first.value if self.second is not None else math.nan

    @property
    def stretch(self) -> Stretch | None:
        """The verdict's stretch holding this width: who leads here by the rule (None inside it: neither does)."""
        if self.verdict is None:
            return None
        return next((s for s in self.verdict.stretches if s.width_lo <= self.width <= s.width_hi), None)

    @property
    def leader(self) -> str | None:
        """The lane the rule says leads at this width; None where the two are within noise or were not judged.
        Usually `first`; the runner-up only where the whole sweep's lead carries a width that leans the other way
        by less than its error (core/analysis/verdict.py sites_of)."""
        s = self.stretch
        return s.leader if s is not None else None

    def to_json(self) -> JsonObject:
        s = self.stretch
        return {"width": self.width, "lane": self.first.lane, "value": finite_or_none(self.first.value),
                "runner_up": self.second.lane if self.second else None,
                "runner_up_value": finite_or_none(self.second.value) if self.second else None,
                "ratio": finite_or_none(self.ratio), "leader": self.leader,
                "judged": s is not None, "pair": list(self.verdict.lanes) if self.verdict else None}


@dataclass(frozen=True)
class Leaders:
    """Per width, in width order, who has the lowest figure among `lanes` lanes, and the verdicts that judge it
    (`judged`: each distinct pair of first and runner-up once, never more than the widths)."""

    lanes: int
    rows: tuple[WidthLead, ...]
    judged: tuple[PairVerdict, ...]

    @property
    def pairs(self) -> int:
        """How many pairs the lanes make: what judging every one would have cost."""
        return self.lanes * (self.lanes - 1) // 2

    def to_json(self) -> JsonObject:
        return {"lanes": self.lanes, "pairs": self.pairs, "widths": [r.to_json() for r in self.rows],
                "judged": [v.to_json() for v in self.judged]}


def leaders(points: Sequence[CurvePoint]) -> Leaders:
    """Per width, the lowest figure and the next, and the one rule on each such pair over the widths both measured."""
    per_lane = curves(points)
    at: dict[int, list[CurvePoint]] = {}
    for per in per_lane.values():
        for width, p in per.items():
            at.setdefault(width, []).append(p)
    # The name breaks a tie of figures, so that the same files give the same table.
    two = {width: heapq.nsmallest(2, here, key=lambda p: (p.value, p.lane)) for width, here in sorted(at.items())}
    judged: dict[tuple[str, str], PairVerdict] = {}
    rows = []
    for width, (first, *rest) in two.items():
        second = rest[0] if rest else None
        verdict = None
        if second is not None:
            key = (min(first.lane, second.lane), max(first.lane, second.lane))
            if key not in judged:
                judged[key] = curve_verdict(_of_lanes(per_lane, key), *key)
            verdict = judged[key]
        rows.append(WidthLead(width, first, second, verdict))
    return Leaders(len(per_lane), tuple(rows), tuple(judged.values()))


def _of_lanes(per_lane: dict[str, dict[int, CurvePoint]], lanes: Iterable[str]) -> list[CurvePoint]:
    return [p for lane in lanes for p in per_lane[lane].values()]
