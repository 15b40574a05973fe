"""A report's Predictions section: each predicted lane with its profile (name, machine, age, versions), the model's
predicted time with its interval, and the same along the model's widths; apart from the measured answer, which no
prediction enters. The window asks for its predicted lanes; `report --profile` asks for a profile's lanes on the
models of the report's files."""
from __future__ import annotations

from typing import Sequence

from ..config import RunConfig, Task
from ..files.predicted import AskedPrediction, PredictedLane, has_widths
from ..files.device_profile import DeviceProfile
from ..files.run_files import sidecar_runs
from ..words.numbers import fmt_count
from ..words.predicted import point_cells, predicted_label
from ..words.profile import prediction_words, profile_words, settings_note, unit
from .inputs import Inputs
from .parts import Section, Table, sentence, table
from .sections import segment_widths

TITLE = "Predictions"
APART = ("Predicted from device profiles (machines measured elsewhere), not measured: no prediction is part of the "
         "answer above, and none is a point of its pictures.")


def _model_words(config: RunConfig) -> str:
    task = " (one predict call)" if config.train.task == Task.PREDICT else ""
    return f"{config.model.label()}, batch {config.train.batch_size}{task}"


def predictions_section(asked: Sequence[AskedPrediction]) -> Section:
    """The section of `asked`: each profile once, said by profile_words, then each lane's prediction."""
    lines = [APART]
    tables: list[tuple[str, Table]] = []
    said: list[str] = []
    for a in asked:
        profile = a.lane.profile
        if profile.name not in said:
            said.append(profile.name)
            lines.append(sentence(f"Profile {profile_words(profile)}"))
        label = predicted_label(a.lane)
        task = a.config.train.task
        lane = a.lane.lane_for(a.config)
        note = settings_note(lane) if lane is not None else ""
        lines.append(sentence(f"{label}{note}, {_model_words(a.config)}: "
                              f"{prediction_words(a.lane.predict(a.config), task)}"))
        points = a.lane.along(a.config, a.widths)
        if points:
            layers = len(a.config.model.widths)
            caption = (f"{label}: {a.config.model.kind}, {fmt_count(layers, 'layer')} of each width, batch "
                       f"{a.config.train.batch_size}")
            tables.append((caption, table(["width", "FLOPs", f"predicted ms per {unit(task)}", "95% interval"],
                                          [point_cells(x, task) for x in points])))
    return Section(TITLE, "predictions", tuple(lines), (), tuple(tables))


def asked_of_files(inputs: Inputs, profiles: Sequence[DeviceProfile]) -> list[AskedPrediction]:
    """Every lane of `profiles` asked for each model the files measured: a sweep's along its widths, a ramp's along
    its segments' widths, a run's on its own model."""
    models: list[tuple[RunConfig, tuple[int, ...]]] = []
    for s in inputs.sweeps:
        runs = sidecar_runs(s.meta)
        if runs:
            models.append((runs[0].config, tuple(sorted({r.width for r in s.rows if r.width > 0}))))
    for item in inputs.runs:
        for run in item.runs:
            models.append((run.config, tuple(sorted(segment_widths(run)))))
    seen: set[tuple[object, ...]] = set()
    asked = []
    for config, widths in models:
        key = (config.model, config.train.batch_size, config.train.task, widths)
        if key in seen:
            continue
        seen.add(key)
        for profile in profiles:
            for name in dict.fromkeys(x.lane for x in profile.lanes):
                asked.append(AskedPrediction(PredictedLane(profile, name), config,
                                             widths if has_widths(config) and len(widths) > 1 else ()))
    return asked
