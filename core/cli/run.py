"""`main.py run`: train one model on several lanes and compare them.

With --csv the files exist from the moment the lanes start and grow as records arrive, so even a
`kill -9` leaves a readable CSV and sidecar of the same run; at the end both are written whole.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from typing import Mapping

from ..files import autosave
from ..files.noise import bound_by_noise
from .common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, add_config_args, add_stop_args, config_from_args,
                     check_memory, check_schedule, lanes_can_run, open_run_files, resolve_factory, resolve_saved, report_safely, say, write_or_rescue)
from .machines import add_price_arg, add_remote_arg, prices_from, print_run_costs, remote_settings
from ..config import ConfigError, LaneSpec, RunConfig, Schedule, parse_int_list, parse_lanes
from ..engine.devices import host_info
from ..files.live import RunFiles
from ..json_data import JsonValue
from ..presets import PRESETS
from ..records import LaneEvent, Status, now_iso
from .printing import Progress, print_rates, print_ramp, print_summary
from ..analysis.serving_rates import run_points
from ..engine.pool import LanePool, run_comparison
from ..engine.conductor import SCHEDULES, default_schedule, schedule_named
from ..results import RunResult, new_run_id
from ..study.saved import Stopped, with_factory
from ..study.sweep import DEFAULT_POINT_SECONDS, DEFAULT_STEADY_STEPS, parse_sweep_widths, ramp_plan, steady_steps_for
from .stopping import StopSignals
from ..engine.tracking import RunTracker
from ..words.failures import failure_words
from ..words.run import contention_lines
from ..plurals import plural


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="train one model on several lanes and compare")
    p.add_argument("--preset", choices=sorted(PRESETS), help="start from a seed's model and settings")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="each lane stops after this many seconds of steady training on the model, mid-epoch if need "
                        "be (the window's Time limit; default: none, the epochs and --samples decide)")
    p.add_argument("--schedule", choices=SCHEDULES + ("concurrent",), metavar="SCHEDULE",
                   help="interleaved: lanes take turns (uncontended figures); side-by-side: all at once (a demo; "
                        "lanes that share CPU cores slow each other down); sequential: one lane after another. "
                        "Default: interleaved when lanes share this machine's CPU cores, else side-by-side")
    p.add_argument("--ramp", metavar="WIDTHS", help="one run that steps every lane through these widths, e.g. "
                   "16,64,256,1024 (each measured as a sweep point: warm-up, then --steady-steps or "
                   "--seconds-per-point), and names the width where the faster lane changes")
    p.add_argument("--ramp-batch-sizes", metavar="SIZES", help="one run that steps every lane through these batch "
                   "sizes at the model's own width, e.g. 1,8,64,512 (each measured as a ramp's width is; your own "
                   "--model's ramp), and names the batch size where the faster lane changes")
    p.add_argument("--layers", type=int, help="with --ramp: hidden layers, each of the ramp's width "
                   "(default: as many as --widths has)")
    p.add_argument("--steady-steps", type=int, default=None,
                   help=f"with --ramp: steady batches per width at most (default {DEFAULT_STEADY_STEPS}; with --task "
                        "predict the calls a p99 needs, 662)")
    p.add_argument("--seconds-per-point", type=float, default=DEFAULT_POINT_SECONDS,
                   help=f"with --ramp: steady time per width at most (default {DEFAULT_POINT_SECONDS:g})")
    add_config_args(p, widths_help="hidden layer widths, e.g. 750,150,50,50 (default 128)")
    add_remote_arg(p)
    add_price_arg(p)
    add_stop_args(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    config, lanes, batches = _run_options(args)
    plan = _ramp(args, config, batches)
    check_memory(plan or (config,), lanes)
    schedule = schedule_named(args.schedule) if args.schedule else default_schedule(lanes)
    if config.train.arrival_rate is not None:
        schedule = load_schedule(args.schedule, plan)
    prices = prices_from(args, [lane.name for lane in lanes])
    host = host_info()
    files = open_run_files(args.csv, host, {"prices": prices} if prices else None)
    pool = LanePool(remote_settings(args), watchdog_s=args.watchdog_s)
    with StopSignals() as stop:
        try:
            if not lanes_can_run(lanes, pool):
                return EXIT_BAD_INPUT
            found = _find_model(config, plan, pool, lanes, stop)
            if found is None:  # stopped while a lane inspected the model: nothing was measured
                return stop.exit_code or EXIT_FAILED
            config, plan = found
            tracker = RunTracker(new_run_id(), plan[0] if plan else config, lanes, schedule, now_iso(), plan)
            bound_by_noise(tracker.result)  # this machine's run-to-run noise, where a sweep here measured it
            if files is not None:
                files.begin([tracker.result])
            _say_plan(config, plan, bool(batches), lanes, schedule)
            final, code, written = _measure(_Run(pool, lanes, config, plan, schedule, tracker), files, host, stop)
        finally:
            if files is not None:
                files.close()
            pool.close()
        report_safely(lambda: _report(schedule, lanes, final, prices))
        if written:
            report_safely(lambda: print(written, file=sys.stderr if code else sys.stdout))
        if stop.exit_code is not None:
            return stop.exit_code
        if code != EXIT_OK or any(lane.status == Status.FAILED for lane in final.lanes.values()):
            return EXIT_FAILED
        return EXIT_OK


def _run_options(args: argparse.Namespace) -> tuple[RunConfig, list[LaneSpec], tuple[int, ...]]:
    """The run's config (with --time-limit), its lanes and --ramp-batch-sizes, or ConfigError for options that
    contradict one another."""
    config = config_from_args(args)
    if args.time_limit is not None:
        if not 0 < args.time_limit <= 36_000:
            raise ConfigError(f"--time-limit {args.time_limit:g}: choose above 0 and up to 36,000 seconds")
        config = dataclasses.replace(config, train=dataclasses.replace(config.train, max_seconds=args.time_limit))
    check_schedule(config)
    lanes = list(parse_lanes(args.lanes))
    if config.model.saved is not None and args.ramp is not None:
        raise ConfigError("--ramp steps through widths, and a saved model has none: ramp it through "
                          "--ramp-batch-sizes, or sweep it along --batch-sizes")
    if args.ramp is not None and args.ramp_batch_sizes is not None:
        raise ConfigError("--ramp and --ramp-batch-sizes: a ramp goes through widths or through batch sizes, "
                          "not both at once (a sweep takes both: sweep --widths … --batch-sizes …)")
    if config.model.factory is not None and args.layers is not None:
        raise ConfigError(f"--layers: {config.model.factory.function}(width) builds the whole model; it has no "
                          "layers of Crossover's to set")
    if args.ramp is None and args.layers is not None:
        raise ConfigError("--layers sets a ramp's depth: add --ramp, or give --widths one width per layer")
    batches = parse_int_list(args.ramp_batch_sizes, "batch size") if args.ramp_batch_sizes is not None else ()
    return config, lanes, tuple(batches)


def _ramp(args: argparse.Namespace, config: RunConfig, batches: tuple[int, ...]) -> tuple[RunConfig, ...]:
    """A ramp's configs, a segment each, in order (through --ramp's widths or the batch sizes); () without one."""
    if args.ramp is None and not batches:
        return ()
    return ramp_plan(config, parse_sweep_widths(args.ramp) if args.ramp is not None else (), args.layers,
                     steady_steps_for(args.steady_steps, config), args.seconds_per_point, batch_sizes=batches)


def _find_model(config: RunConfig, plan: tuple[RunConfig, ...], pool: LanePool, lanes: list[LaneSpec],
               stop: StopSignals) -> tuple[RunConfig, tuple[RunConfig, ...]] | None:
    """The config and ramp with the model as a lane found it: a factory built and counted at every width the run
    will time, or a saved model loaded and counted; None when a stop came first (the lanes go at once)."""
    try:
        if config.model.factory is not None:
            config = resolve_factory(config, pool, lanes, [c.model.widths[0] for c in plan], stop.cancel)
            factory = config.model.factory
            plan = tuple(with_factory(c, factory) for c in plan) if factory is not None else plan
        else:
            config = resolve_saved(config, pool, lanes, stop.cancel)
    except Stopped as stopped:
        say(f"{stopped}: nothing was measured")
        pool.close(0.2)
        return None
    if config.model.saved is not None and plan:  # each step of the ramp trains the model as found
        plan = tuple(dataclasses.replace(c, model=config.model) for c in plan)
    return config, plan


def _say_plan(config: RunConfig, plan: tuple[RunConfig, ...], by_batch: bool, lanes: list[LaneSpec],
             schedule: Schedule) -> None:
    """What the run will time, on which lanes, how (`by_batch`: the ramp goes through batch sizes)."""
    on = f"lanes {', '.join(lane.name for lane in lanes)} ({schedule})"
    if plan and by_batch:
        say(f"ramp: model {plan[0].model.label()} through batch sizes "
            f"{', '.join(str(c.train.batch_size) for c in plan)}; {on}")
    elif plan:
        depth = len(plan[0].model.widths)
        say(f"ramp: {depth} hidden {plural(depth, 'layer')} through widths "
            f"{', '.join(str(c.model.widths[0]) for c in plan)}, batch {config.train.batch_size}; {on}")
    else:
        say(f"model {config.model.label()}, {config.model.params:,} parameters, "
            f"{config.flops_per_batch / 1e6:,.1f} MFLOP per batch of {config.train.batch_size}; {on}")


@dataclasses.dataclass(frozen=True)
class _Run:
    """What a run measures: on which pool and lanes, the config (and ramp), the schedule, and its tracker."""

    pool: LanePool
    lanes: list[LaneSpec]
    config: RunConfig
    plan: tuple[RunConfig, ...]
    schedule: Schedule
    tracker: RunTracker


def _measure(run: _Run, files: RunFiles | None, host: Mapping[str, JsonValue],
            stop: StopSignals) -> tuple[RunResult, int, str]:
    """Run the lanes until they finish or a stop, growing the --csv files as records arrive; then write them whole
    (or rescue them to the autosave folder). A failure's records are written first, then its traceback follows.
    Returns the run's result, the exit code of the writing and the sentence saying where the files are."""
    pool, tracker, progress = run.pool, run.tracker, Progress()

    def on_event(event: LaneEvent) -> None:  # after run_comparison folded it into the tracker
        progress(event)
        if files is not None:
            files.take([event], [tracker.result])

    def work(cancel: threading.Event) -> RunResult:
        # Every lane imports its framework and makes its data at once, before the run: none is timed
        # while another imports, and lanes side by side start together.
        pool.ready(run.lanes, cancel, data_of=run.config)
        return run_comparison(pool, run.lanes, run.config, schedule=run.schedule, tracker=tracker,
                              on_event=on_event, cancel=cancel, plan=run.plan)

    failure = ""
    try:
        stop.run(work, on_hurry=lambda: pool.close(0.2))
    except Exception as exc:  # what was measured is written first; the traceback follows
        failure = f"internal error: {type(exc).__name__}: {exc}"
        raise
    finally:
        final = tracker.finish(failure)
        report_safely(progress.done)
        pool.close(0.2 if stop.hurry.is_set() else 2.0)
        code, written = EXIT_OK, ""
        if files is not None:
            code, written = write_or_rescue(lambda: list(files.finish([final])),
                                            lambda: [autosave.save_run(final, host)], "the run's records",
                                            partial=lambda: () if files.whole([final]) else (files.csv_path,
                                                                                             files.json_path))
    return final, code, written


