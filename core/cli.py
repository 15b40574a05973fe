"""The headless command line: devices, run, sweep, analyze. Exit 0 done, 1 a run failed, 2 bad input."""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
from typing import Any, Callable, Sequence

from crossover_lab.core.analysis import analyze_groups
from crossover_lab.core.config import (FEEDINGS, OPTIMIZERS, PREPROCESSING, ConfigError, LaneSpec, ModelSpec,
                                       RunConfig, TrainSpec, parse_int_list, parse_lanes, parse_widths)
from crossover_lab.core.devices import discover, host_info, lane_problems
from crossover_lab.core.export import ExportError, export_runs
from crossover_lab.core.presets import PRESETS, SWEEP_PRESETS
from crossover_lab.core.report import (Progress, print_comparison, print_groups_analysis, print_points, print_summary,
                                       table)
from crossover_lab.core.session import SCHEDULES, LanePool, run_comparison
from crossover_lab.core.sweep import (KNOBS, PointMeasured, SweepSpec, log_widths, parse_sweep_widths, run_sweeps,
                                      with_knob)
from crossover_lab.core.sweep_files import export_sweep, iter_sweep_rows, SweepReading
from crossover_lab.core.sweep_rows import group_rows
from crossover_lab.core.words import fmt_num

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def _config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    if base is None:
        base = PRESETS[args.preset].config if args.preset else RunConfig()
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
    if data.endswith(".npz") and not os.path.isfile(data):
        raise ConfigError(f"data file {data} does not exist")
    return RunConfig(ModelSpec(**dataclasses.asdict(model)), TrainSpec(**{**dataclasses.asdict(base.train), **changes}))


def _lanes_can_run(lanes: Sequence[LaneSpec], pool: LanePool) -> bool:
    """Print why any lane cannot run here (no GPU, backend missing); True when all can."""
    problems = lane_problems(list(lanes), pool)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return not problems


def _run_in_thread(work: Callable[[threading.Event], Any]) -> tuple[Any, bool]:
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


def cmd_devices(args: argparse.Namespace) -> int:
    host = host_info()
    print(f"CPU: {host['cpu']} ({host['cpu_cores']} cores usable)")
    for gpu in host["gpus"]:
        print(f"NVIDIA driver sees: {gpu['name']} (driver {gpu['driver']}, {gpu['memory']})")
    if not host["gpus"]:
        print("NVIDIA driver: none found (no nvidia-smi)")
    pool = LanePool()
    try:
        options = discover(pool)
    finally:
        pool.close()
    print(table(["lane", "device", "available"],
                [[o.name, o.device, "yes" if o.available else f"no: {o.reason}"] for o in options]))
    if not any(o.available and o.spec.kind == "gpu" for o in options):
        print("No GPU lane is available here: compare cpu with cpu1 (all cores against one thread).")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    config = _config_from_args(args)
    lanes = parse_lanes(args.lanes)
    pool = LanePool()
    try:
        if not _lanes_can_run(lanes, pool):
            return EXIT_BAD_INPUT
        progress = Progress()
        print(f"model {config.model.label()}, {config.model.params:,} parameters, "
              f"{config.flops_per_batch / 1e6:,.1f} MFLOP per batch of {config.train.batch_size}; "
              f"lanes {', '.join(l.name for l in lanes)} ({args.schedule})", file=sys.stderr)
        result, interrupted = _run_in_thread(lambda cancel: run_comparison(
            pool, list(lanes), config, schedule=args.schedule, on_event=progress, cancel=cancel))
        progress.done()
    finally:
        pool.close()
    print_summary(result)
    cpu_lanes = [lane for lane in lanes if lane.kind == "cpu"]
    if args.schedule == "concurrent" and len(lanes) > 1 and cpu_lanes:
        print("note: the lanes ran side by side and shared CPU cores, so these figures include that "
              "contention; --schedule sequential gives exact figures.")
    data = next((lane.started.settings.get("data_description") for lane in result.lanes.values() if lane.started),
                None)
    if data:
        print(f"data: {data}")
    if args.csv:
        try:
            csv_path, json_path = export_runs(args.csv, [result], host_info())
            print(f"wrote {csv_path} and {json_path}")
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if any(lane.status == "failed" for lane in result.lanes.values()) else EXIT_OK


def _sweep_spec(args: argparse.Namespace) -> SweepSpec:
    layers, widths, base = SWEEP_PRESETS[args.preset] if args.preset else (2, (), RunConfig())
    if args.widths is not None:
        widths = parse_sweep_widths(args.widths)
    elif not widths:
        widths = log_widths(args.min_width, args.max_width, args.points)
    # Flags given on the command line apply on top of the preset's settings.
    config = _config_from_args(argparse.Namespace(**{**vars(args), "widths": None, "preset": None}), base)
    batches = parse_int_list(args.batch_sizes, "batch size") if args.batch_sizes is not None else ()
    return SweepSpec(widths=tuple(widths), layers=layers if args.layers is None else args.layers,
                     batch_sizes=batches,
                     base=config, steady_steps=args.steady_steps, seconds_per_point=args.seconds_per_point,
                     calibrate=not args.no_calibrate)


