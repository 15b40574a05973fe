"""A user's own model, inspected by a lane before anything is timed: its shapes, classes, parameters and FLOPs: a
saved model's file, or a model factory's function at every width it will be timed at."""
from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Sequence

from ..config import FACTORY, ConfigError, FactoryModel, FactoryWidth, LaneSpec, RunConfig, SavedModel
from ..engine.pool import LanePool
from ..engine.remote.model_files import sending_problem
from ..messages import InspectJob, Inspected, RequestCancelled


class Stopped(ConfigError):
    """A stop signal (or the window's Stop) came while a lane inspected a user's model: nothing was measured. A
    ConfigError, so that a view that says why a model cannot be used says this too."""

INSPECT_TIMEOUT_S = 300.0  # loading a big model file; the lane's own import is waited for before


def _ask(pool: LanePool, spec: LaneSpec, job: InspectJob, cancel: threading.Event | None) -> SavedModel:
    """The lane's figures of the model, named by this machine's path (a remote lane inspects its own copy)."""
    lane = pool.get(spec)
    # The import is waited for as any lane's start is; the inspection itself within the watchdog's limit (a lane
    # stuck in a factory that never returns beats its heartbeat all the same, and would never be stopped).
    reply = lane.request(job, Inspected, INSPECT_TIMEOUT_S, cancel, work_limit_s=lane.watchdog_s)
    if isinstance(reply, RequestCancelled):
        raise Stopped(f"stopped while {spec.name} inspected {Path(job.path).name}")
    if not isinstance(reply, Inspected):
        raise ConfigError(f"{spec.name} could not inspect {job.path}: {reply.reason}")
    if reply.saved is None:
        raise ConfigError(reply.error)
    return dataclasses.replace(reply.saved, path=job.path)


def inspecting_lane(lanes: Sequence[LaneSpec]) -> LaneSpec:
    """The lane that inspects a user's model: one of this machine's where there is one (its file is here), else
    the first (a remote lane inspects the copy it was sent)."""
    return next((lane for lane in lanes if not lane.host), lanes[0])


def sending_problems(lanes: Sequence[LaneSpec], path: str, size_bytes: int) -> list[str]:
    """Why the model file at `path` cannot be sent to the remote lanes among `lanes` (sentences; none: it can)."""
    hosts = dict.fromkeys(lane.host for lane in lanes if lane.host)
    return [p for p in (sending_problem(size_bytes, Path(path).name, host) for host in hosts) if p]


def inspect_saved_model(pool: LanePool, spec: LaneSpec, saved: SavedModel,
                        cancel: threading.Event | None = None) -> SavedModel:
    """The model as the lane `spec` found it in its file (a remote lane: in the copy it was sent); a ConfigError
    with the lane's sentence if it cannot be used."""
    return _ask(pool, spec, InspectJob(saved.path, saved.sha256, saved.size_bytes), cancel)


def inspect_factory(pool: LanePool, spec: LaneSpec, factory: FactoryModel, widths: Sequence[int],
                    cancel: threading.Event | None = None) -> FactoryModel:
    """`factory` with the model FUNCTION(width) builds at each of `widths` (those not inspected yet) as the lane
    `spec` found it; a ConfigError with the lane's sentence for the first width that cannot be used, or when two
    widths' models take different inputs or classes (every width of one factory is fed the same data)."""
    found = []
    for width in dict.fromkeys(widths):
        if factory.at(width) is not None or (cancel is not None and cancel.is_set()):
            continue
        model = _ask(pool, spec, InspectJob(factory.path, factory.sha256, factory.size_bytes, factory, width), cancel)
        found.append(FactoryWidth(width, model))
    factory = factory.with_built(found)
    first = factory.built[0] if factory.built else None
    for other in factory.built[1:]:
        if first is not None and (other.model.input_shape, other.model.classes, other.model.outputs) != \
                (first.model.input_shape, first.model.classes, first.model.outputs):
            shape = lambda b: f"{'x'.join(map(str, b.model.input_shape))} inputs and {b.model.head_words}"  # noqa: E731
            raise ConfigError(f"{factory.function}({first.width}) takes {shape(first)}, {factory.function}"
                              f"({other.width}) {shape(other)}: every width of one factory must take the same input "
                              "and classes (the width may change only what is inside)")
    return factory


def with_saved_model(config: RunConfig, saved: SavedModel) -> RunConfig:
    return dataclasses.replace(config, model=dataclasses.replace(config.model, family="saved", widths=(), saved=saved))


def with_factory(config: RunConfig, factory: FactoryModel) -> RunConfig:
    return dataclasses.replace(config, model=dataclasses.replace(config.model, family=FACTORY, factory=factory))
