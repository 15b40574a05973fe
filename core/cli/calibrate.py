"""`main.py calibrate`: the rule's false-lead rate measured on this machine (an A/A control). K sweeps of one lane
against its twin (cpu1 and cpu1#2: the same device, two processes taking turns as any pair does), each an ordinary
`sweep` with its own files, each judged as `analyze` judges its file; the share of sweeps that named a lead between
the two equal lanes, with its exact 95% interval and the design it holds for, is written to rule-here.json in
Crossover's home folder (core/files/rule_here.py), the sweeps' files in a folder beside it.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import time
from pathlib import Path

from . import sweep as cli_sweep
from .common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, say
from .profile import command_args
from .stopping import StopSignals
from ..analysis.rates import counted_rate
from ..config import ConfigError, LaneSpec, parse_lanes
from ..engine.devices import host_info
from ..files.atomic import ExportError, target_problem
from ..files.rule_here import (MAX_SWEEPS, HereCalibration, TwinDesign, TwinSweep, here_path, judge_twin_sweep,
                               sweeps_folder, write_here_calibration)
from ..machine import HostInfo
from ..records import now_iso
from ..study.sweep import rechecks
from ..words.numbers import fmt_count, fmt_duration
from ..words.rule_here import calibration_lines, twin_sweep_line

DEFAULT_LANE = "cpu1"
# Each twin sweep is an ordinary sweep of the sweep's default design (six widths in five passes, about 2.5 minutes on
# a 2-core machine; --passes 1 about 40 s): six in about a quarter of an hour, and "0 of 6" already bounds the rate
# below 46%.
DEFAULT_SWEEPS = 6


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help="measure how often the rule names a lead between two equal lanes on this "
                       "machine: sweeps of a lane against its twin (an A/A control), kept in rule-here.json")
    p.add_argument("--sweeps", type=int, default=DEFAULT_SWEEPS, metavar="K", help=f"twin sweeps to run (default "
                   f"{DEFAULT_SWEEPS}; the interval narrows as K grows: 0 of 6 is 0-46%%, 0 of 20 is 0-17%%)")
    lanes_help = (f"the lane to sweep against its twin, a second process of it taking turns with it (default "
                  f"{DEFAULT_LANE}: {DEFAULT_LANE} against {DEFAULT_LANE}#2); every other option is the sweep's, and "
                  "sets each twin sweep's design")
    cli_sweep.add_sweep_args(p, studies=False, lanes=(DEFAULT_LANE, lanes_help))
    p.set_defaults(func=cmd_calibrate)


def twin_pair(text: str) -> tuple[LaneSpec, LaneSpec]:
    """The lane `--lanes` names and its twin; ConfigError unless it names one lane, itself no twin, that can run
    beside a twin (core/config.py twin_problem)."""
    lanes = parse_lanes(text)
    if len(lanes) != 1:
        raise ConfigError(f"--lanes {text}: calibrate sweeps one lane against its twin: name one lane, e.g. "
                          f"--lanes {DEFAULT_LANE}")
    if lanes[0].twin:
        raise ConfigError(f"--lanes {text}: name the lane itself ({lanes[0].original.name}); calibrate makes its twin")
    first, twin = parse_lanes(f"{lanes[0].name},{lanes[0].name}")
    return first, twin


def sweep_args(args: argparse.Namespace, pair: tuple[LaneSpec, LaneSpec], csv: Path) -> argparse.Namespace:
    """One twin sweep as `sweep` takes it: its own parser's defaults (core/cli/profile.py command_args), this
    command's options on top, the pair as its lanes and `csv` as its files."""
    sweep = command_args(cli_sweep, ["sweep"])
    own = {key: value for key, value in vars(args).items() if key in vars(sweep) and key not in ("func", "command")}
    return argparse.Namespace(**{**vars(sweep), **own, "lanes": ",".join(s.name for s in pair), "csv": str(csv)})


def design_of(args: argparse.Namespace, pair: tuple[LaneSpec, LaneSpec]) -> TwinDesign:
    """What each twin sweep measures, as `sweep` reads the options (ConfigError for one it refuses)."""
    spec = cli_sweep.sweep_spec(sweep_args(args, pair, Path("design.csv")))
    train = spec.base.train
    return TwinDesign(pair[0].name, pair[1].name, tuple(spec.widths), spec.layers,
                      tuple(spec.batch_sizes) or (train.batch_size,), rechecks(spec, pair), spec.steady_steps,
                      spec.seconds_per_point, train.task, spec.base.model.kind,
                      getattr(spec, "passes", 1))  # as the sweep's sidecar reads it (core/files/sweeps/files.py sweep_info)


