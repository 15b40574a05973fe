"""How to measure each file of a report again: the command, from what its sidecar (or an anatomy's points) recorded:
lanes, the model (Crossover's, with its family, or a saved file), the task, and every setting that changes speed."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Mapping, Sequence

from ..analysis.anatomy import AnatomyPoint
from ..config import RunConfig, Task, is_factory_kind
from ..families import Family, ModelKind
from ..files.run_files import sidecar_runs
from ..files.sweeps.files import SweepAskedFor
from ..json_data import JsonValue
from ..paths import PROG
from ..records import Status
from ..results import RunResult


def _config_args(config: RunConfig, with_widths: bool) -> list[str]:
    model, train = config.model, config.train
    args = []
    if model.saved is not None:  # a user's own model: its file, and none of Crossover's model options
        args += ["--model", model.saved.path]
    elif model.factory is not None:  # a user's model factory: its file and function, and the width it was called with
        args += ["--model", f"{model.factory.path}:{model.factory.function}"]
        if with_widths and model.widths:
            args += ["--widths", ",".join(map(str, model.widths))]
    else:
        if with_widths and model.widths:
            args += ["--widths", ",".join(map(str, model.widths))]
        if model.family != Family.MLP:
            args += ["--family", model.family]
        if model.family == Family.RNN:
            args += ["--cell", model.cell]
        if model.family == Family.TRANSFORMER:
            args += ["--heads", str(model.heads)]
        args += ["--dropout", str(model.dropout)]
    if train.task == Task.PREDICT:
        args += ["--task", str(train.task), "--serve", train.serve]
    args += ["--batch-size", str(train.batch_size), "--optimizer", train.optimizer,
             "--learning-rate", str(train.learning_rate), "--seed", str(train.seed),
             "--preprocessing", train.preprocessing, "--data", train.data, "--feeding", train.feeding,
             "--steps-per-execution", str(train.steps_per_execution)]
    if train.samples is not None:
        args += ["--samples", str(train.samples)]
    args += ["--warmup-steps", str(train.warmup_steps)]
    if train.jit is not None:
        args += ["--jit", "on" if train.jit else "off"]
    if train.mixed_precision:
        args.append("--mixed-precision")
    return args


def anatomy_command(points: Sequence[AnatomyPoint], name: str) -> str:
    """The `anatomy` command that measures these points again: lanes, model, batch size and task as measured."""
    if not points:
        return f"{PROG} anatomy --json-file {shlex.quote(name)}"
    first = points[0]
    args = ["anatomy", "--lanes", ",".join(dict.fromkeys(p.lane for p in points))]
    family = first.settings.family or "mlp"
    factory = is_factory_kind(family)  # a user's function: its file is not named in an anatomy's points
    if first.widths:
        args += ["--widths", ",".join(dict.fromkeys(str(p.width) for p in points))]
        args += (["--model", f"FILE.py:{ModelKind.parse(family).detail or 'FUNCTION'}"] if factory
                 else ["--layers", str(len(first.widths))])
    if family not in (Family.MLP, Family.SAVED) and not factory:
        args += ["--family", family]
    if first.batch_size:
        args += ["--batch-size", str(first.batch_size)]
    if first.task == Task.PREDICT:
        args += ["--task", str(Task.PREDICT)]
    data = first.settings.data_source
    if data in ("mnist", "synthetic"):
        args += ["--data", data]
    if not first.widths:  # a saved model: its file is not named in an anatomy's points
        args += ["--model", "FILE.keras"]
    return f"{PROG} " + shlex.join([*args, "--json-file", name])


def reproduce_command(path: str, meta: Mapping[str, JsonValue], kind: str,
                      runs: Sequence[RunResult] | None = None) -> str:
    """The command that measures the file again, from what its sidecar recorded ("" when it records no run): its
    runs (`runs`, where the caller has read them) and its sweep's settings as their own readers give them."""
    if runs is None:
        runs = sidecar_runs(meta)
    if not runs:
        return ""
    first = runs[0]
    lanes = ",".join(dict.fromkeys(lane for run in runs for lane in run.lanes))
    config = first.config
    name = Path(path).name
    if kind == "sweep":
        sweep = SweepAskedFor.of_sidecar(meta) or SweepAskedFor()
        saved = config.model.saved is not None  # swept along batch size only: no widths
        args = ["sweep", "--lanes", lanes] + ([] if saved else ["--widths", ",".join(map(str, sweep.widths))])
        if sweep.layers and not saved and config.model.factory is None:
            args += ["--layers", str(sweep.layers)]
        args += _config_args(config, with_widths=False)
        if len(sweep.batch_sizes) > 1:
            args += ["--batch-sizes", ",".join(map(str, sweep.batch_sizes))]
        if sweep.steady_steps is not None:
            args += ["--steady-steps", str(sweep.steady_steps)]
        if sweep.seconds_per_point is not None:
            args += ["--seconds-per-point", str(sweep.seconds_per_point)]
        if sweep.floor:
            args.append("--floor")
        args += ["--passes", str(sweep.passes)]  # always: the default changed (1, then 5)
    else:
        ramp = _ramp_args(first)
        args = ["run", "--lanes", lanes, *_config_args(config, with_widths=not ramp or "--ramp" not in ramp)]
        if not ramp:
            args += ["--epochs", str(config.train.epochs)]
            if config.train.max_seconds is not None:  # the window's time limit: each lane's steady seconds
                args += ["--time-limit", str(config.train.max_seconds)]
        args += ramp
        args += ["--schedule", first.schedule.value]
    return f"{PROG} {shlex.join([*args, '--csv', name])}"


def _ramp_args(run: RunResult) -> list[str]:
    """A ramp's own options (--ramp WIDTHS or --ramp-batch-sizes SIZES, its layers and each point's budget), from
    the segments its longest lane went through; none for a run of one model, or one whose model was dragged (a
    segment ended "switched": no command replays a hand's drags)."""
    segments = max((lane.segments for lane in run.lanes.values()), key=len, default=[])
    if len(segments) < 2:
        return []
    if any(s.ended is not None and s.ended.summary.status == Status.SWITCHED for s in segments):
        return []
    widths = [s.started.widths for s in segments]
    batches = [str(s.started.batch_size) for s in segments]
    train = run.config.train
    args: list[str] = []
    if len(set(widths)) > 1:
        args += ["--ramp", ",".join(str(w[0]) for w in widths if w)]
        if widths[0] and len(widths[0]) > 1:
            args += ["--layers", str(len(widths[0]))]
    elif len(set(batches)) > 1:
        args += ["--ramp-batch-sizes", ",".join(batches)]
    else:
        return []
    if train.max_steps is not None:
        args += ["--steady-steps", str(train.max_steps - train.warmup_steps)]
    if train.max_seconds is not None:
        args += ["--seconds-per-point", str(train.max_seconds)]
    return args
