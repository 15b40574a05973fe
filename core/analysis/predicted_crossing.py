"""Where the faster of two lanes changes along a model's width when one or both are predicted from a device profile
(core/analysis/prediction.py): two predicted lanes, or a predicted lane against one measured here. A measured crossing
is the one rule's (core/analysis/verdict.py)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .prediction import Prediction


@dataclass(frozen=True)
class PredictedCrossing:
    """Where, along a model's width, the predicted faster lane changes: the width where the predicted times cross,
    and the widths on either side nearest to it where the two lanes' intervals lie apart (`tie_from`: the last
    width the lane below is clearly faster at, `tie_to`: the first the lane above is; between them the predictions
    cannot tell the lanes apart). Where no width on a side has the intervals apart, that side's end is the first or
    last width, and `clear_below`/`clear_above` is False."""

    width: float
    tie_from: float
    tie_to: float
    faster_below: str
    faster_above: str
    clear_below: bool = True
    clear_above: bool = True


def crossing(widths: Sequence[int], a: Sequence[Prediction], b: Sequence[Prediction], lane_a: str,
             lane_b: str) -> PredictedCrossing | None:
    """The first change of the faster lane along `widths` (ascending), by the two lanes' predictions there (each
    with an interval: an extrapolated or refused one ends the search), interpolated in log width; None where the
    same lane is faster at every width."""
    pairs = [(w, pa, pb) for w, pa, pb in zip(widths, a, b) if pa.has_interval and pb.has_interval]
    if len(pairs) < 2:
        return None
    logs = [math.log(pa.ms / pb.ms) for _, pa, pb in pairs]  # > 0: b is faster
    for i in range(1, len(pairs)):
        if (logs[i - 1] > 0) != (logs[i] > 0) and logs[i - 1] != logs[i]:
            w0, w1 = math.log(pairs[i - 1][0]), math.log(pairs[i][0])
            share = logs[i - 1] / (logs[i - 1] - logs[i])
            width = math.exp(w0 + share * (w1 - w0))
            clear = [not (pa.lo <= pb.hi and pb.lo <= pa.hi) for _, pa, pb in pairs]  # intervals apart
            before = [w for (w, _, _), apart in zip(pairs, clear) if w < width and apart]
            after = [w for (w, _, _), apart in zip(pairs, clear) if w > width and apart]
            below, above = (lane_a, lane_b) if logs[i] > 0 else (lane_b, lane_a)
            return PredictedCrossing(width, max(before) if before else pairs[0][0], min(after) if after else pairs[-1][0],
                            below, above, bool(before), bool(after))
    return None


def crossing_with_measured(widths: Sequence[int], predicted: Sequence[Prediction], measured_ms: Sequence[float],
                           predicted_lane: str, measured_lane: str) -> PredictedCrossing | None:
    """Where a predicted lane (a profile of a machine one does not have) and a lane measured here change places
    along `widths` (ascending; each measured median at its width): `crossing` with the measured medians as points
    without an interval of their own, so how far the crossing can be trusted is the prediction's interval alone.
    Only where the change is clear on both sides (the predicted interval apart from the measured median below and
    above it) is it a crossing; None otherwise."""
    measured = [Prediction(ms, ms, ms) if math.isfinite(ms) and ms > 0 else Prediction() for ms in measured_ms]
    found = crossing(widths, predicted, measured, predicted_lane, measured_lane)
    return found if found is not None and found.clear_below and found.clear_above else None
