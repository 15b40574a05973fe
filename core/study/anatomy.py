"""Asking lanes for the anatomy of models (core/analysis/anatomy.py): one lane at a time, one model after another.

Runs in the app (the CLI's main thread or a window's job thread); the lanes do the measuring.
"""
from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from ..analysis.anatomy import AnatomyMeasured, AnatomyPoint
from ..config import ConfigError, LaneSpec, RunConfig
from ..messages import AnatomyJob
from ..engine.pool import LanePool
from .measured import point_key

DEFAULT_SECONDS_PER_RUNG = 0.4
# A lane's start-up, compiling three programs and ten turns of timed steps: a big model on one
# CPU thread can take minutes; a lane that stays silent longer than this is closed.
ANATOMY_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class AnatomyOutcome:
    """One model on one lane: its anatomy, or the sentence saying why there is none."""

    lane: str
    config: RunConfig
    point: AnatomyPoint | None
    error: str = ""

    @property
    def width(self) -> int:
        return self.config.model.widths[0]


def anatomy_key(config: RunConfig) -> RunConfig:
    """What an anatomy depends on: the model and how it trains, not how long a run lasts; a model factory by its
    file (SHA-256), function and width, not by the widths a lane has counted so far (what it found of them)."""
    train = dataclasses.replace(config.train, epochs=1, max_steps=None, max_seconds=None, warmup_steps=5)
    return point_key(RunConfig(config.model, train))


def anatomy_configs(base: RunConfig, widths: Sequence[int] | None, layers: int | None) -> list[RunConfig]:
    """The models to dissect: `layers` hidden layers of each width, or the base model itself without widths."""
    if not widths:
        if layers is not None:
            raise ConfigError("--layers applies to --widths: each width is a model with that many hidden layers")
        return [base]
    depth = 2 if layers is None else layers
    if not 1 <= depth <= 8:
        raise ConfigError(f"{depth} hidden layers: choose 1-8")
    return [dataclasses.replace(base, model=dataclasses.replace(base.model, widths=(w,) * depth)) for w in widths]


def request_anatomy(pool: LanePool, spec: LaneSpec, config: RunConfig, *, rungs: tuple[str, ...] = (),
                    seconds_per_rung: float = DEFAULT_SECONDS_PER_RUNG, check_loss: bool = False,
                    cancel: threading.Event | None = None) -> AnatomyOutcome:
    lane = pool.get(spec)
    reply = lane.request(AnatomyJob(config, rungs, seconds_per_rung, check_loss), AnatomyMeasured,
                         ANATOMY_TIMEOUT_S, cancel)
    if isinstance(reply, AnatomyMeasured):
        point = reply.point
        if point is not None and point.lane != spec.name:  # a remote lane names itself as its machine does
            point = dataclasses.replace(point, lane=spec.name)
        return AnatomyOutcome(spec.name, config, point, reply.error)
    # A lane left mid-job would answer a later request with this job's result: start afresh next time.
    lane.close(timeout=0.5)
    return AnatomyOutcome(spec.name, config, None, reply.reason)


def measure_anatomies(pool: LanePool, lanes: Sequence[LaneSpec], configs: Sequence[RunConfig], *,
                      seconds_per_rung: float = DEFAULT_SECONDS_PER_RUNG, check_loss: bool = False,
                      cancel: threading.Event | None = None,
                      on_outcome: Callable[[AnatomyOutcome], None] | None = None) -> list[AnatomyOutcome]:
    """Every model on every lane, lanes one after another (never side by side: they would share cores)."""
    cancel = cancel or threading.Event()
    out: list[AnatomyOutcome] = []
    # The lanes' imports overlap one another, and so does the making of their data; both end before the first is timed.
    pool.ready(lanes, cancel, data_of=configs[0] if configs else None)
    for spec in lanes:
        for config in configs:
            if cancel.is_set():
                return out
            outcome = request_anatomy(pool, spec, config, seconds_per_rung=seconds_per_rung,
                                      check_loss=check_loss, cancel=cancel)
            if cancel.is_set() and outcome.point is None:
                return out  # cut short by the stop: not a failure
            out.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    return out


def measure_floor(pool: LanePool, spec: LaneSpec, config: RunConfig, cancel: threading.Event | None = None,
                  seconds: float = 0.3) -> tuple[float, str]:
    """The device_loop rung alone (sweep --floor): ms per step, or NaN and why."""
    outcome = request_anatomy(pool, spec, config, rungs=("device_loop",), seconds_per_rung=seconds, cancel=cancel)
    rung = outcome.point.rung("device_loop") if outcome.point is not None else None
    if rung is None:
        why = outcome.point.reasons.get("device_loop", "") if outcome.point is not None else outcome.error
        return math.nan, why
    return rung.median_ms, ""
