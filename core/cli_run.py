"""`main.py run`: train one model on several lanes and compare them."""
from __future__ import annotations

import argparse
import sys

from crossover_lab.core.cli_common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, add_config_args,
                                           config_from_args, lanes_can_run, run_in_thread)
from crossover_lab.core.cli_machines import add_price_arg, add_remote_arg, prices_from, print_run_costs, remote_settings
from crossover_lab.core.config import parse_lanes
from crossover_lab.core.devices import host_info
from crossover_lab.core.export import ExportError, export_runs
from crossover_lab.core.presets import PRESETS
from crossover_lab.core.report import Progress, print_summary
from crossover_lab.core.session import SCHEDULES, LanePool, run_comparison


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="train one model on several lanes and compare")
    p.add_argument("--preset", choices=sorted(PRESETS), help="start from a seed's model and settings")
    p.add_argument("--schedule", choices=SCHEDULES, default="sequential",
                   help="sequential: exact figures; concurrent: side by side (lanes may share CPU cores)")
    add_config_args(p, widths_help="hidden layer widths, e.g. 750,150,50,50 (default 128)")
    add_remote_arg(p)
    add_price_arg(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    lanes = parse_lanes(args.lanes)
    prices = prices_from(args)
    pool = LanePool(remote_settings(args))
    try:
        if not lanes_can_run(lanes, pool):
            return EXIT_BAD_INPUT
        progress = Progress()
        print(f"model {config.model.label()}, {config.model.params:,} parameters, "
              f"{config.flops_per_batch / 1e6:,.1f} MFLOP per batch of {config.train.batch_size}; "
              f"lanes {', '.join(lane.name for lane in lanes)} ({args.schedule})", file=sys.stderr)
        result, interrupted = run_in_thread(lambda cancel: run_comparison(
            pool, list(lanes), config, schedule=args.schedule, on_event=progress, cancel=cancel))
        progress.done()
    finally:
        pool.close()
    print_summary(result)
    print_run_costs(result, prices)
    here = [lane for lane in lanes if not lane.host]  # lanes on other machines share none of these cores
    if args.schedule == "concurrent" and len(here) > 1 and any(lane.kind == "cpu" for lane in here):
        print("note: the lanes ran side by side and shared CPU cores, so these figures include that "
              "contention; --schedule sequential gives exact figures.")
    data = next((lane.started.settings.get("data_description") for lane in result.lanes.values() if lane.started),
                None)
    if data:
        print(f"data: {data}")
    if args.csv:
        try:
            csv_path, json_path = export_runs(args.csv, [result], host_info(), {"prices": prices} if prices else None)
            print(f"wrote {csv_path} and {json_path}")
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED if any(lane.status == "failed" for lane in result.lanes.values()) else EXIT_OK
