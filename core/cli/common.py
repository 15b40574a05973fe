"""What every command of the CLI shares: exit codes, the model and training options, lane checks, a cancellable run."""
from __future__ import annotations

import argparse
import dataclasses
import threading
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..config import (ARRIVALS, FACTORY, RATE_REQUESTS, MAX_SCHEDULE_S, MIN_HOLD_S, MNIST_TRAIN_SIZE, SAVED, FEEDINGS, OPTIMIZERS, PREPROCESSING, SERVE_WAYS, TASKS, ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec,
                      parse_lanes, parse_widths)
from ..families import CELLS, FAMILIES
from ..json_data import JsonValue
from ..engine.devices import lane_problems, memory_problem
from ..files.atomic import ExportError
from ..engine.lanes import WATCHDOG_CEILING_S, WATCHDOG_S, watchdog_problem
from ..files import autosave
from ..files.live import RunFiles, check_output_pair
from ..files.npz_check import DataError, inspect_npz
from ..files.model_factory import check_factory, is_factory_arg
from ..files.saved_model import check_saved_model
from ..study.saved import (inspect_factory, inspect_saved_model, inspecting_lane, sending_problems, with_factory,
                           with_saved_model)
from ..paths import log_dir_problem
from ..presets import PRESETS
from ..engine.machine_load import LoadWatch
from ..engine.pool import LanePool
from ..records import BUSY_SHARE
from ..words.numbers import fmt_duration, fmt_rate
from ..plurals import plural

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig the options describe, on top of `base` (a preset's, or the defaults)."""
    if base is None:
        base = PRESETS[args.preset].config if getattr(args, "preset", None) else RunConfig()
    model = base.model
    path = getattr(args, "model", None)
    if path and getattr(args, "preset", None):
        raise ConfigError(f"--preset {args.preset} and --model {path}: a preset is one of Crossover's models, --model "
                          "your own; give one of them")
    if path and is_factory_arg(path):  # a user's function of the width: checked here (never imported), run by lanes
        given = [f"--{key}" for key in ("family", "cell", "heads", "dropout") if getattr(args, key, None) is not None]
        if given:
            raise ConfigError(f"--model {path}: {', '.join(given)} describe Crossover's own models; your function "
                              "builds the whole model from its width")
        factory = check_factory(path)
        widths = parse_widths(args.widths) if args.widths is not None else base.model.widths[:1] or (128,)
        if len(widths) != 1:
            raise ConfigError(f"--widths {args.widths}: {factory.function}(width) takes one width; sweep several "
                              "with `sweep --widths`")
        model = ModelSpec(widths=widths, family=FACTORY, factory=factory)
        path = None
    if path:  # a user's own saved model: checked here, inspected by a lane once the lanes are up (resolve_saved)
        given = [f"--{key}" for key in ("widths", "family", "cell", "heads", "dropout") if getattr(args, key, None) is not None]
        if given:
            raise ConfigError(f"--model {path}: {', '.join(given)} describe Crossover's own models; a saved model "
                              "is used as saved (its axis is batch size)")
        model = ModelSpec(widths=(), family=SAVED, saved=check_saved_model(path))
    if args.widths is not None and model.factory is None:
        model = dataclasses.replace(model, widths=parse_widths(args.widths))
    if args.dropout is not None:
        model = dataclasses.replace(model, dropout=args.dropout)
    family = {key: value for key in ("family", "cell", "heads") if (value := getattr(args, key, None)) is not None}
    if family:  # the model family (core/families.py) and its own settings, checked together
        model = dataclasses.replace(model, **family)
    changes: dict[str, Any] = {}
    for key in ("batch_size", "epochs", "optimizer", "learning_rate", "seed", "steps_per_execution",
                "samples", "data", "preprocessing", "feeding", "warmup_steps", "task", "serve", "arrival_rate",
                "arrivals", "max_batch"):
        value = getattr(args, key, None)
        if value is not None:
            changes[key] = value
    if getattr(args, "arrival_rate", None) is not None and "batch_size" not in changes:
        changes["batch_size"] = 1  # a request at an arrival rate is one sample unless --batch-size says more
    if getattr(args, "requests", None) is not None:
        if getattr(args, "arrival_rate", None) is None and not getattr(args, "arrival_rates", None):
            raise ConfigError("--requests counts the requests that arrive at a rate: give --arrival-rate too")
        if not 1 <= args.requests <= 10**7:
            raise ConfigError(f"--requests {args.requests}: choose 1-10,000,000")
        changes["max_steps"] = args.requests
    if args.jit is not None:
        changes["jit"] = args.jit == "on"
    if getattr(args, "mixed_precision", False):
        changes["mixed_precision"] = True
    data: str = getattr(args, "data", None) or ""
    if data.endswith(".npz"):
        lanes = getattr(args, "lanes", None)
        loaders = sum(1 for lane in parse_lanes(lanes) if not lane.host) if isinstance(lanes, str) else 1
        try:
            inspect_npz(data, loaders)  # every lane on this machine loads the whole file
        except DataError as exc:
            raise ConfigError(str(exc)) from None
    config = RunConfig(ModelSpec(**dataclasses.asdict(model)), TrainSpec(**{**dataclasses.asdict(base.train), **changes}))
    check_steps(config)
    return config


def check_steps(config: RunConfig) -> None:
    """Refuse, before any lane starts, what the data cannot give: a batch larger than MNIST (or its stand-in)
    holds, or more steps per execution than an epoch has (a run would 'complete' with no steady batch)."""
    t = config.train
    if t.data.endswith(".npz") or config.model.saved is not None:
        return  # a file's size was checked with the file (inspect_npz); a saved model's data is its own
    samples = min(t.samples or MNIST_TRAIN_SIZE, MNIST_TRAIN_SIZE)
    if t.batch_size > samples:
        raise ConfigError(f"batch size {t.batch_size:,} is more than the {samples:,} samples "
                          f"{'the sample limit allows' if t.samples and t.samples < MNIST_TRAIN_SIZE else 'MNIST holds'}: "
                          "lower the batch size")
    steps = samples // t.batch_size
    if t.steps_per_execution > steps:
        raise ConfigError(f"steps per execution {t.steps_per_execution:,}: an epoch of {samples:,} samples in batches "
                          f"of {t.batch_size:,} has {steps:,} steps; choose at most {steps:,} (or more samples)")


def check_schedule(config: RunConfig, rates: str = "--arrival-rate") -> None:
    """Refuse, before any lane starts, an arrival schedule that would run longer than MAX_SCHEDULE_S a lane (its
    requests over its rate), saying how long and how to shorten it."""
    t = config.train
    if t.arrival_rate is None:
        return
    seconds = t.rate_requests / t.arrival_rate
    if seconds <= MAX_SCHEDULE_S:
        return
    length = fmt_duration(seconds) if seconds < 100 * 86_400 else "more than 100 days"
    raise ConfigError(f"{rates}: {t.rate_requests:,} requests at {fmt_rate(t.arrival_rate)} arrive over "
                      f"{length} a lane, longer than the {MAX_SCHEDULE_S / 3600:g} h an arrival schedule may run: "
                      f"give a higher rate{',' if rates == '--arrival-rate' else ' or'} fewer requests (--requests; a "
                      f"rate is judged held from {MIN_HOLD_S:g} s of arrivals)"
                      + (", or a time limit (--time-limit)" if rates == "--arrival-rate" else ""))


def resolve_factory(config: RunConfig, pool: LanePool, lanes: Sequence[LaneSpec],
                    widths: Sequence[int] = (), cancel: threading.Event | None = None) -> RunConfig:
    """`config` with its model factory's model at each of `widths` (default: the config's own width) as a lane of
    this machine built and counted it, the data checked to fit and the memory of the largest checked; the config
    itself when it holds no factory."""
    factory = config.model.factory
    if factory is None:
        return config
    widths = tuple(widths) or config.model.widths
    todo = [w for w in dict.fromkeys(widths) if factory.at(w) is None]
    if not todo:
        return config
    problems = sending_problems(lanes, factory.path, factory.size_bytes)
    if problems:
        raise ConfigError("; ".join(problems))
    first = inspecting_lane(lanes)
    say(f"model factory {factory.path}:{factory.function} (sha256 {factory.sha256[:12]}…): {first.name} imports "
        f"it (your code runs there) and builds {plural(len(todo), 'width')} {', '.join(map(str, todo))}")
    for lane in lanes:  # the other lanes import their frameworks meanwhile, not after
        if lane != first:
            pool.get(lane).start()
    factory = inspect_factory(pool, first, factory, widths, cancel)
    config = with_factory(config, factory)
    for width in todo:
        found = factory.at(width)
        if found is None:  # cancelled before this width was inspected
            raise ConfigError(f"{factory.function}({width}) was not inspected: the command was stopped")
        problem = found.data_problem(config.train.data)
        if problem:
            raise ConfigError(problem)
        note = f"; FLOPs {found.flops_note}" if found.flops_note else ""
        say(f"{factory.function}({width}): {found.name}, input {'x'.join(map(str, found.input_shape))}, "
            f"{found.head_words}, {found.params:,} parameters, {found.forward_flops / 1e6:,.3f} MFLOP per "
            f"sample forward (a walk of its layers){note}")
    check_memory([dataclasses.replace(config, model=dataclasses.replace(config.model, widths=(w,))) for w in widths],
                 lanes)
    return config


def resolve_saved(config: RunConfig, pool: LanePool, lanes: Sequence[LaneSpec],
                  cancel: threading.Event | None = None) -> RunConfig:
    """`config` with its saved model as a lane of this machine found it (shapes, classes, FLOPs), and the memory it
    needs checked; a model factory's model at the config's width likewise (resolve_factory); the config itself
    when it holds neither."""
    if config.model.factory is not None:
        return resolve_factory(config, pool, lanes, cancel=cancel)
    saved = config.model.saved
    if saved is None or saved.inspected:
        return config
    problems = sending_problems(lanes, saved.path, saved.size_bytes)
    if problems:
        raise ConfigError("; ".join(problems))
    first = inspecting_lane(lanes)
    say(f"model file {saved.path} (sha256 {saved.sha256[:12]}…): loading it in {first.name}, safe mode on")
    for lane in lanes:  # the other lanes import their frameworks meanwhile, not after
        if lane != first:
            pool.get(lane).start()
    found = inspect_saved_model(pool, first, saved, cancel)
    problem = found.data_problem(config.train.data)
    if problem:
        raise ConfigError(problem)
    config = with_saved_model(config, found)
    check_memory([config], lanes)
    note = f"; FLOPs {found.flops_note}" if found.flops_note else ""
    say(f"{found.name}: input {'x'.join(map(str, found.input_shape))}, {found.head_words}, {found.params:,} "
        f"parameters, {found.forward_flops / 1e6:,.2f} MFLOP per sample forward{note}")
    return config


def check_memory(configs: Sequence[RunConfig], lanes: Sequence[LaneSpec], free: int | None = None) -> None:
    """Refuse, before any lane starts, the largest model of a run or sweep when the lanes of this machine's CPU
    cannot hold it (core/engine/devices.py: memory_problem)."""
    problem = memory_problem(configs, lanes, free)
    if problem:
        raise ConfigError(problem)


def lanes_can_run(lanes: Sequence[LaneSpec], pool: LanePool) -> bool:
    """Print why any lane cannot run here (no GPU, backend missing); True when all can. Where all can, and other
    work already keeps this machine's cores busy, say so before anything is measured."""
    problems = lane_problems(list(lanes), pool)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    note = log_dir_problem()
    if note and not problems:
        print(f"note: {note}", file=sys.stderr)
    if not problems:
        busy = busy_before_start()
        if busy:
            print(f"note: {busy}", file=sys.stderr)
    return not problems


BUSY_LOOK_S = 0.3  # how long the machine is watched before a study starts


def busy_before_start(seconds: float = BUSY_LOOK_S) -> str:
    """"other work uses 48% of this machine's CPU now (load 2.9): …", or "" on a quiet machine: what other
    processes took of the cores over `seconds`, before any lane of this command runs."""
    watch = LoadWatch()
    watch.share()
    time.sleep(seconds)
    share = watch.share()
    if not (math.isfinite(share) and share > BUSY_SHARE):
        return ""
    return (f"other work uses {100 * share:.0f}% of this machine's CPU now (load {os.getloadavg()[0]:.1f}): figures "
            "measured beside it may not hold, and each point says how busy its lane's cores were")


def open_run_files(path: str | None, host: Mapping[str, JsonValue],
                   extra: Mapping[str, JsonValue] | None = None) -> RunFiles | None:
    """The --csv files, checked and claimed before any lane starts (ConfigError: exit 2); None without --csv."""
    if path is None:
        return None
    check_output_pair(path)
    check_rescue_folder()
    try:
        files = RunFiles(path, host, extra=extra)
    except ExportError as exc:  # another Crossover is writing it, or its lock file is not one of Crossover's
        raise ConfigError(str(exc)) from None
    for note in files.claim_notes:
        print(f"note: {note}", file=sys.stderr)
    return files


def check_rescue_folder() -> None:
    """Where the records go when --csv cannot take them at the end (the autosave folder) can take them: checked
    before any lane starts, so a full disk at the end never finds a second impossible name (ConfigError)."""
    problem = autosave.rescue_problem()
    if problem:
        raise ConfigError(f"{problem}: set CROSSOVER_HOME to a folder Crossover may write in")


def report_safely(report: Callable[[], None]) -> None:
    """Print the results; a terminal that is gone (SIGHUP, a closed pipe) loses the words, never the files."""
    try:
        report()
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


def say(text: str) -> None:
    report_safely(lambda: print(text, file=sys.stderr))


def write_or_rescue(write: Callable[[], list[Path]], rescue: Callable[[], list[Path]],
                    what: str, partial: Callable[[], Sequence[Path]] = lambda: ()) -> tuple[int, str]:
    """Write the results where asked; if that fails at the end (a full disk), write them to the autosave
    folder instead. Returns EXIT_OK or EXIT_FAILED, and the sentence saying where they are.

    `partial`: the files this command grew while it measured (claimed, so no one else's) that do not hold every
    record. Once the results are whole elsewhere, such a copy at the target (its last records missing, its
    sidecar perhaps saying "completed") is removed, so that the target never holds less than it claims; while
    they are nowhere else, it is kept."""
    try:
        paths = write()
    except (ExportError, OSError) as exc:
        try:
            saved = rescue()
        except (ExportError, OSError) as again:
            return EXIT_FAILED, f"error: {exc}; the autosave folder could not take them either ({again}): " \
                                f"{what} not saved (what was written at the target so far is kept)"
        removed = []
        for path in partial():
            try:
                path.unlink()
                removed.append(path.name)
            except OSError:
                pass
        gone = f"; the incomplete {' and '.join(removed)} removed" if removed else ""
        return EXIT_FAILED, f"error: {exc}; {what} saved to {', '.join(map(str, saved))} instead{gone}"
    return EXIT_OK, "wrote " + ", ".join(map(str, paths))


def watchdog_seconds(text: str) -> float:
    """--watchdog-s as argparse takes it: a finite number of seconds above 0 (nan would disable the watchdog,
    0 or -1 kill every lane at once); argparse refuses anything else with exit 2."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    problem = watchdog_problem(seconds)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return seconds


def add_stop_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--watchdog-s", type=watchdog_seconds, default=WATCHDOG_S, metavar="SECONDS",
                   help=f"kill a lane that sends nothing (no batch, no heartbeat) for this long (default "
                        f"{WATCHDOG_S:g}; more than 0; grows to 20 times the slowest steady step, at most "
                        f"{WATCHDOG_CEILING_S / 3600:g} hours; env CROSSOVER_WATCHDOG_S)")


def add_task_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", choices=TASKS, help="train (default): time training steps; predict: time one "
                   "forward call per batch as a server makes it (host in, answer back on the host), with its p90 "
                   "and p99 latency")
    p.add_argument("--serve", choices=SERVE_WAYS, help="how a predict call is made: keras (default: "
                   "model.predict_on_batch) or compiled (the backend's compiled forward pass, called directly)")
    p.add_argument("--arrival-rate", type=float, metavar="R", help="with --task predict: requests arrive on their "
                   "own schedule, R per second, whatever the lane is doing (an open loop); each is timed from when "
                   "it should have arrived to its answer, so waiting in the queue counts. Without it: one call after "
                   "another (one client, no queue)")
    p.add_argument("--arrivals", choices=ARRIVALS, help="with --arrival-rate: poisson (default: random gaps of mean "
                   "1/R, as independent users send) or constant (one every 1/R s)")
    p.add_argument("--max-batch", type=int, metavar="N", help="with --arrival-rate: each call answers up to N "
                   "requests that queued (dynamic batching, as TF Serving and Triton do); default 1, one at a time")
    p.add_argument("--requests", type=int, metavar="N", help=f"with --arrival-rate: requests per lane and rate "
                   f"(default {RATE_REQUESTS:,}: a p99 needs 662)")


def add_config_args(p: argparse.ArgumentParser, *, widths_help: str, task: bool = True,
                    lanes: tuple[str, str] | None = None, csv: bool = True) -> None:
    """The model, training and lane options that run, sweep (and the commands built on them) share; with `task`,
    --task and --serve too (the anatomy dissects a training step only); `lanes`, the default and help of --lanes
    where it is not a list of lanes to compare; without `csv`, no --csv (a command that keeps its own files)."""
    p.add_argument("--widths", help=widths_help)
    p.add_argument("--model", metavar="FILE.keras|FILE.py:FUNCTION", help="your own model instead of Crossover's: "
                   "a saved Keras 3 model (loaded with safe mode on: a Lambda layer is refused, never run; it has no "
                   "width, so sweep it along --batch-sizes), or FUNCTION(width) in your Python file returning a "
                   "keras.Model (each lane imports the file and runs your code, as any script would; --widths are "
                   "the widths passed to it)")
    if lanes is not None:
        p.add_argument("--lanes", default=lanes[0], help=lanes[1])
    else:
        p.add_argument("--lanes", default="cpu,cpu1", help="comma-separated lanes: cpu (all cores), cpu1 (one "
                       "thread), gpu/gpu0, gpu1…, optionally with a backend: jax:gpu, torch:cpu; a lane named twice "
                       "runs beside its twin, a process of its own (cpu1,cpu1: cpu1 and cpu1#2) (default: cpu,cpu1)")
    p.add_argument("--family", choices=FAMILIES, help="the model: mlp (default), cnn (--widths are filters per "
                   "block), rnn (units per recurrent layer) or transformer (d_model of each encoder block, all equal)")
    p.add_argument("--cell", choices=CELLS, help="the rnn's recurrent layer: lstm (default) or gru")
    p.add_argument("--heads", type=int, help="the transformer's attention heads; they must divide d_model (default 4)")
    if task:
        add_task_args(p)
    p.add_argument("--batch-size", type=int, help="samples per training step (or per predict call; a request's "
                   "samples under --arrival-rate). Default 128 (1 at an arrival rate)")
    p.add_argument("--epochs", type=int, help="passes over the data (default 1; a sweep point stops at its steady "
                   "steps or seconds first)")
    p.add_argument("--optimizer", choices=OPTIMIZERS, help="the training step's optimizer (default adam)")
    p.add_argument("--learning-rate", type=float, help="the optimizer's learning rate (default 0.001)")
    p.add_argument("--dropout", type=float, help="dropout after each hidden layer, 0 to below 1 (default 0.2)")
    p.add_argument("--seed", type=int, help="seeds the data, the weights and Poisson arrivals: 0 to 4,294,967,295 "
                   "(default 0)")
    p.add_argument("--samples", type=int, help="use at most N training samples (quick runs)")
    p.add_argument("--data", help="auto (MNIST if cached or downloadable, else synthetic), mnist, synthetic, "
                   "or a .npz path")
    p.add_argument("--preprocessing", choices=PREPROCESSING, help="scale: x/255; l2: unit L2 norm per row")
    p.add_argument("--jit", choices=("on", "off"), help="XLA / jit compilation (default: the backend's default, "
                   "recorded: off for tensorflow and torch, on for jax)")
    p.add_argument("--steps-per-execution", type=int, help="training steps Keras runs per call of its compiled "
                   "step (default 1); a record then covers that many steps")
    p.add_argument("--feeding", choices=FEEDINGS, help="host: batches copied from host memory each step; "
                   "device: whole set resident on the device (jax, torch)")
    p.add_argument("--mixed-precision", action="store_true", help="float16 compute on GPU lanes")
    p.add_argument("--warmup-steps", type=int, help="steps flagged as warm-up at the start of each run (default 5)")
    if csv:
        p.add_argument("--csv", help="write per-batch timings here, and the settings to a .json beside it")
