"""The anatomy of a training step (or a served call): the five rungs a lane times, and the parts of a step their differences name.

Pure arithmetic and types. A lane measures the rungs (core/lane/anatomy.py); this module says
what they mean. Each rung differs from the next in one thing:

    fit                  Keras fit with Crossover's per-step timing (the loss is read every step)
    fit_pipelined        Keras fit with a timestamp every K steps only: what a user's plain fit gets
    step_loop            the model's compiled train step in a Python loop, batches on the device, synced each step
    step_loop_pipelined  the same loop, synced once per window of K steps
    device_loop          K steps inside one compiled call: the device's floor for this model

so fit − step_loop is Keras' fit machinery and input, step_loop − step_loop_pipelined is waiting
for each step's result, step_loop_pipelined − device_loop is host dispatch, device_loop is the
device working, and fit − fit_pipelined is what pipelining gives back.

A served call (the predict task) has a ladder of its own (PREDICT_LADDER below): Keras' predict machinery,
the input's copy to the device, waiting for the answer and its copy back, host dispatch, the device working.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..config import Task
from ..json_data import JsonObject, JsonValue
from ..messages import register
from ..run_stats import robust_stats
from ..records import RunSettings
from .crossings import find_crossovers
from .points import Crossover, SweepPoint

NAN = math.nan


@dataclass(frozen=True)
class Ladder:
    """The rungs one task's anatomy times, top (what the run's clock times) to bottom (the device's floor), and
    the parts their differences name: part → (the rung above it, the rung below it; "" below: the rung itself).
    `stack` lists, bottom up, the parts that telescope to the top rung: the stacked bar of a step or call."""

    task: Task
    rungs: tuple[str, ...]
    parts: dict[str, tuple[str, str]]
    stack: tuple[str, ...]
    unit: str  # what one sample of a rung is: "step" or "call"

    @property
    def top(self) -> str:
        return self.rungs[0]


TRAIN_LADDER = Ladder(
    Task.TRAIN, ("fit", "fit_pipelined", "step_loop", "step_loop_pipelined", "device_loop"),
    {"fit_and_input": ("fit", "step_loop"),
     "synchronisation": ("step_loop", "step_loop_pipelined"),
     "host_dispatch": ("step_loop_pipelined", "device_loop"),
     "device_work": ("device_loop", ""),
     "pipelining_gain": ("fit", "fit_pipelined")},
    ("device_work", "host_dispatch", "synchronisation", "fit_and_input"), "step")
# A served call (the predict task, core/lane/serving.py): host array in, host array out.
#     predict_on_batch  Keras' predict_on_batch, as the predict run times it with serve=keras
#     call_synced       the backend's compiled forward called directly, input from the host, answer to the host
#     call_resident     the same on an input already on the device, answer to the host
#     call_pipelined    K calls on resident inputs, one wait at the end: the answers stay on the device
#     device_loop       K forward passes inside one compiled call: the device's floor for this model
PREDICT_LADDER = Ladder(
    Task.PREDICT, ("predict_on_batch", "call_synced", "call_resident", "call_pipelined", "device_loop"),
    {"predict_machinery": ("predict_on_batch", "call_synced"),
     "input_transfer": ("call_synced", "call_resident"),
     "answer_back": ("call_resident", "call_pipelined"),
     "host_dispatch": ("call_pipelined", "device_loop"),
     "device_work": ("device_loop", "")},
    ("device_work", "host_dispatch", "answer_back", "input_transfer", "predict_machinery"), "call")
LADDERS = {ladder.task: ladder for ladder in (TRAIN_LADDER, PREDICT_LADDER)}
RUNGS, PARTS, STACK = TRAIN_LADDER.rungs, TRAIN_LADDER.parts, TRAIN_LADDER.stack


def ladder_of(task: Task) -> Ladder:
    return LADDERS.get(task, TRAIN_LADDER)


@register  # the wire carries it (AnatomyMeasured): the codec builds it by name
@dataclass(frozen=True)
class RungTime:
    """One rung's time per training step over its steady samples (warm-up left out).

    A sample is a window of `steps_per_sample` steps: its wall time divided by its steps. A
    pipelined rung cannot see single steps; a synced one could, but is summarised the same way so
    that the rungs' differences compare like with like.
    """

    median_ms: float
    p10_ms: float
    p90_ms: float
    n: int  # samples
    steps_per_sample: int = 1

    @classmethod
    def of(cls, per_step_ms: Sequence[float], steps_per_sample: int = 1) -> RungTime | None:
        stats = robust_stats(per_step_ms)
        if stats.n == 0:
            return None
        return cls(stats.median, stats.p10, stats.p90, stats.n, steps_per_sample)

    @property
    def half_spread_ms(self) -> float:
        return (self.p90_ms - self.p10_ms) / 2 if math.isfinite(self.p90_ms - self.p10_ms) else 0.0

    def to_json(self) -> JsonObject:
        return {"median_ms": self.median_ms, "p10_ms": self.p10_ms, "p90_ms": self.p90_ms, "n": self.n,
                "steps_per_sample": self.steps_per_sample}


@dataclass(frozen=True)
class Part:
    """A part of the step: `ms` as shown (0 when the difference is within the spread, never negative),
    `raw_ms` the plain difference of the medians."""

    ms: float
    raw_ms: float
    within_spread: bool

    def to_json(self) -> JsonObject:
        return {"ms": self.ms, "raw_ms": self.raw_ms, "within_spread": self.within_spread}


def part_between(upper: RungTime, lower: RungTime | None) -> Part:
    """upper − lower, or ≈0 when that is within the larger of the two rungs' half p10–p90 spreads.

    A difference below minus the spread (the rung with less to do took longer) is also shown as
    ≈0: a part of a step cannot take negative time, so that is noise the spread did not cover,
    and `parts_of` names it.
    """
    if lower is None:
        return Part(upper.median_ms, upper.median_ms, False)
    diff = upper.median_ms - lower.median_ms
    if diff <= max(upper.half_spread_ms, lower.half_spread_ms):
        return Part(0.0, diff, True)
    return Part(diff, diff, False)


def parts_of(rungs: dict[str, RungTime | None], ladder: Ladder = TRAIN_LADDER
             ) -> tuple[dict[str, Part | None], dict[str, str]]:
    """Every part the measured rungs allow, and a sentence for each part that is missing or inverted."""
    parts: dict[str, Part | None] = {}
    notes: dict[str, str] = {}
    for name, (above, below) in ladder.parts.items():
        upper, lower = rungs.get(above), rungs.get(below) if below else None
        missing = [r for r in (above, below) if r and rungs.get(r) is None]
        if missing:
            parts[name] = None
            notes[name] = f"needs {' and '.join(missing)}, which was not measured"
            continue
        assert upper is not None
        part = parts[name] = part_between(upper, lower)
        if lower is not None and part.within_spread and part.raw_ms < -max(upper.half_spread_ms, lower.half_spread_ms):
            notes[name] = (f"{below} took {-part.raw_ms:.3g} ms longer than {above}, beyond their spread; a part "
                           f"of a {ladder.unit} cannot take negative time, so it is shown as ≈0")
    return parts, notes


@register
@dataclass(frozen=True)
class AnatomyPoint:
    """The anatomy of one model on one lane: each rung's time per step (None: could not run, `reasons`
    says why), and what the lane measured it with."""

    lane: str
    device: str
    backend: str
    widths: tuple[int, ...]
    batch_size: int
    flops_per_batch: int
    rungs: dict[str, RungTime | None]
    reasons: dict[str, str] = field(default_factory=dict)  # rung → why it is null
    notes: tuple[str, ...] = ()  # what the reader needs to read the figures right
    window_steps: int = 0  # K: steps per window of the pipelined rungs and per device_loop call
    losses: dict[str, float] = field(default_factory=dict)  # the same-loss check, per rung, when asked
    settings: RunSettings = field(default_factory=RunSettings)  # what the lane measured it with
    seconds: float = NAN  # how long the lane took to measure it
    task: Task = Task.TRAIN  # the rungs of a training step, or of a served call (its Ladder)

    @property
    def width(self) -> int:
        return self.widths[0] if self.widths else 0

    @property
    def ladder(self) -> Ladder:
        return ladder_of(self.task)

    @property
    def top(self) -> RungTime | None:
        """The rung the run's own clock times: fit for a training step, predict_on_batch for a call."""
        return self.rungs.get(self.ladder.top)

    def rung(self, name: str) -> RungTime | None:
        return self.rungs.get(name)

    def parts(self) -> dict[str, Part | None]:
        return parts_of(self.rungs, self.ladder)[0]

    def part_notes(self) -> dict[str, str]:
        """Why a part is missing, or why one shown as ≈0 came out negative."""
        return parts_of(self.rungs, self.ladder)[1]

    @property
    def timing_cost(self) -> float:
        """fit / fit_pipelined: what reading the loss every step (Crossover's clock) costs, as a ratio."""
        fit, piped = self.rung("fit"), self.rung("fit_pipelined")
        if fit is None or piped is None or not piped.median_ms > 0:
            return NAN
        return fit.median_ms / piped.median_ms

    def to_json(self) -> JsonObject:
        """The shape `main.py anatomy --json` prints for a point."""
        parts, part_notes = parts_of(self.rungs, self.ladder)
        reasons: JsonObject = dict(self.reasons)
        reasons.update({f"part {name}": text for name, text in part_notes.items() if parts[name] is None})
        cost = self.timing_cost
        return {"lane": self.lane, "width": self.width, "widths": [w for w in self.widths], "batch_size": self.batch_size,
                "backend": self.backend, "device": self.device, "flops_per_batch": self.flops_per_batch,
                "task": str(self.task),
                "rungs": {name: (r.to_json() if (r := self.rungs.get(name)) else None) for name in self.ladder.rungs},
                "parts": {name: (p.to_json() if p else None) for name, p in parts.items()},
                "reasons": reasons,
                "notes": [*self.notes, *(text for name, text in part_notes.items() if parts[name] is not None)],
                "timing_cost": cost if math.isfinite(cost) else None, "window_steps": self.window_steps,
                "losses": {k: v for k, v in self.losses.items()}, "seconds": self.seconds if math.isfinite(self.seconds) else None,
                "settings": self.settings.to_json()}