def new_folder() -> Path:
    """A folder of its own for this calibration's sweeps, named by the time it started; ConfigError where it
    cannot be made."""
    parent = sweeps_folder()
    stem = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in range(1, 100):
        folder = parent / (stem if n == 1 else f"{stem}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
        except OSError as exc:
            raise ConfigError(f"cannot make {folder} for the twin sweeps' files: {exc.strerror or exc}") from None
    raise ConfigError(f"{parent} already holds a calibration folder for every name of {stem}: try again")


def _drop_if_empty(folder: Path) -> bool:
    """Remove the calibration's folder where no sweep wrote anything in it; whether it is gone."""
    try:
        folder.rmdir()
    except OSError:  # it holds a sweep's files (or cannot be removed): kept
        return False
    return True


def cmd_calibrate(args: argparse.Namespace) -> int:
    if not 1 <= args.sweeps <= MAX_SWEEPS:
        raise ConfigError(f"--sweeps {args.sweeps}: choose 1 to {MAX_SWEEPS} twin sweeps")
    pair = twin_pair(args.lanes)
    design = design_of(args, pair)
    out = here_path()
    problem = target_problem(out)
    if problem:
        raise ConfigError(f"{out}: {problem}")
    folder = new_folder()
    say(f"calibrate: {fmt_count(args.sweeps, 'twin sweep')} of {design.lane} against {design.twin}, "
        f"{fmt_count(len(design.widths) * len(design.batch_sizes), 'point')} each; each sweep's files in {folder}/")
    judged: list[TwinSweep] = []
    code = EXIT_OK
    began = time.monotonic()
    with StopSignals() as between:  # a stop between two sweeps (each sweep hears its own while it runs)
        for number in range(1, args.sweeps + 1):
            if between.cancel.is_set():
                code = between.exit_code or EXIT_FAILED
                break
            csv = folder / f"twin-{number}.csv"
            each = (time.monotonic() - began) / (number - 1) if number > 1 else math.nan
            left = f", about {fmt_duration(each * (args.sweeps - number + 1))} left" if number > 1 else ""
            say(f"calibrate: twin sweep {number} of {args.sweeps}{left}")
            try:
                code = int(cli_sweep.cmd_sweep(sweep_args(args, pair, csv)))
            except ConfigError as exc:
                if number == 1:
                    _drop_if_empty(folder)
                    raise
                say(f"calibrate: twin sweep {number} was refused ({exc}); the sweeps before it are counted")
                code = EXIT_BAD_INPUT
                break
            if code != EXIT_OK:
                # Stopped, failed or refused: what it measured stays in its files, but a sweep cut short is not of
                # the design the rate is for, so it is not counted; nor is any sweep after it run.
                say(f"calibrate: twin sweep {number} did not finish, so it is not counted"
                    f"{f' (its files are kept in {folder})' if csv.exists() else ''}")
                break
            try:
                outcome = judge_twin_sweep(csv, design.lane, design.twin)
            except (ConfigError, OSError) as exc:
                say(f"calibrate: twin sweep {number}'s file cannot be read back ({exc}), so it is not counted")
                continue
            print(twin_sweep_line(number, args.sweeps, outcome, design), flush=True)
            if outcome.judged:
                judged.append(outcome)
        if code == EXIT_OK and between.exit_code is not None:  # a stop while the last sweep was judged
            code = between.exit_code
        if not judged:
            kept = "" if _drop_if_empty(folder) else f"; the sweeps' files are in {folder}"
            say(f"calibrate: no twin sweep was judged, so nothing was written{kept}")
            return code if code != EXIT_OK else EXIT_FAILED
        calibration = HereCalibration(design, counted_rate(sum(s.false_lead for s in judged), len(judged)),
                                      tuple(judged), args.sweeps, now_iso(), HostInfo.from_json(host_info()),
                                      str(folder))
        try:
            write_here_calibration(calibration, out)
        except ExportError as exc:
            say(f"calibrate: {exc}; the rate was not kept, the sweeps' files are in {folder}")
            return code if code != EXIT_OK else EXIT_FAILED
        for line in calibration_lines(calibration, str(out)):
            print(line)
    return code
