"""What every command of the CLI shares: exit codes, the model and training options, lane checks, a cancellable run."""
from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from typing import Any, Callable, Sequence

from crossover_lab.core.config import (FEEDINGS, OPTIMIZERS, PREPROCESSING, ConfigError, LaneSpec, ModelSpec,
                                       RunConfig, TrainSpec, parse_widths)
from crossover_lab.core.devices import lane_problems
from crossover_lab.core.npz_check import DataError, inspect_npz
from crossover_lab.core.paths import log_dir_problem
from crossover_lab.core.presets import PRESETS
from crossover_lab.core.session import LanePool

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig the options describe, on top of `base` (a preset's, or the defaults)."""
    if base is None:
        base = PRESETS[args.preset].config if getattr(args, "preset", None) else RunConfig()
    model = base.model
    if args.widths is not None:
        model = dataclasses.replace(model, widths=parse_widths(args.widths))
    if args.dropout is not None:
        model = dataclasses.replace(model, dropout=args.dropout)
    changes: dict[str, Any] = {}
    for key in ("batch_size", "epochs", "optimizer", "learning_rate", "seed", "steps_per_execution",
                "samples", "data", "preprocessing", "feeding", "warmup_steps"):
        value = getattr(args, key, None)
        if value is not None:
            changes[key] = value
    if args.jit is not None:
        changes["jit"] = args.jit == "on"
    if getattr(args, "mixed_precision", False):
        changes["mixed_precision"] = True
    data = changes.get("data", "")
    if data.endswith(".npz"):
        try:
            inspect_npz(data)
        except DataError as exc:
            raise ConfigError(str(exc)) from None
    return RunConfig(ModelSpec(**dataclasses.asdict(model)), TrainSpec(**{**dataclasses.asdict(base.train), **changes}))


def lanes_can_run(lanes: Sequence[LaneSpec], pool: LanePool) -> bool:
    """Print why any lane cannot run here (no GPU, backend missing); True when all can."""
    problems = lane_problems(list(lanes), pool)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    note = log_dir_problem()
    if note and not problems:
        print(f"note: {note}", file=sys.stderr)
    return not problems


def run_in_thread(work: Callable[[threading.Event], Any]) -> tuple[Any, bool]:
    """Run `work(cancel)` in a thread so Ctrl-C here can cancel it and still collect what it measured."""
    cancel = threading.Event()
    box: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        try:
            box["result"] = work(cancel)
        except BaseException as exc:  # re-raised in the main thread, with its traceback
            box["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=target, daemon=True).start()
    interrupted = False
    # Not Thread.join: a KeyboardInterrupt inside join() can leave the thread marked as ended.
    while not finished.is_set():
        try:
            finished.wait(0.2)
        except KeyboardInterrupt:
            if interrupted:
                continue
            interrupted = True
            print("\nstopping: the measured batches will be written…", file=sys.stderr)
            cancel.set()
    if "error" in box:
        raise box["error"]
    return box["result"], interrupted


def add_config_args(p: argparse.ArgumentParser, *, widths_help: str) -> None:
    """The model, training and lane options that run, sweep (and the commands built on them) share."""
    p.add_argument("--widths", help=widths_help)
    p.add_argument("--lanes", default="cpu,cpu1", help="comma-separated lanes: cpu (all cores), cpu1 (one thread), "
                   "gpu/gpu0, gpu1…, optionally with a backend: jax:gpu, torch:cpu (default: cpu,cpu1)")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--epochs", type=int)
    p.add_argument("--optimizer", choices=OPTIMIZERS)
    p.add_argument("--learning-rate", type=float)
    p.add_argument("--dropout", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--samples", type=int, help="use at most N training samples (quick runs)")
    p.add_argument("--data", help="auto (MNIST if cached or downloadable, else synthetic), mnist, synthetic, "
                   "or a .npz path")
    p.add_argument("--preprocessing", choices=PREPROCESSING, help="scale: x/255; l2: unit L2 norm per row")
    p.add_argument("--jit", choices=("on", "off"), help="XLA / jit compilation (default: the backend's default, "
                   "recorded: off for tensorflow and torch, on for jax)")
    p.add_argument("--steps-per-execution", type=int)
    p.add_argument("--feeding", choices=FEEDINGS, help="host: batches copied from host memory each step; "
                   "device: whole set resident on the device (jax, torch)")
    p.add_argument("--mixed-precision", action="store_true", help="float16 compute on GPU lanes")
    p.add_argument("--warmup-steps", type=int, help="steps flagged as warm-up at the start of each run (default 5)")
    p.add_argument("--csv", help="write per-batch timings here, and the settings to a .json beside it")
