"""`main.py sweep`: time growing widths on each lane, find the crossover, and fit each lane's cost model."""
from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from .common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, add_config_args, add_stop_args, config_from_args,
                     check_memory, check_rescue_folder, lanes_can_run, report_safely, resolve_factory, resolve_saved, say,
                     write_or_rescue)
from .machines import add_price_arg, add_remote_arg, prices_from, print_costs, remote_settings
from ..config import ConfigError, LaneSpec, RunConfig, Task, parse_int_list, parse_lanes
from ..json_data import JsonValue
from ..engine.devices import host_info
from ..files.atomic import ExportError
from ..analysis.tails import calls_for_tail
from ..study.ladder import ladder_heading, KnobSetting, check_ladder, ladder_lines, ladder_settings, rank_ladder, run_ladder
from ..files.live import OutputClaim, check_output_path
from ..paths import autosave_dir
from ..presets import SWEEP_PRESETS, SweepPreset
from ..analysis.refinement import DEFAULT_BUDGET_S, RefineTarget
from ..study.refined_sweep import check_refinable, run_refined_sweep
from .printing import print_comparison, print_groups_analysis, print_points
from ..engine.pool import LanePool
from .rate_sweep import cmd_rate_sweep
from ..study.saved import Stopped
from ..files.noise import measured_noise, record_noise
from .stopping import StopSignals
from ..study.sweep import (DEFAULT_PASSES, NO_WIDTH, steady_steps_for, DEFAULT_POINT_SECONDS, DEFAULT_STEADY_STEPS, KNOBS, PointMeasured, SweepResult,
                           SweepSpec, for_lanes, lane_points, log_widths, parse_sweep_widths, rechecks, results_so_far, run_sweeps, with_knob)
from ..files.sweeps.files import SweepFiles, export_sweep, sweep_paths
from ..files.sweeps.rows import group_rows
from ..words.numbers import fmt_count, fmt_duration, fmt_num
from ..words.sweep import refine_lines
from ..words.verdict import scatter
from ..records import Status, now_iso


MAX_POINTS = 1000  # widths of one sweep: a minute each would already take most of a day


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="time growing widths on each lane and find the crossover")
    add_sweep_args(p)
    p.set_defaults(func=cmd_sweep)


