"""A predicted lane in words: its label on the map and in the report, what its line style means, and a width's
prediction in a table's cells (the sentences themselves are core/words/profile.py's)."""
from __future__ import annotations

from typing import Sequence

from ..analysis.prediction import Prediction
from ..analysis.predicted_crossing import PredictedCrossing
from ..files.predicted import PredictedLane, PredictedPoint
from ..machine import HostInfo
from ..config import Task
from .numbers import fmt_flops, fmt_num
from .profile import outside_words, unit, version_notes

PREDICTED_TIP = ("Dashed lines are predicted from a device profile (a machine measured elsewhere), never measured "
                 "here: they are not points of the map, and take no part in its crossings or its verdict. The light "
                 "band is the prediction's 95% interval; a dotted stretch is an extrapolation, outside what the "
                 "profile measured, with no interval.")


def predicted_label(lane: PredictedLane) -> str:
    """"jax:gpu0, predicted from h200-2026-11-30"."""
    return f"{lane.lane}, predicted from {lane.profile.name}"


def predicted_note(lanes: Sequence[PredictedLane], extrapolated: bool, here: HostInfo | None = None) -> str:
    """The map's sentence under its verdict while predicted lanes are drawn; with `here` (this machine), each
    profile measured with other versions of Keras or a lane's backend says so."""
    if not lanes:
        return ""
    names = ", ".join(dict.fromkeys(x.profile.name for x in lanes))
    return (f"Dashed: predicted from {names}, not measured; the verdict is the measured lanes' alone."
            + (" Dotted: an extrapolation, without an interval." if extrapolated else "")
            + "".join(f" {note}." for note in lanes_version_notes(lanes, here)))  # a profile's name, as written


def lanes_version_notes(lanes: Sequence[PredictedLane], here: HostInfo | None) -> list[str]:
    """version_notes of each profile drawn, once each ([] without this machine's host info)."""
    if here is None:
        return []
    profiles = list({id(x.profile): x.profile for x in lanes}.values())
    return list(dict.fromkeys(note for profile in profiles for note in version_notes(profile, here)))


def interval_cell(p: Prediction) -> str:
    """"1.07–1.79 ms", or why there is none."""
    if p.refused:
        return "no prediction"
    if p.has_interval:
        return f"{fmt_num(p.lo)}–{fmt_num(p.hi)} ms"
    reasons = [o for o in p.outside if o.what != "few"] or list(p.outside)
    return "none: " + "; ".join(outside_words(o) for o in reasons) if reasons else "none"


def point_cells(point: PredictedPoint, task: Task) -> tuple[str, str, str, str]:
    """A width's row: width, FLOPs per step, predicted ms ("≈" for an extrapolation), its 95% interval."""
    p = point.prediction
    ms = "–" if p.refused else (f"{fmt_num(p.ms)}" if p.has_interval else f"≈{fmt_num(p.ms)}")
    return (f"{point.width:,}", f"{fmt_flops(point.flops_per_batch)} per {unit(task)}", ms, interval_cell(p))


def added_words(lane: PredictedLane, here: HostInfo | None = None) -> str:
    notes = "".join(f" {note}." for note in lanes_version_notes([lane], here))
    return (f"Added {predicted_label(lane)} to the crossover map: dashed, for the window's model, apart from what "
            f"was measured.{notes}")


def no_lane_words(profile_name: str, lane: str, lanes: Sequence[str]) -> str:
    return f"{profile_name} has no lane {lane!r}: it has {', '.join(lanes)}."


def already_words(lane: PredictedLane) -> str:
    return f"{predicted_label(lane)} is on the map already."


def predicted_crossing_words(crossing: PredictedCrossing, lane: PredictedLane, measured_lane: str) -> str:
    """A crossing of a predicted lane with a lane measured here, said as a prediction: "predicted, not measured:
    jax:gpu0 (from h200-2026-11-30) would be faster than cpu above about 300 units (between 128 and 1,024 the
    prediction cannot tell them apart)"."""
    def who(name: str) -> str:
        return f"{name} (from {lane.profile.name})" if name == lane.lane else name

    above, below = crossing.faster_above, crossing.faster_below
    spread = (f"; from {fmt_num(crossing.tie_from, 3)} to {fmt_num(crossing.tie_to, 3)} units the prediction's "
              "interval cannot tell them apart" if crossing.tie_to > crossing.tie_from else "")
    return (f"Predicted, not measured: {who(above)} would be faster than {who(below)} above about "
            f"{fmt_num(crossing.width, 2)} units, {who(below)} below{spread}")