@register
@dataclass(frozen=True)
class AnatomyMeasured:
    """A lane's answer to AnatomyJob (core/messages.py), the message beside the type it carries."""

    point: AnatomyPoint | None  # None when it could not be measured; `error` says why
    error: str = ""


def stacked(point: AnatomyPoint) -> list[tuple[str, float]]:
    """The synced step (`fit`; a call: `predict_on_batch`) as (part, ms) segments in its ladder's stack order, then
    ("rest", ms) for what parts shown as ≈0 leave unattributed. Segments never add up past the top rung: where a
    lower rung came out above it (noise), the part is cut at the total."""
    fit = point.top
    if fit is None:
        return []
    parts, out, total = point.parts(), [], 0.0
    for name in point.ladder.stack:
        part = parts.get(name)
        if part is None or not part.ms > 0 or total >= fit.median_ms:
            continue
        ms = min(part.ms, fit.median_ms - total)
        out.append((name, ms))
        total += ms
    if fit.median_ms - total > 0.005 * fit.median_ms:
        out.append(("rest", fit.median_ms - total))
    return out


def point_from_json(point: Mapping[str, JsonValue]) -> AnatomyPoint:
    """A point as `main.py anatomy --json` printed it (figures JSON had no room for are NaN again). Read by key: a
    wrong shape raises, and the callers say so."""
    data: Any = point

    def num(x: float | int | str | None) -> float:
        return NAN if x is None else float(x)

    ladder = ladder_of(Task(data.get("task") or Task.TRAIN))
    rungs = {name: None if (r := (data.get("rungs") or {}).get(name)) is None else
             RungTime(num(r["median_ms"]), num(r["p10_ms"]), num(r["p90_ms"]), int(r.get("n", 0)),
                      int(r.get("steps_per_sample", 1))) for name in ladder.rungs}
    return AnatomyPoint(
        lane=data["lane"], device=data.get("device", ""), backend=data.get("backend", ""),
        widths=tuple(data.get("widths") or (data["width"],)), batch_size=int(data.get("batch_size", 0)),
        flops_per_batch=int(data.get("flops_per_batch") or 0), rungs=rungs,
        reasons={k: v for k, v in (data.get("reasons") or {}).items() if k in ladder.rungs},
        window_steps=int(data.get("window_steps") or 0), losses=dict(data.get("losses") or {}),
        settings=RunSettings.from_json(data.get("settings")), seconds=num(data.get("seconds")),
        task=ladder.task)


