"""How to measure each file of a report again: the command, from what its sidecar (or an anatomy's points) recorded:
lanes, the model (Crossover's, with its family, or a saved file), the task, and every setting that changes speed."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Mapping, Sequence

from ..analysis.anatomy import AnatomyPoint
from ..config import is_factory_kind
from ..json_data import JsonValue, as_map, as_seq
from ..paths import PROG


def _lanes_of(meta: Mapping[str, JsonValue]) -> list[str]:
    return list(dict.fromkeys(lane for run in as_seq(meta.get("runs")) for lane in as_map(as_map(run).get("lanes"))))


def _config_args(config: Mapping[str, JsonValue], with_widths: bool) -> list[str]:
    train, model = as_map(config.get("train")), as_map(config.get("model"))
    args = []
    saved, factory = as_map(model.get("saved")), as_map(model.get("factory"))
    if saved.get("path"):  # a user's own model: its file, and none of Crossover's model options
        args += ["--model", str(saved["path"])]
    elif factory.get("path"):  # a user's model factory: its file and function, and the width it was called with
        args += ["--model", f"{factory['path']}:{factory.get('function')}"]
        if with_widths and model.get("widths"):
            args += ["--widths", ",".join(str(w) for w in as_seq(model.get("widths")))]
    else:
        if with_widths and model.get("widths"):
            args += ["--widths", ",".join(str(w) for w in as_seq(model.get("widths")))]
        for key, flag in (("family", "--family"), ("cell", "--cell"), ("heads", "--heads")):
            value = model.get(key)
            if value is not None and not (key == "family" and value == "mlp") and (
                    key != "cell" or model.get("family") == "rnn") and (
                    key != "heads" or model.get("family") == "transformer"):
                args += [flag, str(value)]
        if model.get("dropout") is not None:
            args += ["--dropout", str(model["dropout"])]
    for key, flag in (("task", "--task"), ("serve", "--serve")):
        value = train.get(key)
        if value is not None and train.get("task") == "predict":
            args += [flag, str(value)]
    for key, flag in (("batch_size", "--batch-size"), ("optimizer", "--optimizer"),
                      ("learning_rate", "--learning-rate"), ("seed", "--seed"), ("preprocessing", "--preprocessing"),
                      ("data", "--data"), ("feeding", "--feeding"), ("steps_per_execution", "--steps-per-execution"),
                      ("samples", "--samples"), ("warmup_steps", "--warmup-steps")):
        if train.get(key) is not None:
            args += [flag, str(train[key])]
    if train.get("jit") is not None:
        args += ["--jit", "on" if train["jit"] else "off"]
    if train.get("mixed_precision"):
        args.append("--mixed-precision")
    return args


def anatomy_command(points: Sequence[AnatomyPoint], name: str) -> str:
    """The `anatomy` command that measures these points again: lanes, model, batch size and task as measured."""
    if not points:
        return f"{PROG} anatomy --json-file {shlex.quote(name)}"
    first = points[0]
    args = ["anatomy", "--lanes", ",".join(dict.fromkeys(p.lane for p in points))]
    family = str(first.settings.get("family") or "mlp")
    factory = is_factory_kind(family)  # a user's function: its file is not named in an anatomy's points
    if first.widths:
        args += ["--widths", ",".join(dict.fromkeys(str(p.width) for p in points))]
        args += ["--model", f"FILE.py:{family.partition(' ')[2] or 'FUNCTION'}"] if factory else ["--layers", str(len(first.widths))]
    if family not in ("mlp", "saved") and not factory:
        args += ["--family", family]
    if first.batch_size:
        args += ["--batch-size", str(first.batch_size)]
    if first.task == "predict":
        args += ["--task", "predict"]
    data = str(first.settings.get("data_source") or "")
    if data in ("mnist", "synthetic"):
        args += ["--data", data]
    if not first.widths:  # a saved model: its file is not named in an anatomy's points
        args += ["--model", "FILE.keras"]
    return f"{PROG} " + shlex.join([*args, "--json-file", name])


def reproduce_command(path: str, meta: Mapping[str, JsonValue], kind: str) -> str:
    """The command that measures the file again, from what its sidecar recorded ("" when it has no sidecar)."""
    runs = as_seq(meta.get("runs"))
    if not runs:
        return ""
    first = as_map(runs[0])
    lanes = ",".join(_lanes_of(meta))
    config = as_map(first.get("config"))
    name = Path(path).name
    if kind == "sweep":
        sweep = as_map(meta.get("sweep"))
        widths = ",".join(str(w) for w in as_seq(sweep.get("widths")))
        saved = bool(as_map(as_map(config.get("model")).get("saved")))  # swept along batch size only: no widths
        args = ["sweep", "--lanes", lanes] + ([] if saved else ["--widths", widths])
        if sweep.get("layers") and not saved and not as_map(as_map(config.get("model")).get("factory")):
            args += ["--layers", str(sweep["layers"])]
        args += _config_args(config, with_widths=False)
        batches = [str(b) for b in as_seq(sweep.get("batch_sizes"))]
        if len(batches) > 1:
            args += ["--batch-sizes", ",".join(batches)]
        for key, flag in (("steady_steps", "--steady-steps"), ("seconds_per_point", "--seconds-per-point")):
            if sweep.get(key) is not None:
                args += [flag, str(sweep[key])]
        if sweep.get("floor"):
            args.append("--floor")
    else:
        ramp = _ramp_args(first)
        args = ["run", "--lanes", lanes, *_config_args(config, with_widths=not ramp or "--ramp" not in ramp)]
        train = as_map(config.get("train"))
        if train.get("epochs") is not None and not ramp:
            args += ["--epochs", str(train["epochs"])]
        args += ramp
        if first.get("schedule"):
            args += ["--schedule", str(first["schedule"])]
    return f"{PROG} {shlex.join([*args, '--csv', name])}"


def _ramp_args(run: Mapping[str, JsonValue]) -> list[str]:
    """A ramp's own options (--ramp WIDTHS or --ramp-batch-sizes SIZES, its layers and each point's budget), from
    the segments its longest lane went through; none for a run of one model, or one whose model was dragged (a
    segment ended "switched": no command replays a hand's drags)."""
    lanes = [as_map(lane) for lane in as_map(run.get("lanes")).values()]
    segments = max((as_seq(lane.get("segments")) for lane in lanes), key=len, default=[])
    if len(segments) < 2:
        return []
    ended = [as_map(as_map(seg).get("summary")).get("status") for seg in segments]
    if "switched" in ended:
        return []
    widths = [tuple(as_seq(as_map(seg).get("widths"))) for seg in segments]
    batches = [str(as_map(seg).get("batch_size")) for seg in segments]
    train = as_map(as_map(run.get("config")).get("train"))
    args: list[str] = []
    if len(set(widths)) > 1:
        args += ["--ramp", ",".join(str(w[0]) for w in widths if w)]
        if widths[0] and len(widths[0]) > 1:
            args += ["--layers", str(len(widths[0]))]
    elif len(set(batches)) > 1:
        args += ["--ramp-batch-sizes", ",".join(batches)]
    else:
        return []
    steps, warmup = train.get("max_steps"), train.get("warmup_steps")
    if isinstance(steps, int) and isinstance(warmup, int):
        args += ["--steady-steps", str(steps - warmup)]
    if train.get("max_seconds") is not None:
        args += ["--seconds-per-point", str(train["max_seconds"])]
    return args