def cmd_sweep(args: argparse.Namespace) -> int:
    lanes = parse_lanes(args.lanes)
    spec = _sweep_spec(args)
    specs = [spec] + ([with_knob(spec, args.compare)] if args.compare else [])
    pool = LanePool()
    try:
        if not _lanes_can_run(lanes, pool):
            return EXIT_BAD_INPUT
        total = sum(len(s.points()) for s in specs) * len(lanes)
        print(f"sweep: {len(spec.points())} points × {len(lanes)} lanes{' × 2 (compare)' if args.compare else ''}, "
              f"widths {', '.join(map(str, spec.widths))}, {spec.layers} layer(s), "
              f"up to {spec.steady_steps} steady batches or {spec.seconds_per_point:g} s each", file=sys.stderr)
        def on_point(point: PointMeasured) -> None:
            for row in point.rows:
                print(f"[{point.done}/{point.total}] {row.variant:>8} {row.lane:>10} width {row.width:>6} "
                      f"batch {row.batch_size:>5}: {fmt_num(row.median_ms)} ms/batch ({row.status})", file=sys.stderr)

        results, interrupted = _run_in_thread(
            lambda cancel: run_sweeps(pool, lanes, specs, on_point=on_point, cancel=cancel))
    finally:
        pool.close()
    results = results or []
    rows = [r for res in results for r in res.rows]
    for res in results:
        if len(results) > 1:
            print(f"\n{res.spec.variant}:")
        print_points(res.rows, res.calibration)
        print_groups_analysis(group_rows(res.rows))
    if len(results) == 2:
        print_comparison(results[0], results[1])
    if args.csv:
        try:
            print("wrote " + ", ".join(map(str, export_sweep(args.csv, results, host_info()))))
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if any(r.status == "failed" for r in rows) else EXIT_OK


def cmd_analyze(args: argparse.Namespace) -> int:
    reading = SweepReading(args.file)
    groups = group_rows(iter_sweep_rows(args.file, reading))
    if reading.dropped:
        print(reading.drop_note(), file=sys.stderr)
    if not groups:
        print(f"error: {args.file} holds no points" + (" that can be used" if reading.lines else ""),
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(analyze_groups(groups), indent=2))
    else:
        print_groups_analysis(groups)
    return EXIT_OK


def _add_config_args(p: argparse.ArgumentParser, *, widths_help: str) -> None:
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
    p.add_argument("--data", help="auto (MNIST if cached or downloadable, else synthetic), mnist, synthetic, or a .npz path")
    p.add_argument("--preprocessing", choices=PREPROCESSING, help="scale: x/255; l2: unit L2 norm per row")
    p.add_argument("--jit", choices=("on", "off"), help="XLA / jit compilation (default: the backend's default, "
                   "recorded: off for tensorflow and torch, on for jax)")
    p.add_argument("--steps-per-execution", type=int)
    p.add_argument("--feeding", choices=FEEDINGS, help="host: batches copied from host memory each step; "
                   "device: whole set resident on the device (jax, torch)")
    p.add_argument("--mixed-precision", action="store_true", help="float16 compute on GPU lanes")
    p.add_argument("--warmup-steps", type=int, help="steps flagged as warm-up at the start of each run (default 5)")
    p.add_argument("--csv", help="write per-batch timings here, and the settings to a .json beside it")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python main.py", description=(
        "Crossover: where the GPU starts to win. With no command, opens the window."), epilog=(
        "The window: python main.py [--screenshot PATH [--run] [--after SECONDS] [--tab compare|sweep]]. "
        "Each command has its own --help."))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("devices", help="list the lanes this machine offers")
    p.set_defaults(func=cmd_devices)
    p = sub.add_parser("run", help="train one model on several lanes and compare")
    p.add_argument("--preset", choices=sorted(PRESETS), help="start from a seed's model and settings")
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential",
                   help="sequential: exact figures; concurrent: side by side (lanes may share CPU cores)")
    _add_config_args(p, widths_help="hidden layer widths, e.g. 750,150,50,50 (default 128)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("sweep", help="time growing widths on each lane and find the crossover")
    p.add_argument("--preset", choices=sorted(SWEEP_PRESETS), help="a seed's experiment over widths")
    _add_config_args(p, widths_help="widths to sweep, e.g. 16,64,256,1024 (default: log-spaced --min-width..--max-width)")
    p.add_argument("--layers", type=int, help="hidden layers, each of the swept width (default 2)")
    p.add_argument("--min-width", type=int, default=16)
    p.add_argument("--max-width", type=int, default=4096)
    p.add_argument("--points", type=int, default=6)
    p.add_argument("--batch-sizes", help="also sweep these batch sizes, e.g. 32,128,512")
    p.add_argument("--steady-steps", type=int, default=60, help="steady batches per point at most (default 60)")
    p.add_argument("--seconds-per-point", type=float, default=3.0, help="steady time per point at most (default 3)")
    p.add_argument("--compare", metavar="KNOB=VALUE", help="run the sweep again with one setting changed and show "
                   f"how overhead, throughput and the crossover move; knobs: {', '.join(KNOBS)} "
                   "(e.g. jit=on, batch_size=512, steps_per_execution=8, feeding=device, mixed_precision=on)")
    p.add_argument("--no-calibrate", action="store_true", help="skip timing a large matrix product per lane")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("analyze", help="fit the cost model and find crossovers in a sweep CSV")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_analyze)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
