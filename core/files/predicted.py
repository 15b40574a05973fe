"""A device profile's lane asked for a model: what the window draws as a predicted lane and a report lists.

The window and the report cannot reach the `predict` command (core/cli sits above both), so the step from a run's
config to a prediction lives here, below them: the model's kind, depth, batch size and FLOPs per sample, on the
profile's lane with the settings the config runs with (a profile may hold one lane twice, fed from the host and
from the device). Predictions never become points: nothing here makes a SweepRow or a finding.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from ..analysis.prediction import Prediction, predict
from ..config import RunConfig, Task
from .device_profile import DeviceProfile, ProfileLane


def speed_settings(config: RunConfig) -> dict[str, str]:
    """The settings of `config` that pick a profile's lane among those of one name (ProfileLane.settings' words)."""
    train = config.train
    return {"feeding": train.feeding, "mixed_precision": "on" if train.mixed_precision else "off",
            "steps_per_execution": str(train.steps_per_execution or 1)}


def predict_config(config: RunConfig, lane: ProfileLane) -> Prediction:
    """The prediction for `config` on the profile lane: its kind, depth, batch size and FLOPs per sample (as the
    `predict` command asks it)."""
    model = config.model
    per_sample = model.flops_per_batch(1, forward=config.train.task == Task.PREDICT)
    layers = len(model.widths) if model.widths else (model.figures.layers if model.figures else 1)
    return predict(lane.lines, model.kind, config.train.task, config.train.batch_size, per_sample, layers)


def has_widths(config: RunConfig) -> bool:
    """Crossover's own models have widths to move along; a saved model or a factory's has its own."""
    return config.model.saved is None and config.model.factory is None and bool(config.model.widths)


def at_width(config: RunConfig, width: int) -> RunConfig:
    """`config` with every hidden layer `width` wide (its depth kept)."""
    return dataclasses.replace(config, model=dataclasses.replace(config.model, widths=(width,) * len(config.model.widths)))


@dataclass(frozen=True)
class PredictedPoint:
    """One width of a predicted lane: the model there, its FLOPs per timed step, and what the profile says."""

    width: int
    flops_per_batch: int
    prediction: Prediction


@dataclass(frozen=True)
class PredictedLane:
    """A lane of a device profile, named as the profile names it, chosen to be predicted."""

    profile: DeviceProfile
    lane: str

    @property
    def key(self) -> tuple[str, str]:
        """The profile (its file, or its name where it was made here) and the lane: one predicted lane each."""
        return (self.profile.path or self.profile.name, self.lane)

    def lane_for(self, config: RunConfig) -> ProfileLane | None:
        """The profile's lane of this name with the settings `config` runs with, where it has them, else its first."""
        return self.profile.lane(self.lane, speed_settings(config))

    def predict(self, config: RunConfig) -> Prediction:
        lane = self.lane_for(config)
        return predict_config(config, lane) if lane is not None else Prediction(refused="no task")

    def along(self, config: RunConfig, widths: Sequence[int]) -> list[PredictedPoint]:
        """The model at each width (every layer that wide), predicted; [] for a model without widths to move."""
        lane = self.lane_for(config)
        if lane is None or not has_widths(config):
            return []
        out = []
        for w in sorted(set(widths)):
            c = at_width(config, w)
            out.append(PredictedPoint(w, c.flops_per_batch, predict_config(c, lane)))
        return out


@dataclass(frozen=True)
class AskedPrediction:
    """A predicted lane asked for one model (`config`) and, along its width, at `widths` (the map's): a report's
    Predictions section lists each."""

    lane: PredictedLane
    config: RunConfig
    widths: tuple[int, ...] = ()