MAX_WINDOW_STEPS = 64  # the most steps a window (and the on-device loop) holds


def window_plan(step_s: float, seconds: float) -> tuple[int, int]:
    """(K steps per window, windows) to time one turn of a rung in about `seconds` when a step takes `step_s`:
    at least 2 windows of at least 2 steps, so that a slow model still gets a median and a spread over its
    turns; about 6 windows a turn otherwise, of at most 64 steps.

    K is a power of two: the on-device loop is a program of K steps, so a K that follows every wobble of the
    first step's time would be a new program each run, compiled again instead of read from the compilation
    cache (step times within about ±40% of each other get the same K)."""
    step_s = step_s if math.isfinite(step_s) and step_s > 0 else 1e-3
    k = int(min(max(2 ** round(math.log2(max(seconds / step_s / 6, 1.0))), 2), MAX_WINDOW_STEPS))
    windows = int(min(max(seconds / (k * step_s), 2), 20))
    return k, windows


def floor_points(points: Sequence[SweepPoint]) -> list[SweepPoint]:
    """Each sweep point's floor (its device_loop rung, `floor_ms`) as a point of its own."""
    return [SweepPoint(p.lane, p.width, p.flops_per_batch, p.floor_ms, device=p.device, batch_size=p.batch_size)
            for p in points if math.isfinite(p.floor_ms) and p.floor_ms > 0]


def floor_crossovers(points: Sequence[SweepPoint]) -> list[Crossover]:
    """Where the faster lane would change if every step ran in an on-device loop: the floor crossover."""
    return find_crossovers(floor_points(points))
