"""`main.py profile` and `main.py predict`: a machine's lanes measured into a device profile, and a model's step
time predicted on a profile's lanes (a machine one does not have), with intervals, checked against measurement
where the lane can run here.

`profile` runs a short designed sweep (core/study/profile.py), each part an ordinary `sweep` with its own files, and
builds the profile from them (core/files/device_profile.py); `profile --from FILES` builds one from sweep files already
measured (how the shipped profiles are made: benchmarks/ship_profiles.sh); `profile --list` lists those Crossover
ships. `predict` reads profiles and says, per lane, the predicted ms per step with its 95% interval and what it
rests on, an extrapolation as one, and along `--along` widths where the predicted faster lane changes.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import math
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Sequence

from . import run as cli_run, sweep as cli_sweep
from .common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, add_config_args, add_stop_args, config_from_args, say
from ..analysis.prediction import Prediction
from ..analysis.predicted_crossing import crossing
from ..config import MAX_LAYERS, ConfigError, LaneSpec, RunConfig, Schedule, Task, parse_lanes
from ..engine.devices import host_info
from ..files.predicted import predict_config, speed_settings
from ..files.device_profile import DeviceProfile, ProfileLane, find_profile, profile_from_files, shipped_profiles
from ..files.sweeps.files import read_sweep_rows
from ..files.measured import check_keeps_measurements
from ..files.live import check_output_path, expand_home
from ..plain_text import ONE_LINE, printable
from ..machine import HostInfo
from ..paths import PROG, autosave_dir
from ..presets import PRESETS
from ..records import now_iso
from ..study.profile import PLAN, ProfileSweep, expected_seconds, plan_named
from ..study.sweep import parse_sweep_widths
from ..words.numbers import fmt_duration, fmt_count
from ..words.profile import (crossing_words, line_words, machine_words, measured_words, prediction_words, profile_words,
                             settings_note, version_notes)
from .printing import table
from .stopping import StopSignals

MEASURE_S = 5.0  # predict --measure: steady seconds per lane
EXIT_STOPPED = 130


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("profile", help="measure this machine's lanes into a device profile (a file to send), or "
                       "build one from sweep files, or list the profiles Crossover ships")
    p.add_argument("--lanes", default="cpu,cpu1", help="the lanes to profile (default cpu,cpu1)")
    p.add_argument("-o", "--out", metavar="FILE.json", help="where the profile goes (default "
                   "profile-YYYYMMDD-HHMMSS.json here); measuring writes each sweep's files in FILE-sweeps/ beside it")
    p.add_argument("--name", help="the profile's name (default: the file's stem)")
    p.add_argument("--families", help=f"measure only these: {', '.join(sorted({s.family for s in PLAN}))} "
                   "(default all)")
    p.add_argument("--quick", action="store_true", help="dense models only (about half the time)")
    p.add_argument("--from", dest="sources", nargs="+", metavar="SWEEP.csv",
                   help="measure nothing: build the profile from these sweep files (one machine's)")
    p.add_argument("--list", action="store_true", help="list the profiles Crossover ships")
    add_stop_args(p)
    p.set_defaults(func=cmd_profile)

    q = sub.add_parser("predict", help="predict a model's step time on a device profile's lanes (a machine you "
                       "don't have), with intervals; --measure checks it here")
    q.add_argument("--profile", action="append", required=True, metavar="PROFILE",
                   help="a profile file, or the name of one Crossover ships (profile --list); give it twice to "
                   "compare two machines")
    q.add_argument("--preset", choices=sorted(PRESETS), help="start from a seed's model and settings")
    add_config_args(q, widths_help="hidden layer widths, e.g. 750,150,50,50 (default 128)")
    q.set_defaults(lanes=None)
    q.add_argument("--along", metavar="WIDTHS", help="predict the model at each of these widths (every layer that "
                   "wide) and say where the predicted faster lane changes, e.g. 16,64,256,1024")
    q.add_argument("--layers", type=int, help="with --along: the layers, each of the width (default: as many as "
                   "the model has)")
    q.add_argument("--measure", action="store_true", help="also run the model here on the profile's lanes that "
                   f"this machine has (each {MEASURE_S:g} s of steady steps) and say how far each prediction was")
    add_stop_args(q)
    q.set_defaults(func=cmd_predict)


# profile

def cmd_profile(args: argparse.Namespace) -> int:
    if args.list:
        return _list_profiles()
    out = expand_home(args.out or f"profile-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json", "-o")
    if out.suffix != ".json":
        raise ConfigError(f"-o {args.out}: a profile is a .json file")
    name = (args.name or out.stem)[:80]
    check_profile_output(out, args.sources or ())
    if args.sources:
        if args.families or args.quick:
            raise ConfigError("--from builds the profile from files: --families and --quick choose what to measure")
        command = f"{PROG} profile --from {' '.join(args.sources)} -o {out} --name {name}"
        return _write_profile(args.sources, name, command, out)
    lanes = parse_lanes(args.lanes)
    plan = plan_named(args.families, args.quick)
    folder = out.with_name(out.stem + "-sweeps")
    backends: dict[str, int] = {}
    for lane in lanes:
        backends[lane.backend or "tensorflow"] = backends.get(lane.backend or "tensorflow", 0) + 1
    seconds = expected_seconds(plan, len(lanes), backends)
    say(f"profile: {fmt_count(len(plan), 'sweep')} ({', '.join(s.name for s in plan)}) on {', '.join(x.name for x in lanes)}, "
        f"{fmt_count(sum(s.points for s in plan), 'point')} each lane; expected length: about {fmt_duration(seconds)}; each "
        f"sweep's files in {folder}/")
    folder.mkdir(parents=True, exist_ok=True)
    done: list[str] = []
    code = EXIT_OK
    left = seconds
    with StopSignals() as between:  # a stop between two sweeps (each sweep hears its own while it runs)
        for i, part in enumerate(plan, 1):
            if between.cancel.is_set():
                code = between.exit_code or EXIT_STOPPED
                break
            csv = folder / f"{part.name}.csv"
            say(f"profile: sweep {i} of {len(plan)}, {part.name} ({fmt_count(part.points, 'point')}), about "
                f"{fmt_duration(left)} left")
            code = _run_sweep(part, args, str(csv))
            left -= expected_seconds((part,), len(lanes), backends)
            if _measured_any(csv):  # a sweep stopped before its first point leaves a header alone
                done.append(str(csv))
            if code >= EXIT_STOPPED:
                break
        if done and (code >= EXIT_STOPPED or between.cancel.is_set()):
            say(f"profile: stopped with {len(done)} of {len(plan)} sweeps measured; the profile is made of what they "
                "measured, where it makes a line")
    if not done:
        say("profile: nothing was measured, so no profile was written")
        return code or EXIT_FAILED
    command = f"{PROG} profile --lanes {args.lanes} -o {out}" + (f" --families {args.families}" if args.families
                                                                  else "") + (" --quick" if args.quick else "")
    try:
        written = _write_profile(done, name, command, out)
    except ConfigError as exc:
        if code == EXIT_OK:
            raise
        say(f"profile: no profile was written ({exc}); the sweeps' files stay in {folder}/")
        return code
    return code if code != EXIT_OK else written


def check_profile_output(out: Path, sources: Sequence[str]) -> None:
    """Refuse, before anything is measured, a profile's path that cannot be written (a folder, a fifo, a device,
    a read-only folder), that would replace a measurement or one of --from's files, or (when measuring) whose
    sweeps' folder cannot be made: ConfigError with a sentence."""
    check_output_path(str(out), "-o")
    check_keeps_measurements(out, "-o", sources)
    if not sources:
        folder = out.with_name(out.stem + "-sweeps")
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"-o {out}: the sweeps' folder {folder} is a file: choose another name, or move it")


