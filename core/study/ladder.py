"""What would make the GPU win sooner: the knobs that move a step's fixed cost, each swept, ranked by the slower lane.

`sweep --ladder` and the Sweep tab's action run the same sweep once per knob setting (steps per
execution 1/8/64, data on the device, jit on and off, mixed precision, each installed backend)
and rank the settings by the slower lane's step time at the smallest width, where the fixed cost
is most of a step, with the crossover each setting gives. A setting that cannot apply to these
lanes is listed with the reason and not run.
"""
from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from ..analysis.crossings import find_crossovers
from ..analysis.refinement import RefineTarget
from ..machine import INSTALL_HINT, LABEL
from ..config import BACKENDS, ConfigError, DeviceKind, LaneSpec, RunConfig
from ..engine.devices import backend_version
from ..engine.pool import LanePool
from .sweep import PointMeasured, SweepResult, SweepSpec, lane_points, run_sweeps
from ..files.sweeps.rows import group_rows
from ..words.sweep import other_lane
from ..words.numbers import fmt_num
from ..words.verdict import unit_of


@dataclass(frozen=True)
class KnobSetting:
    """One rung of the knob ladder: the sweep it runs on which lanes, or why it cannot run here."""

    label: str  # "base", "steps_per_execution=8", "backend=jax"…
    spec: SweepSpec
    lanes: tuple[LaneSpec, ...]
    reason: str = ""  # non-empty: not applicable to these lanes, and why


def _why_not(train_changes: dict, lanes: Sequence[LaneSpec]) -> str:
    """Why a setting cannot run on one of these lanes ("" when it can): the lanes would refuse it anyway."""
    for lane in lanes:
        if train_changes.get("mixed_precision") and lane.kind == DeviceKind.CPU:
            return f"mixed precision is for GPU lanes: on {lane.name}, a CPU, float16 only slows training"
        if train_changes.get("feeding") == "device" and lane.backend == "tensorflow":
            return f"data on the device needs the jax or torch backend: {lane.name} runs TensorFlow"
        if train_changes.get("steps_per_execution", 1) > 1 and lane.backend == "torch":
            return f"Keras on PyTorch runs one step per execution: {lane.name} runs PyTorch"
    return ""


def ladder_settings(base: SweepSpec, lanes: Sequence[LaneSpec],
                    installed: Callable[[str], bool] = lambda b: backend_version(b) is not None) -> list[KnobSetting]:
    """Every setting of the ladder, base first; those that cannot apply carry their reason."""
    # Each setting measures its points once: the ladder ranks settings by step time, and a second run per setting
    # would add one point to each of up to eight sweeps.
    spec = dataclasses.replace(base, calibrate=False, variant="base", recheck=False, passes=1)  # one pass a knob
    lanes = tuple(lanes)
    out = [KnobSetting("base", spec, lanes)]
    t = spec.base.train
    changes: list[tuple[str, dict]] = [(f"steps_per_execution={n}", {"steps_per_execution": n})
                                       for n in (1, 8, 64) if n != t.steps_per_execution]
    if t.feeding != "device":
        changes.append(("feeding=device", {"feeding": "device"}))
    changes += [(f"jit={'on' if on else 'off'}", {"jit": on}) for on in (True, False) if t.jit is not on]
    if not t.mixed_precision:
        changes.append(("mixed_precision=on", {"mixed_precision": True}))
    for label, change in changes:
        train = dataclasses.replace(t, **change)
        variant = dataclasses.replace(spec, base=RunConfig(spec.base.model, train), variant=label)
        out.append(KnobSetting(label, variant, lanes, _why_not(change, lanes)))
    for backend in BACKENDS:
        if all(lane.backend == backend for lane in lanes):
            continue  # that is the base
        moved = tuple(dataclasses.replace(lane, backend=backend) for lane in lanes)
        reason = "" if installed(backend) else f"{LABEL[backend]} is not installed: {INSTALL_HINT[backend]}"
        label = f"backend={backend}"
        out.append(KnobSetting(label, dataclasses.replace(spec, variant=label), moved,
                               reason or _why_not(dataclasses.asdict(t), moved)))
    return out


