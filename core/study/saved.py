"""A user's saved model, inspected by a lane before anything is timed: its shapes, classes, parameters and FLOPs."""
from __future__ import annotations

import dataclasses
import threading

from ..config import ConfigError, LaneSpec, RunConfig, SavedModel
from ..engine.pool import LanePool
from ..messages import InspectJob, Inspected

INSPECT_TIMEOUT_S = 300.0  # loading a big model file; the lane's own import is waited for before


def inspect_saved_model(pool: LanePool, spec: LaneSpec, saved: SavedModel,
                        cancel: threading.Event | None = None) -> SavedModel:
    """The model as the lane `spec` found it in its file; a ConfigError with the lane's sentence if it cannot be used."""
    if spec.host:
        raise ConfigError(f"{spec.name}: a saved model is loaded by a lane on this machine (sending a model file to "
                          "another machine is not built): choose a local lane first")
    reply = pool.get(spec).request(InspectJob(saved.path, saved.sha256, saved.size_bytes), Inspected,
                                   INSPECT_TIMEOUT_S, cancel)
    if not isinstance(reply, Inspected):
        raise ConfigError(f"{spec.name} could not inspect {saved.path}: {reply.reason}")
    if reply.saved is None:
        raise ConfigError(reply.error)
    return reply.saved


def with_saved_model(config: RunConfig, saved: SavedModel) -> RunConfig:
    return dataclasses.replace(config, model=dataclasses.replace(config.model, family="saved", widths=(), saved=saved))