def add_sweep_args(p: argparse.ArgumentParser, *, studies: bool = True, lanes: tuple[str, str] | None = None) -> None:
    """The sweep's options, for `sweep` and the commands that run sweeps as it does (`calibrate`); `studies`: also
    those that make a sweep another study (--compare, --ladder, --refine, --arrival-rates) and --csv;
    `lanes`: the default and help of --lanes where it means something else than the lanes to compare."""
    p.add_argument("--preset", choices=sorted(SWEEP_PRESETS), help="a seed's experiment over widths")
    add_config_args(p, widths_help="widths to sweep, e.g. 16,64,256,1024 "
                    "(default: log-spaced --min-width..--max-width)", lanes=lanes, csv=studies)
    p.add_argument("--layers", type=int, help="hidden layers, each of the swept width (default 2)")
    p.add_argument("--min-width", type=int, default=16, help="without --widths: the smallest width (default 16)")
    p.add_argument("--max-width", type=int, default=4096, help="without --widths: the largest width (default 4096)")
    p.add_argument("--points", type=int, default=6, help="without --widths: how many widths, evenly spaced in log "
                   "scale and rounded (default 6)")
    p.add_argument("--batch-sizes", help="also sweep these batch sizes, e.g. 32,128,512")
    p.add_argument("--steady-steps", type=int, default=None,
                   help=f"steady batches per point at most (default {DEFAULT_STEADY_STEPS}; with --task predict "
                        f"{calls_for_tail(99)}, the calls a p99 needs, core/analysis/tails.py)")
    p.add_argument("--seconds-per-point", type=float, default=DEFAULT_POINT_SECONDS,
                   help=f"steady time per point at most (default {DEFAULT_POINT_SECONDS:g})")
    p.add_argument("--no-calibrate", action="store_true", help="skip timing a large matrix product per lane")
    p.add_argument("--floor", action="store_true", help="also time each point's on-device loop (the anatomy's "
                   "device_loop rung): column floor_ms, and where the faster lane would change with one")
    p.add_argument("--passes", type=int, default=DEFAULT_PASSES, metavar="N", help=f"measure every point N times, "
                   f"in passes apart in time, the widths' and lanes' order reversed each pass (default "
                   f"{DEFAULT_PASSES}: the rule then measures what a pass's widths share, such as a load one lane "
                   "feels more, and finds leads of 10%%; 1: one quick pass, which says only leads of about 30%% or "
                   "more)")
    p.add_argument("--no-recheck", action="store_true", help="with --passes 1: measure each point once; by default "
                   "one point (two from six points up), chosen by its place along the sweep, is measured a second "
                   "time, to learn the pair's run-to-run noise (what one run's batches cannot show)")
    if studies:
        p.add_argument("--compare", metavar="KNOB=VALUE", help="run the sweep again with one setting changed and "
                       f"show how overhead, throughput and the crossover move; knobs: {', '.join(KNOBS)} "
                       "(e.g. jit=on, batch_size=512, steps_per_execution=8, feeding=device, mixed_precision=on)")
        p.add_argument("--arrival-rates", metavar="RATES", help="with --task predict: serve requests arriving at "
                       "each of these rates, e.g. 50,100,200 requests per second (an open loop: see run --arrival-rate), each "
                       "lane in turn; says where the faster lane changes, in requests per second, and the highest rate "
                       "each lane holds")
        p.add_argument("--p99-ms", type=float, metavar="MS", help="with --arrival-rates: the highest rate each lane "
                       "holds with its p99 latency at most MS (and, with --price, which lane serves it more cheaply)")
        p.add_argument("--ladder", action="store_true", help="what would make the GPU win sooner: the sweep once per "
                       "knob that moves the fixed cost (steps per execution 1/8/64, data on the device, jit on/off, "
                       "mixed precision, each installed backend), ranked by the slower lane's step time")
        p.add_argument("--refine", type=float, metavar="TOL", help="after the widths, measure where the faster lane "
                       "changes until it is known within ±TOL (0.15: ±15%%), the budget is spent, or the lanes are "
                       "equal within noise; added points are marked stage=refine in the CSV")
        p.add_argument("--budget-s", type=float, help="time a refinement may take, counted from the first point "
                       f"(default {DEFAULT_BUDGET_S:g})")
    add_remote_arg(p)
    add_price_arg(p)
    add_stop_args(p)


def refine_target(args: argparse.Namespace) -> RefineTarget | None:
    """What --refine and --budget-s ask for; None without --refine."""
    if args.refine is None:
        if args.budget_s is not None:
            raise ConfigError("--budget-s limits a refinement: add --refine, e.g. --refine 0.15")
        return None
    return RefineTarget(args.refine, DEFAULT_BUDGET_S if args.budget_s is None else args.budget_s)


def sweep_spec(args: argparse.Namespace) -> SweepSpec:
    preset = SWEEP_PRESETS[args.preset] if args.preset else SweepPreset(2, (), RunConfig())
    layers, widths, base = preset.layers, preset.widths, preset.base
    if args.widths is not None:
        widths = parse_sweep_widths(args.widths)
    elif not widths:
        if not 1 <= args.points <= MAX_POINTS:  # each point trains a model on every lane: a billion never ends
            raise ConfigError(f"--points {args.points}: choose 1 to {MAX_POINTS} widths between --min-width and "
                              "--max-width")
        widths = log_widths(args.min_width, args.max_width, args.points)
    # Flags given on the command line apply on top of the preset's settings.
    config = config_from_args(argparse.Namespace(**{**vars(args), "widths": None, "preset": None}), base)
    batches = parse_int_list(args.batch_sizes, "batch size") if args.batch_sizes is not None else ()
    if config.model.saved is not None:
        if args.widths is not None or args.preset or args.layers is not None:
            raise ConfigError("--model: a saved model has no widths or layers to sweep; sweep it along --batch-sizes")
        if len(set(batches)) < 2:
            raise ConfigError("--model: a saved model is swept along batch size: give --batch-sizes, e.g. 1,8,64,512")
        widths, layers = (NO_WIDTH,), 1
    if config.model.factory is not None:  # FUNCTION(width): one model per width, whole
        if args.preset or args.layers is not None:
            raise ConfigError(f"--model: {config.model.factory.function}(width) builds the whole model from its "
                              "width; --preset and --layers describe Crossover's own models")
        layers = 1
    return SweepSpec(widths=tuple(widths), layers=layers if args.layers is None else args.layers,
                     batch_sizes=batches, base=config, steady_steps=steady_steps_for(args.steady_steps, config),
                     seconds_per_point=args.seconds_per_point, calibrate=not args.no_calibrate, floor=args.floor,
                     recheck=not args.no_recheck, passes=getattr(args, "passes", DEFAULT_PASSES))