def run_ladder(pool: LanePool, settings: Sequence[KnobSetting], *,
               on_point: Callable[[PointMeasured], None] | None = None,
               cancel: threading.Event | None = None) -> list[SweepResult]:
    """Sweep every applicable setting, one after another (lanes one at a time); finished ones are kept on a stop."""
    cancel = cancel or threading.Event()
    runnable = [s for s in settings if not s.reason]
    total = sum(lane_points(s.lanes, [s.spec]) for s in runnable)
    results: list[SweepResult] = []
    done = 0

    def counted(point: PointMeasured) -> None:  # progress over the whole ladder, not per setting
        if on_point is not None:
            on_point(dataclasses.replace(point, done=done + point.done, total=total))

    for setting in runnable:
        if cancel.is_set():
            break
        results += run_sweeps(pool, setting.lanes, [setting.spec], on_point=counted, cancel=cancel)
        done += lane_points(setting.lanes, [setting.spec])  # every point of it, with rows or not
    return results


@dataclass(frozen=True)
class LadderRank:
    """A setting's place: the slower lane's median ms per step at the smallest width (or, along batch size, the
    smallest batch size: `width` is the x the user moves, in `unit`), and its crossover."""

    label: str
    width: int
    slower_lane: str
    slower_ms: float
    crossover: str  # in words
    unit: str = "units"  # core/words/verdict.unit_of: "samples per batch" along batch size

    @property
    def along_batch(self) -> bool:
        return self.unit == "samples per batch"

    @property
    def where(self) -> str:
        return f"batch size {self.width:,}" if self.along_batch else f"width {self.width:,}"


def rank_ladder(results: Sequence[SweepResult]) -> list[LadderRank]:
    """The measured settings, fastest slower lane first (a setting without a point on every lane last)."""
    ranks = []
    for res in results:
        points = [p for group in group_rows(res.rows).values() for p in group
                  if math.isfinite(p.median_ms) and p.median_ms > 0]
        lanes = sorted({p.lane for p in points})
        widths = sorted(set.intersection(*({p.width for p in points if p.lane == lane} for lane in lanes))
                        if lanes else set())
        if not widths:
            x = "batch size" if unit_of(points) == "samples per batch" else "width"
            ranks.append(LadderRank(res.spec.variant, 0, "", math.nan, f"no steady step on every lane at a common "
                                    f"{x} (with many steps per execution, raise --steady-steps)"))
            continue
        at = {p.lane: p.median_ms for p in points if p.width == widths[0]}
        slower = max(at, key=lambda lane: at[lane])
        found, unit = find_crossovers(points), unit_of(points)
        if found:
            words = "; ".join(f"{c.faster_above} faster above about {fmt_num(c.width, 2)} {unit} "
                              f"({other_lane(c)} below)" for c in found)
        elif len(lanes) > 1:
            words = f"no crossover in {'batch sizes' if unit == 'samples per batch' else 'widths'} {widths[0]}-{widths[-1]}"
        else:
            words = "one lane: nothing to cross"
        ranks.append(LadderRank(res.spec.variant, widths[0], slower, at[slower], words, unit))
    return sorted(ranks, key=lambda r: (not math.isfinite(r.slower_ms), r.slower_ms))


def ladder_lines(ranks: Sequence[LadderRank], settings: Sequence[KnobSetting]) -> list[str]:
    """The ranking in words, then each setting that was not run and why."""
    lines = [f"{i}. {r.label}: slower lane {r.slower_lane} {fmt_num(r.slower_ms)} ms per step at {r.where}; "
             f"{r.crossover}" if r.slower_lane else f"{i}. {r.label}: {r.crossover}" for i, r in enumerate(ranks, 1)]
    lines += [f"not run: {s.label}: {s.reason}" for s in settings if s.reason]
    return lines


def check_ladder(compare: str | None, refine: RefineTarget | None) -> None:
    if compare or refine is not None:
        raise ConfigError("--ladder runs its own settings: leave out --compare and --refine")


def ladder_heading(lanes: Sequence[LaneSpec], ranks: Sequence[LadderRank] = ()) -> str:
    """The knob ladder's heading: the GPU's question where a GPU lane runs, else the lanes it compares; ranked at
    the smallest width, or the smallest batch size where the ladder ran along batch size."""
    x = "batch size" if ranks and all(r.along_batch for r in ranks if r.slower_lane) else "width"
    if any(spec.kind == DeviceKind.GPU for spec in lanes):
        return f"What would make the GPU win sooner (ranked by the slower lane's ms per step at the smallest {x}):"
    if len(lanes) == 1:
        return (f"No GPU lane here: what would make {lanes[0].name}'s step cheaper (ranked by its ms per step at the "
                f"smallest {x}):")
    names = " and ".join(spec.name for spec in lanes)
    return (f"No GPU lane here: what would make {names} cross sooner (ranked by the slower lane's ms per step at "
            f"the smallest {x}):")
