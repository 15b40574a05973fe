"""Predictions from a device profile, in words: a figure with its interval and what it rests on, an extrapolation
said as one, a profile with its machine, age and versions, and how far a prediction was from a measurement."""
from __future__ import annotations

import datetime as _dt
import math
from typing import Sequence

from ..analysis.prediction import CostLine, Outside, Prediction
from ..analysis.predicted_crossing import PredictedCrossing
from ..files.device_profile import DeviceProfile, ProfileLane
from ..machine import HostInfo
from ..config import Task
from .numbers import fmt_flops, fmt_num, plural

REFUSED = {"no flops": "the model has no FLOPs to predict from",
           "no task": "this profile measured no step of this task on this lane",
           "no kind": "this profile never measured this kind of model on this lane, nor a dense one to stand in",
           "no time": "its line gives no positive time for this model"}


def article(word: str) -> str:
    """"a" or "an" before a kind's word as it is said: "an mlp", "an lstm" (letters), "a cnn", "a gru", "a
    transformer", "a saved model"."""
    return "an" if word.split(" ")[0] in ("mlp", "lstm") else "a"


def unit(task: Task) -> str:
    return "call" if task == Task.PREDICT else "step"


def line_words(line: CostLine) -> str:
    """What a line rests on: "8 points at batch 128 (1/2/4 layers, 6.74 MFLOP–14.6 GFLOP per step), ±12% error when
    each point is predicted from the others"."""
    lo, hi = line.flops_range
    batch = f"batch {line.batch_size}" if line.batch_size else "every batch size measured"
    depth = "/".join(map(str, line.layers))
    error = (f", ±{fmt_num(100 * line.loo_log_sd, 2)}% error when each point is predicted from the others"
             if math.isfinite(line.loo_log_sd) else "")
    return (f"{line.n} {plural(line.n, 'point')} at {batch} ({depth} {plural(line.layers[-1], 'layer')}, "
            f"{fmt_flops(lo)}–{fmt_flops(hi)} per {unit(line.task)}){error}")


def outside_words(o: Outside) -> str:
    """Why a model lies outside what the profile measured, as a clause."""
    if o.what == "kind":
        return f"this profile never measured {article(o.kind)} {o.kind}: its {o.stand_in} line stands in"
    if o.what == "batch":
        return (f"batch {int(o.asked)} lies outside the batch sizes this profile measured "
                f"({', '.join(str(int(b)) for b in o.measured)})")
    if o.what == "flops":
        return (f"{fmt_flops(o.asked)} per step lies far outside the {fmt_flops(o.measured[0])}–"
                f"{fmt_flops(o.measured[1])} this profile measured")
    if o.what == "depth":
        return (f"{int(o.asked)} {plural(o.asked, 'layer')}: this profile measured "
                f"{'/'.join(str(int(d)) for d in o.measured)} at this batch size")
    return f"a line of {int(o.asked)} points gives no interval (it takes {int(o.measured[0])})"


def prediction_words(p: Prediction, task: Task) -> str:
    """"1.37 ms per step (95%: 1.07–1.79 ms; from 12 points at batch 128 …)", or "≈0.64 ms per step, an
    extrapolation (1 layer: this profile measured 2 at this batch size): no interval", or why there is no figure."""
    if p.refused:
        return f"no prediction: {REFUSED.get(p.refused, p.refused)}"
    basis = " and ".join(line_words(x) for x in p.lines)
    if p.outside and all(o.what == "few" for o in p.outside):
        return (f"≈{fmt_num(p.ms)} ms per {unit(task)}, with no interval ({outside_words(p.outside[0])}); "
                f"from {basis}")
    if p.outside:
        reasons = "; ".join(outside_words(o) for o in p.outside if o.what != "few")
        return f"≈{fmt_num(p.ms)} ms per {unit(task)}, an extrapolation ({reasons}): no interval; from {basis}"
    between = " (between the two batch sizes, in log)" if len(p.lines) == 2 else ""
    return (f"{fmt_num(p.ms)} ms per {unit(task)} (95%: {fmt_num(p.lo)}–{fmt_num(p.hi)} ms){between}; "
            f"from {basis}")


def age_words(measured_at: str, now: _dt.datetime | None = None) -> str:
    """"measured 2026-11-30, 6 days ago"; "measured at a time its files do not say"."""
    try:
        made = _dt.datetime.fromisoformat(measured_at)
    except (TypeError, ValueError):
        return "measured at a time its files do not say"
    now = now or _dt.datetime.now(made.tzinfo or _dt.timezone.utc)
    if made.tzinfo is None:
        made = made.replace(tzinfo=_dt.timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=_dt.timezone.utc)
    days = (now - made).days
    when = "today" if days == 0 else f"{days} {plural(days, 'day')} ago" if days > 0 else "in the future"
    return f"measured {made.date().isoformat()}, {when}"