def open_sweep_files(path: str | None, host: Mapping[str, JsonValue], specs: list[SweepSpec],
                     prices: dict[str, float]) -> tuple[SweepFiles, OutputClaim] | tuple[None, None]:
    """The sweep's three files at --csv, checked and claimed before any lane starts (ConfigError: exit 2); the
    claim covers all three (a run's --csv of the same sidecar is refused) and is the caller's to release."""
    if path is None:
        return None, None
    paths = sweep_paths(path)
    for target in paths:
        check_output_path(str(target))
    if len({p.expanduser().resolve() for p in paths}) < len(paths):
        raise ConfigError(f"--csv {path}: the sweep's three files would share a name; name it .csv")
    check_rescue_folder()
    try:
        claim = OutputClaim(*paths)
    except ExportError as exc:
        raise ConfigError(str(exc)) from None
    for note in claim.notes:
        print(f"note: {note}", file=sys.stderr)
    try:
        return SweepFiles(path, host, specs, prices, claim=False), claim
    except BaseException:
        claim.release()
        raise


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.arrival_rates is not None:  # serving at each of several arrival rates (core/cli/rate_sweep.py)
        return cmd_rate_sweep(args)
    plan = _sweep_plan(args)
    pool: LanePool | None = None  # made once what can be refused without a lane has been checked
    if plan.user_model:  # a lane loads the file (or builds every width) and counts it, before anything is claimed
        pool = LanePool(remote_settings(args), watchdog_s=args.watchdog_s)
        found = _find_model(plan, pool)
        if isinstance(found, int):
            return found
        plan = found
    lanes, specs = plan.lanes, plan.specs
    try:
        check_memory([c for sp in specs for c in sp.points()], lanes)
        prices = prices_from(args, [lane.name for lane in lanes])
        host = host_info()
        files, claim = open_sweep_files(args.csv, host, specs, prices)
    except BaseException:  # refused before any point: no lane is left behind
        if pool is not None:
            pool.close()
        raise
    if pool is None:
        pool = LanePool(remote_settings(args), watchdog_s=args.watchdog_s)
    with StopSignals() as stop:
        try:
            if not lanes_can_run(lanes, pool):
                return EXIT_BAD_INPUT
            _say_plan(plan, compare=bool(args.compare))
            write = None if files is None else lambda got: _write(files, got, args.csv, host, prices)
            results, code, written = _measure(plan, pool, stop, files, write)
        finally:
            if files is not None:
                files.close()
            if claim is not None:
                claim.release()
            pool.close()
        _record_noise(plan, results, args.csv)
        report_safely(lambda: _report(results, prices, plan.ladder, lanes))
        if written:
            report_safely(lambda: print(written, file=sys.stderr if code else sys.stdout))
    if stop.exit_code is not None:
        return stop.exit_code
    return EXIT_FAILED if code != EXIT_OK or any(r.status == Status.FAILED for res in results for r in res.rows) \
        else EXIT_OK


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What a sweep measures: on which lanes, its spec and every spec it sweeps (the spec, a --compare's variant, or
    each --ladder knob setting's that can run), and a refinement's target."""

    lanes: tuple[LaneSpec, ...]
    spec: SweepSpec
    specs: list[SweepSpec]
    target: RefineTarget | None
    ladder: list[KnobSetting]

    @property
    def user_model(self) -> bool:
        """A saved model or a model factory: a lane finds what it is before anything is claimed."""
        return self.spec.base.model.saved is not None or self.spec.base.model.factory is not None


def _sweep_plan(args: argparse.Namespace) -> _Plan:
    """The sweep the options ask for, or ConfigError for what cannot be swept as asked (before any lane starts)."""
    if args.arrival_rate is not None:
        raise ConfigError("--arrival-rate in a sweep: sweep the arrival rate with --arrival-rates 50,100,200")
    if args.p99_ms is not None:
        raise ConfigError("--p99-ms bounds a rate's tail: add --task predict --arrival-rates 50,100,200")
    lanes = parse_lanes(args.lanes)
    spec = for_lanes(sweep_spec(args), lanes)
    specs = [spec] + ([with_knob(spec, args.compare)] if args.compare else [])
    target = refine_target(args)
    ladder: list[KnobSetting] = []
    if args.ladder:
        check_ladder(args.compare, target)
        ladder = ladder_settings(spec, lanes)
        specs = [s.spec for s in ladder if not s.reason]
    if target is not None:
        check_refinable(lanes, specs)
    if ladder and spec.base.model.factory is not None:
        raise ConfigError("--ladder with a model factory is not built: sweep your model along --widths")
    return _Plan(lanes, spec, specs, target, ladder)


def _find_model(plan: _Plan, pool: LanePool) -> _Plan | int:
    """The plan with the user's model as a lane found it (every width a factory builds, or the saved model, loaded
    and counted); an exit code where a lane cannot run here or a stop came first (nothing was measured)."""
    spec, lanes = plan.spec, plan.lanes
    early = StopSignals()
    try:
        with early:  # a stop reaches a lane stuck inspecting: nothing is measured yet
            if not lanes_can_run(lanes, pool):
                pool.close(0.2)  # nothing was started to measure: no lane is left behind
                return EXIT_BAD_INPUT
            found = resolve_factory(spec.base, pool, lanes, spec.widths, early.cancel).model \
                if spec.base.model.factory else resolve_saved(spec.base, pool, lanes, early.cancel).model
    except Stopped as stopped:
        say(f"{stopped}: nothing was measured")
        pool.close(0.2)
        return early.exit_code or EXIT_FAILED
    except BaseException:
        pool.close()
        raise
    specs = [dataclasses.replace(s, base=dataclasses.replace(s.base, model=found)) for s in plan.specs]
    ladder = [dataclasses.replace(k, spec=dataclasses.replace(k.spec, base=dataclasses.replace(k.spec.base, model=found)))
              for k in plan.ladder]  # each knob setting sweeps the model as the lane found it
    return dataclasses.replace(plan, spec=specs[0], specs=specs, ladder=ladder)


def _say_plan(plan: _Plan, *, compare: bool) -> None:
    """How many points the sweep measures on how many lanes, how long each, and what comes after them."""
    spec, target = plan.spec, plan.target
    say(f"sweep: {fmt_count(len(spec.points()), 'point')} × {fmt_count(len(plan.lanes), 'lane')}{' × 2 (compare)' if compare else ''}"
        f"{f' × {len(plan.specs)} knob settings' if plan.ladder else ''}, "
        f"widths {', '.join(map(str, spec.widths))}, {spec.layers} layer(s), "
        f"up to {spec.steady_steps} steady batches or {spec.seconds_per_point:g} s each")
    if spec.passes > 1 and not plan.ladder:
        turns = lane_points(plan.lanes, plan.specs)
        say(f"in {spec.passes} passes, the widths' and the lanes' order reversed each pass, so that the rule measures "
            f"what a pass's widths share (--passes 1: one quick pass): {turns} turns of at most "
            f"{spec.seconds_per_point:g} s and a warm-up each, at most about {fmt_duration(turns * (spec.seconds_per_point + 1.5))}")
    again = rechecks(spec, plan.lanes) if target is None and not plan.ladder else 0
    if again:
        say(f"then {'the middle point' if again == 1 else f'{again} points, evenly spaced along the sweep,'}"
            f" again (chosen by place, not by what they measured): the pair's run-to-run noise, "
            "which one run's batches cannot show (--no-recheck: each point once)")
    if target is not None:
        say(f"then refining until the crossover is known within ±{fmt_num(100 * target.tolerance)}% "
            f"or {target.budget_s:g} s have passed")


def _measure(plan: _Plan, pool: LanePool, stop: StopSignals, files: SweepFiles | None,
             write: Callable[[list[SweepResult]], tuple[int, str]] | None) -> tuple[list[SweepResult], int, str]:
    """Measure the plan's points until done or a stop, each point added to the --csv files and said as it comes;
    then `write` what was measured (also when measuring failed: the traceback follows; None: no --csv). Returns the
    results, the exit code of the writing and the sentence saying where the files are."""
    measured: list[PointMeasured] = []
    on_point = _point_said(measured, files, plan.target, plan.spec.passes if not plan.ladder else 1)

    def work(cancel: threading.Event) -> list[SweepResult]:
        if plan.ladder:
            return run_ladder(pool, plan.ladder, on_point=on_point, cancel=cancel)
        if plan.target is not None:
            return [run_refined_sweep(pool, plan.lanes, plan.spec, plan.target, on_point=on_point, cancel=cancel)]
        return run_sweeps(pool, plan.lanes, plan.specs, on_point=on_point, cancel=cancel)

    results = None
    try:
        results = stop.run(work, on_hurry=lambda: pool.close(0.2))
    finally:
        results = results or results_so_far(plan.specs, measured)
        pool.close(0.2 if stop.hurry.is_set() else 2.0)
        code, written = write(results) if write is not None else (EXIT_OK, "")
    return results, code, written


def _point_said(measured: list[PointMeasured], files: SweepFiles | None,
                target: RefineTarget | None, passes: int = 1) -> Callable[[PointMeasured], None]:
    """What is done with each point as it comes: kept in `measured`, added to the files, and a line per lane said."""
    def on_point(point: PointMeasured) -> None:
        measured.append(point)
        if files is not None:
            files.add_point(point.rows, point.run)
        done = f"{point.done}/{point.total}" if point.total else f"{point.done}"
        for row in point.rows:
            label = (f"pass {row.runs}" if passes > 1 else "again") if point.again else \
                row.variant if target is None else row.stage
            say(f"[{done}] {label:>8} {row.lane:>10} width "
                f"{row.width_label:>6} batch {row.batch_size:>5}: {fmt_num(row.median_ms)} ms/{'call' if row.task == Task.PREDICT else 'batch'}"
                + (f" over {'both' if row.runs == 2 else row.runs} runs, which scatter by {scatter(row.between_runs)}"
                   if point.again else "")
                + f" ({row.status})")

    return on_point


def _write(files: SweepFiles, results: list[SweepResult], csv: str, host: Mapping[str, JsonValue],
           prices: dict[str, float]) -> tuple[int, str]:
    """The sweep's files written whole at --csv, or rescued to the autosave folder (a full disk); the exit code
    and the sentence saying where they are."""
    whole = files.whole()  # every point appended as it came, or a write failed (a full disk)
    files.close()
    rescue = autosave_dir() / "sweeps" / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}.csv"
    grown = (files.csv_path, files.batches_path, files.json_path)
    return write_or_rescue(lambda: export_sweep(csv, results, host, prices),
                           lambda: _rescue(rescue, results, host, prices), "the sweep",
                           partial=lambda: () if whole else grown)


def _record_noise(plan: _Plan, results: list[SweepResult], csv: str | None) -> None:
    """This machine's run-to-run noise as the sweep measured it (a whole sweep, not a ladder's), what later runs
    here are bounded by."""
    if results and not results[0].cancelled and not plan.ladder:
        base = results[0]
        _, why_not = record_noise(measured_noise([r.point() for r in base.rows], now_iso(),
                                                 str(Path(csv).resolve()) if csv else "",
                                                 base.spec.base.train.task))
        if why_not:
            print(f"note: {why_not}", file=sys.stderr)


def _rescue(path: Path, results: Sequence[SweepResult], host: Mapping[str, JsonValue],
            prices: dict[str, float]) -> list[Path]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return export_sweep(path, results, host, prices)


def _report(results: list, prices: dict[str, float], ladder: list[KnobSetting], lanes: Sequence[LaneSpec]) -> None:
    if ladder:
        ranks = rank_ladder(results)
        print(ladder_heading(lanes, ranks))
        for line in ladder_lines(ranks, ladder):
            print(line)
        return
    for res in results:
        if len(results) > 1:
            print(f"\n{res.spec.variant}:")
        print_points(res.rows, res.calibration)
        # The one crossing rule says where the lanes cross, refined or not (as `analyze` of the file does).
        print_groups_analysis(group_rows(res.rows))
        for line in refine_lines(res.refinement) if res.refinement else []:
            print(line if line.endswith(".") else line + ".")
        if prices:
            print_costs(group_rows(res.rows), prices)
    if len(results) == 2:
        print_comparison(results[0], results[1])