def load_schedule(asked: str | None, plan: tuple = ()) -> Schedule:
    """Requests at a rate meet one lane after another: a lane's requests keep arriving while it waits for its turn
    (so the turn would be charged to them as queueing), and lanes side by side would share the cores they serve on."""
    if asked is not None and schedule_named(asked) is not Schedule.SEQUENTIAL:
        raise ConfigError(f"--schedule {asked}: requests at a rate are served by one lane at a time (sequential), "
                          "or a lane's requests would queue while another lane has its turn")
    if plan:
        raise ConfigError("--arrival-rate with a ramp: sweep the rates instead (sweep --task predict "
                          "--arrival-rates 50,100,200)")
    return Schedule.SEQUENTIAL


def _report(schedule: Schedule, lanes: list, result: RunResult, prices: dict[str, float]) -> None:
    if result.config.train.arrival_rate is not None:
        print_rates(run_points([result]))
        for name, lane in result.lanes.items():  # the rate's table says "failed"; here is why
            if lane.status == Status.FAILED:
                print(f"{name} failed: {failure_words(name, lane.failure)}")
    elif any(len(lane.segments) > 1 for lane in result.lanes.values()):
        print_ramp(result)
    else:
        print_summary(result)
    print_run_costs(result, prices)
    for line in contention_lines(result):
        print(line)
    data = next((lane.started.settings.data_description for lane in result.lanes.values()
                 if lane.started), None)
    if data:
        print(f"data: {data}")
    sys.stdout.flush()
