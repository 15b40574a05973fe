"""The headless command line: devices, run, sweep, analyze. Exit 0 done, 1 a run failed, 2 bad input."""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import threading
from typing import Any, Callable, Sequence

from core import analysis
from core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec, parse_lanes, parse_widths
from core.devices import check_lanes, discover, host_info
from core.export import ExportError, export_runs, write_json
from core.presets import PRESETS, SWEEP_PRESETS
from core.records import BatchTiming, RunFailed, RunFinished, RunStarted
from core.session import LanePool, RunResult, run_comparison
from core.sweep import (SweepResult, SweepSpec, group_rows, log_widths, read_sweep_rows, run_sweep, with_knob,
                        write_sweep_csv)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}" if abs(x) < 10**digits else f"{x:,.0f}"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Progress:
    """One status line per lane on a terminal; silent when output is not a TTY."""

    def __init__(self, stream: Any = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.state: dict[str, str] = {}
        self.total_steps: dict[str, int] = {}

    def __call__(self, event: Any) -> None:
        if isinstance(event, RunStarted):
            s = event.settings
            self.total_steps[event.lane] = s.get("steps_per_epoch", 0) * s.get("epochs", 1)
            self.state[event.lane] = f"{event.lane}: started on {event.device}"
        elif isinstance(event, BatchTiming):
            total = self.total_steps.get(event.lane) or 0
            pct = f" {100 * event.step / total:3.0f}%" if total else ""
            self.state[event.lane] = f"{event.lane}:{pct} epoch {event.epoch} step {event.step} {event.ms:7.2f} ms"
        elif isinstance(event, (RunFinished, RunFailed)):
            status = event.summary.status if isinstance(event, RunFinished) else "failed"
            self.state[event.lane] = f"{event.lane}: {status}"
        else:
            return
        if self.enabled:
            self.stream.write("\r\033[K" + " | ".join(self.state.values())[:200])
            self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.state:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _config_from_args(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    if base is None:
        base = PRESETS[args.preset].config if args.preset else RunConfig()
    model = base.model
    if args.widths:
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
    return RunConfig(ModelSpec(**dataclasses.asdict(model)), TrainSpec(**{**dataclasses.asdict(base.train), **changes}))


def _check_lanes_here(lanes: Sequence[LaneSpec], pool: LanePool) -> list[str]:
    backends = tuple(sorted({lane.backend for lane in lanes}))
    needs_probe = tuple(b for b in backends if any(l.backend == b and l.kind == "gpu" for l in lanes))
    options = discover(pool, needs_probe) if needs_probe else []
    from core.devices import cpu_options, backend_version, not_installed_reason

    for b in backends:
        if b not in needs_probe:
            installed = backend_version(b) is not None
            options += cpu_options(b, installed, "" if installed else not_installed_reason(b))
    return check_lanes(list(lanes), options)


def _lanes_can_run(lanes: Sequence[LaneSpec], pool: LanePool) -> bool:
    """Print why any lane cannot run here (no GPU, backend missing); True when all can."""
    problems = _check_lanes_here(lanes, pool)
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


def print_summary(result: RunResult, out: Any = sys.stdout) -> None:
    rows = []
    for name, lr in result.lanes.items():
        s = lr.summary
        device = lr.started.device if lr.started else ""
        if s is None:
            rows.append([name, device, lr.status, "-", "-", "-", "-", "-", "-"])
            continue
        rows.append([name, device, s.status, s.n_batches, _fmt(s.median_ms), f"{_fmt(s.p10_ms)}-{_fmt(s.p90_ms)}",
                     _fmt(s.samples_per_s), _fmt(s.gflops), _fmt(s.warmup_s)])
    print(table(["lane", "device", "status", "steady", "median ms", "p10-p90 ms", "samples/s", "GFLOP/s",
                 "warm-up s"], rows), file=out)
    for name, lr in result.lanes.items():
        if lr.failure:
            print(f"{name} failed: {lr.failure}", file=out)
    summaries = [lr.summary for lr in result.lanes.values() if lr.summary and lr.summary.status != "failed"]
    if len(summaries) >= 2:
        fastest = min(summaries, key=lambda s: s.median_ms if math.isfinite(s.median_ms) else math.inf)
        for other in summaries:
            if other is not fastest:
                print(analysis.verdict(fastest, other) + ".", file=out)
        if len(summaries) == 2:
            print(analysis.explain(summaries[0], summaries[1]), file=out)


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
    data = next((lr.started.settings.get("data_description") for lr in result.lanes.values() if lr.started), None)
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
    return EXIT_FAILED if any(lr.status == "failed" for lr in result.lanes.values()) else EXIT_OK


def _sweep_spec(args: argparse.Namespace) -> SweepSpec:
    layers, widths, base = SWEEP_PRESETS[args.preset] if args.preset else (2, (), RunConfig())
    if args.widths:
        widths = parse_widths(args.widths)
    elif not widths:
        widths = log_widths(args.min_width, args.max_width, args.points)
    # Flags given on the command line apply on top of the preset's settings.
    config = _config_from_args(argparse.Namespace(**{**vars(args), "widths": None, "preset": None}), base)
    batches = parse_widths(args.batch_sizes) if args.batch_sizes else ()
    return SweepSpec(widths=tuple(widths), layers=args.layers or layers, batch_sizes=batches,
                     base=config, steady_steps=args.steady_steps, seconds_per_point=args.seconds_per_point,
                     calibrate=not args.no_calibrate)


def print_groups_analysis(groups: dict[str, list], out: Any = sys.stdout) -> None:
    for label, points in groups.items():
        if len(groups) > 1:
            print(f"\n{label}:", file=out)
        print_sweep_analysis(points, out)


def analyze_groups(groups: dict[str, list]) -> dict[str, Any]:
    """The documented JSON for the first group; with several groups, each one's under "groups" too."""
    results = {label: analysis.analyze_points(points) for label, points in groups.items()}
    first = next(iter(results.values()), analysis.analyze_points([]))
    return first if len(results) <= 1 else {**first, "group": next(iter(results)), "groups": results}


def print_sweep_analysis(points: list, out: Any = sys.stdout) -> None:
    result = analysis.analyze_points(points)
    print(table(["lane", "fixed overhead ms", "GFLOP/s", "points"],
                [[lane, _fmt(v["overhead_ms"]), _fmt(v["gflops"]), v["n_points"]] for lane, v in result["lanes"].items()]),
          file=out)
    lanes = sorted(result["lanes"])
    for i, a in enumerate(lanes):
        for b in lanes[i + 1:]:
            print(analysis.describe_pair(points, a, b) + ".", file=out)
    for p in result["predicted_crossovers"]:
        print(f"cost models of {p['lanes'][0]} and {p['lanes'][1]} cross at {_fmt(p['flops_per_batch'])} FLOPs per batch.",
              file=out)


def _print_points(rows: list[dict], calibration: dict[str, dict]) -> None:
    for lane, cal in calibration.items():
        if cal.get("error") or cal.get("reason"):
            print(f"{lane}: calibration failed: {cal.get('error') or cal.get('reason')}")
        else:
            print(f"{lane}: a {cal['size']}x{cal['size']} float32 matrix product runs at {_fmt(cal['gflops'])} GFLOP/s")
    print(table(["lane", "width", "batch", "MFLOP/batch", "median ms", "p10-p90 ms", "GFLOP/s", "of peak", "status"],
                [[r["lane"], r["width"], r["batch_size"], _fmt(r["flops_per_batch"] / 1e6), _fmt(r["median_ms"]),
                  f"{_fmt(r['p10_ms'])}-{_fmt(r['p90_ms'])}", _fmt(r["gflops"]),
                  f"{100 * r['peak_share']:.0f}%" if math.isfinite(r["peak_share"]) else "-", r["status"]]
                 for r in rows]))
    for r in rows:
        if r["status"] == "failed":
            print(f"{r['lane']} width {r['width']} failed: {r['reason']}")


def print_comparison(base: SweepResult, changed: SweepResult, out: Any = sys.stdout) -> None:
    """How the knob moved each lane's fixed overhead and throughput, and the crossovers."""
    (label_a, points_a), (label_b, points_b) = next(iter(base.groups().items())), next(iter(changed.groups().items()))
    a, b = analysis.analyze_points(points_a), analysis.analyze_points(points_b)
    name = changed.spec.variant if label_b == "all" else f"{changed.spec.variant} ({label_b})"
    rows = []
    for lane in sorted(set(a["lanes"]) | set(b["lanes"])):
        la, lb = a["lanes"].get(lane, {}), b["lanes"].get(lane, {})
        rows.append([lane, f"{_fmt(la.get('overhead_ms'))} → {_fmt(lb.get('overhead_ms'))}",
                     f"{_fmt(la.get('gflops'))} → {_fmt(lb.get('gflops'))}"])
    print(f"\ncompare: base → {name}", file=out)
    print(table(["lane", "fixed overhead ms", "GFLOP/s"], rows), file=out)
    for label, res in (("base" if label_a == "all" else f"base ({label_a})", a), (name, b)):
        crossings = ", ".join(f"{c['faster_above']} faster above width {_fmt(c['width'])}" for c in res["crossovers"])
        print(f"{label}: {crossings or 'no crossover in this range'}", file=out)


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
        done = [0]

        def on_point(row: dict, _done: int, _total: int) -> None:
            done[0] += 1
            print(f"[{done[0]}/{total}] {row['variant']:>8} {row['lane']:>10} width {row['width']:>6} "
                  f"batch {row['batch_size']:>5}: {_fmt(row['median_ms'])} ms/batch ({row['status']})", file=sys.stderr)

        def work(cancel: threading.Event) -> list[SweepResult]:
            out = []
            for s in specs:
                if cancel.is_set():
                    break
                out.append(run_sweep(pool, lanes, s, on_point=on_point, cancel=cancel))
            return out

        results, interrupted = _run_in_thread(work)
    finally:
        pool.close()
    results = results or []
    rows = [r for res in results for r in res.points]
    for res in results:
        if len(results) > 1:
            print(f"\n{res.spec.variant}:")
        _print_points(res.points, res.calibration)
        print_groups_analysis(res.groups())
    if len(results) == 2:
        print_comparison(results[0], results[1])
    if args.csv:
        try:
            write_sweep_csv(args.csv, rows)
            stem = args.csv[:-4] if args.csv.endswith(".csv") else args.csv
            export_runs(stem + "-batches.csv", [run for res in results for run in res.runs], host_info(),
                        extra={"sweep": {"widths": list(spec.widths), "layers": spec.layers,
                                         "steady_steps": spec.steady_steps,
                                         "seconds_per_point": spec.seconds_per_point,
                                         "variants": {res.spec.variant: {
                                             "calibration": res.calibration, "cancelled": res.cancelled,
                                             "analysis": analyze_groups(res.groups())}
                                             for res in results}}})
            print(f"wrote {args.csv}, {stem}-batches.csv and {stem}-batches.json")
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if any(r["status"] == "failed" for r in rows) else EXIT_OK


def cmd_analyze(args: argparse.Namespace) -> int:
    groups = group_rows(read_sweep_rows(args.file))
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
    p.add_argument("--optimizer", choices=("adam", "nadam", "sgd", "rmsprop"))
    p.add_argument("--learning-rate", type=float)
    p.add_argument("--dropout", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--samples", type=int, help="use at most N training samples (quick runs)")
    p.add_argument("--data", help="auto (MNIST if cached or downloadable, else synthetic), mnist, synthetic, or a .npz path")
    p.add_argument("--preprocessing", choices=("scale", "l2"), help="scale: x/255; l2: unit L2 norm per row")
    p.add_argument("--jit", choices=("on", "off"), help="XLA / jit compilation (default: the backend's default, "
                   "recorded: off for tensorflow and torch, on for jax)")
    p.add_argument("--steps-per-execution", type=int)
    p.add_argument("--feeding", choices=("host", "device"), help="host: batches copied from host memory each step; "
                   "device: whole set resident on the device (jax, torch)")
    p.add_argument("--mixed-precision", action="store_true", help="float16 compute on GPU lanes")
    p.add_argument("--warmup-steps", type=int, help="steps flagged as warm-up at the start of each run (default 5)")
    p.add_argument("--csv", help="write per-batch timings here, and the settings to a .json beside it")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python main.py", description=(
        "Crossover: where the GPU starts to win. With no command, opens the window."))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("devices", help="list the lanes this machine offers")
    p.set_defaults(func=cmd_devices)
    p = sub.add_parser("run", help="train one model on several lanes and compare")
    p.add_argument("--preset", choices=sorted(PRESETS), help="start from a seed's model and settings")
    p.add_argument("--schedule", choices=("sequential", "concurrent"), default="sequential",
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
                   "how overhead, throughput and the crossover move: jit=on, batch_size=512, steps_per_execution=8, "
                   "feeding=device, mixed_precision=on")
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