def machine_words(host: HostInfo) -> str:
    """"NVIDIA H200 and an Intel(R) Xeon(R) Processor (16 cores)"."""
    cpu = f"{host.cpu or 'an unknown CPU'}" + (f" ({host.cpu_cores} cores)" if host.cpu_cores else "")
    gpus = ", ".join(g.name for g in host.gpus)
    return f"{gpus} and {cpu}" if gpus else cpu


def lane_kinds(lane: ProfileLane) -> str:
    tasks = sorted({x.task for x in lane.lines})
    return f"{', '.join(lane.kinds)} ({'/'.join(tasks)})"


def profile_words(profile: DeviceProfile, now: _dt.datetime | None = None) -> str:
    """One profile in a line: its name, machine, age, versions and lanes."""
    lanes = "; ".join(f"{x.lane}{settings_note(x)}: {lane_kinds(x)}" for x in profile.lanes)
    return (f"{profile.name}: {machine_words(profile.host)}, {age_words(profile.measured_at or profile.made_at, now)}, "
            f"{profile.versions}; lanes {lanes}")


def settings_note(lane: ProfileLane) -> str:
    """" (feeding device)" where a lane's settings differ from the defaults a plain run uses."""
    odd = [f"{k.replace('_', ' ')} {v}" for k, v in lane.settings  # jit: each backend records its own default
           if k != "jit" and (k, v) not in (("steps_per_execution", "1"), ("feeding", "host"),
                                            ("mixed_precision", "off"))]
    return f" ({', '.join(odd)})" if odd else ""


def version_notes(profile: DeviceProfile, here: HostInfo) -> list[str]:
    """Where the profile's versions differ from this machine's: each said, since a new Keras or backend can move
    the fixed cost per step."""
    notes = []
    if profile.host.keras and here.keras and profile.host.keras != here.keras:
        notes.append(f"{profile.name} was measured with Keras {profile.host.keras}; this machine has {here.keras}")
    mine = dict(here.backends)
    for name, version in profile.host.backends:
        if version and mine.get(name) and mine[name] != version and name in {x.backend for x in profile.lanes}:
            notes.append(f"{profile.name} was measured with {name} {version}; this machine has {mine[name]}")
    return notes


def crossing_words(c: PredictedCrossing | None, lane_a: str, lane_b: str, axis: str) -> str:
    """Where the predicted faster lane changes along the model's width, said as the rule says a range: "predicted
    (from profiles, not measured): jax:cpu is faster up to width 128, jax:gpu0 from 1,024; between, the predictions
    cannot tell them apart (their times meet near 480)"."""
    if c is None:
        return (f"predicted: no change of the faster lane between {lane_a} and {lane_b} along these {axis}s (or too "
                "few of them predicted with an interval)")
    below = f"{c.faster_below} is faster up to {axis} {int(c.tie_from):,}" if c.clear_below else \
        f"{c.faster_below} is not told apart from {c.faster_above} even at {axis} {int(c.tie_from):,}"
    above = f"{c.faster_above} from {int(c.tie_to):,}" if c.clear_above else \
        f"nor is {c.faster_above} at {int(c.tie_to):,}"
    return (f"predicted (from profiles, not measured): {below}, {above}; between, the predictions cannot tell them "
            f"apart (their times meet near {axis} {fmt_num(c.width, 2)})")


def measured_words(p: Prediction, measured_ms: float, task: Task) -> str:
    """How far the prediction was: "measured 1.52 ms per step: the prediction was 9% low, inside its interval"."""
    if not (math.isfinite(measured_ms) and measured_ms > 0) or p.refused:
        return "not measured"
    error = p.ms / measured_ms - 1
    side = "high" if error > 0 else "low"
    where = ("inside its interval" if p.contains(measured_ms) else "outside its interval" if p.has_interval
             else "an extrapolation, with no interval")
    return f"measured {fmt_num(measured_ms)} ms per {unit(task)}: the prediction was {fmt_num(abs(100 * error), 2)}% " \
           f"{side}, {where}"


def accuracy_words(errors: Sequence[float]) -> str:
    """"12 predictions: 92% within ±25%, 67% within ±10%, median error 6.1%"."""
    n = len(errors)
    if not n:
        return "no predictions with an interval to check"
    within = lambda bound: 100 * sum(1 for e in errors if abs(e) <= bound) / n  # noqa: E731
    median = sorted(abs(e) for e in errors)[n // 2] if n % 2 else \
        sum(sorted(abs(e) for e in errors)[n // 2 - 1:n // 2 + 1]) / 2
    return (f"{n} {plural(n, 'prediction')}: {fmt_num(within(0.25), 2)}% within ±25%, {fmt_num(within(0.10), 2)}% "
            f"within ±10%, median error {fmt_num(100 * median, 2)}%")