def command_args(command: ModuleType, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed by one command's own parser (core/cli/sweep.py, run.py): the command as a user types it."""
    parser = argparse.ArgumentParser(prog=PROG)
    command.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def _measured_any(csv: Path) -> bool:
    """Whether a sweep's CSV holds a point (a row below its header)."""
    try:
        with csv.open(encoding="utf-8") as fh:
            return sum(1 for _ in zip(range(2), fh)) > 1
    except OSError:
        return False


def _run_sweep(part: ProfileSweep, args: argparse.Namespace, csv: str) -> int:
    sweep_args = command_args(cli_sweep, part.argv(args.lanes, csv) + ["--watchdog-s", f"{args.watchdog_s:g}"])
    try:
        return int(sweep_args.func(sweep_args))
    except ConfigError as exc:
        print(f"error: {part.name}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _write_profile(sources: Sequence[str], name: str, command: str, out: Path) -> int:
    profile, notes = profile_from_files(list(sources), name, command, now_iso())
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    path = profile.write(out)
    print(profile_words(profile))
    for lane in profile.lanes:
        for line in lane.lines:
            print(f"  {lane.lane}{settings_note(lane)}, {line.kind} {line.task}: {line_words(line)}")
    print(f"wrote {path}")
    return EXIT_OK


def _list_profiles() -> int:
    profiles = shipped_profiles()
    if not profiles:
        print("Crossover ships no profiles in this installation.")
        return EXIT_OK
    for profile in profiles:
        print(profile_words(profile))
    print(f"Use one by name: {PROG} predict --profile {profiles[0].name} --preset blog-small")
    return EXIT_OK


# predict

def cmd_predict(args: argparse.Namespace) -> int:
    # One file given twice (by its name and by its path) is one profile: two columns of it would compare nothing.
    profiles = list({p.path: p for p in (find_profile(name) for name in args.profile)}.values())
    if getattr(args, "arrival_rate", None) is not None:
        raise ConfigError("predict says one call's time, not the latency of requests arriving at a rate: leave out "
                          "--arrival-rate")
    config = config_from_args(argparse.Namespace(**{**vars(args), "lanes": None}))
    if config.model.saved is not None or config.model.factory is not None:
        config = _resolve_user_model(config, args)
    widths = parse_sweep_widths(args.along) if args.along else ()
    if args.layers is not None and not widths:
        raise ConfigError("--layers sets the depth of --along's models: add --along, or give --widths one width "
                          "per layer")
    if args.layers is not None and not 1 <= args.layers <= MAX_LAYERS:  # -1 made no layer at all: "0 hidden layers"
        raise ConfigError(f"--layers {args.layers}: give the hidden layers of --along's models, 1 to {MAX_LAYERS}")
    if widths and args.measure:
        raise ConfigError("--measure checks one model: leave out --along (or sweep the widths here, then "
                          "predict each)")
    wanted = set(parse_lane_names(args.lanes)) if args.lanes else None
    here = HostInfo.from_json(host_info())
    chosen: list[tuple[DeviceProfile, ProfileLane]] = []
    for profile in profiles:
        print(profile_words(profile))
        print(f"  (read from {printable(profile.path, ONE_LINE)})")
        for note in version_notes(profile, here):
            print(f"note: {note}")
        for lane in profile.lanes:
            if wanted is None or lane.lane in wanted:
                if not any(p is profile and x.lane == lane.lane for p, x in chosen):
                    fitting = profile.lane(lane.lane, speed_settings(config))
                    chosen.append((profile, fitting or lane))
    if not chosen:
        raise ConfigError(f"--lanes {args.lanes}: none of the profiles has such a lane")
    task = config.train.task
    called = profile_labels(profiles)
    if widths:
        return _predict_along(config, widths, args.layers, chosen, called)
    print(f"\n{config.model.label()}, batch {config.train.batch_size}, {task}:")
    predictions = []
    for profile, lane in chosen:
        p = predict_config(config, lane)
        predictions.append((profile, lane, p))
        print(f"  {lane.lane} on {called[profile.path]}{settings_note(lane)}: {prediction_words(p, task)}")
    return _measure(config, predictions, args, here) if args.measure else _offer_measure(predictions, here)


def profile_labels(profiles: Sequence[DeviceProfile]) -> dict[str, str]:
    """What each profile (by its file) is called in predict's columns and lines: its name, or where two files hold
    profiles of one name (a copy sent back, a profile made twice), its file's name, or its path where those are
    alike too; else two columns had one header and a crossing "between cpu (x) and cpu (x)"."""
    names = Counter(p.name for p in profiles)
    files = Counter(Path(p.path).name for p in profiles)
    return {p.path: p.name if names[p.name] == 1 else
            printable(Path(p.path).name if files[Path(p.path).name] == 1 else p.path, ONE_LINE) for p in profiles}


def parse_lane_names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _predict_along(config: RunConfig, widths: Sequence[int], layers: int | None,
                   chosen: Sequence[tuple[DeviceProfile, ProfileLane]], called: dict[str, str]) -> int:
    if config.model.saved is not None or config.model.factory is not None:
        raise ConfigError("--along sets Crossover's own models' widths; your own model has its own")
    depth = layers if layers is not None else len(config.model.widths)
    configs = [dataclasses.replace(config, model=dataclasses.replace(config.model, widths=(w,) * depth))
               for w in widths]
    names = [f"{lane.lane} ({called[profile.path]})" for profile, lane in chosen]
    grid = [[predict_config(c, lane) for c in configs] for _, lane in chosen]
    print(f"\n{config.model.kind}, {depth} layers of each width, batch {config.train.batch_size}, "
          f"{config.train.task}: predicted ms per {'call' if config.train.task == Task.PREDICT else 'step'} (95%)")
    rows = []
    for i, w in enumerate(widths):
        rows.append([str(w)] + [_cell(grid[j][i]) for j in range(len(chosen))])
    print(table(["width"] + names, rows))
    if any(p.outside for ps in grid for p in ps):
        print("≈: an extrapolation (outside what the profile measured), no interval; `predict` of that one model "
              "says why")
    for a in range(len(chosen)):
        for b in range(a + 1, len(chosen)):
            print(crossing_words(crossing(widths, grid[a], grid[b], names[a], names[b]), names[a], names[b], "width"))
    return EXIT_OK


def _cell(p: Prediction) -> str:
    if p.refused:
        return "–"
    if p.outside:
        return f"≈{p.ms:.3g}"
    return f"{p.ms:.3g} ({p.lo:.3g}–{p.hi:.3g})"


def _same_machine(profile: DeviceProfile, here: HostInfo) -> bool:
    return bool(profile.host.cpu) and profile.host.cpu == here.cpu and profile.host.cpu_cores == here.cpu_cores \
        and [g.name for g in profile.host.gpus] == [g.name for g in here.gpus]


def _measurable(predictions: Sequence[tuple[DeviceProfile, ProfileLane, Prediction]],
                here: HostInfo) -> list[str]:
    out = []
    for profile, lane, _ in predictions:
        try:
            spec = LaneSpec.parse(lane.lane)
        except ConfigError:
            continue
        if spec.host:  # read_profile refuses such a lane; a file never names a host this command connects to
            continue
        if _same_machine(profile, here) and lane.lane not in out:
            out.append(lane.lane)
    return out


def _offer_measure(predictions: Sequence[tuple[DeviceProfile, ProfileLane, Prediction]], here: HostInfo) -> int:
    lanes = _measurable(predictions, here)
    if lanes:
        print(f"This machine has {', '.join(lanes)} as the profile measured them: add --measure to run the model "
              "here and see how far each prediction is.")
    else:
        print(f"The profiles are of other machines than this one ({machine_words(here)}): a run here would check "
              "nothing about them.")
    return EXIT_OK


def _measure(config: RunConfig, predictions: Sequence[tuple[DeviceProfile, ProfileLane, Prediction]],
             args: argparse.Namespace, here: HostInfo) -> int:
    lanes = _measurable(predictions, here)
    if not lanes:
        return _offer_measure(predictions, here)
    csv = args.csv or str(autosave_dir() / "predict" / f"measured-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.csv")
    Path(csv).expanduser().parent.mkdir(parents=True, exist_ok=True)
    # One lane after another, as a profile's sweeps measure (core/study/sweep.py): lanes taking turns pay for each
    # turn (their threads and caches go cold), and the step times compared with a prediction must be measured as
    # the profile's were.
    argv = ["run", "--lanes", ",".join(lanes), "--schedule", str(Schedule.SEQUENTIAL), "--time-limit",
            f"{MEASURE_S:g}", "--csv", csv] + _model_argv(args)
    say(f"measuring here: {' '.join(argv)}")
    run_args = command_args(cli_run, argv)
    code = int(run_args.func(run_args))
    rows, _ = read_sweep_rows(csv) if Path(csv).expanduser().exists() else ([], None)
    medians = {r.lane: r.median_ms for r in rows}
    print("\nhow far the predictions were:")
    for profile, lane, p in predictions:
        if lane.lane in lanes:
            print(f"  {lane.lane} ({profile.name}): {measured_words(p, medians.get(lane.lane, math.nan), config.train.task)}")
    return code


def _model_argv(args: argparse.Namespace) -> list[str]:
    """The model's options as `run` takes them (the same names: add_config_args)."""
    out = []
    for key in ("preset", "widths", "model", "family", "cell", "heads", "task", "serve", "batch_size", "optimizer",
                "learning_rate", "dropout", "seed", "samples", "data", "preprocessing", "jit", "steps_per_execution",
                "feeding", "warmup_steps"):
        value = getattr(args, key, None)
        if value is not None:
            out += [f"--{key.replace('_', '-')}", str(value)]
    if getattr(args, "mixed_precision", False):
        out.append("--mixed-precision")
    return out


def _resolve_user_model(config: RunConfig, args: argparse.Namespace) -> RunConfig:
    """A saved model or a factory's, as a cpu lane here loads and counts it (its FLOPs and layers)."""
    from ..engine.pool import LanePool
    from .common import lanes_can_run, resolve_saved

    lanes = [LaneSpec.parse("cpu")]
    pool = LanePool(watchdog_s=args.watchdog_s)
    try:
        if not lanes_can_run(lanes, pool):
            raise ConfigError("your model is counted by a cpu lane here, and this machine cannot start one")
        return resolve_saved(config, pool, lanes)
    finally:
        pool.close()
