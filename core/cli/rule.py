"""`crossover rule`: the decision rule a program can follow, from sweep CSVs (one machine or several): per kind
of model, which lane to use above and below a number of FLOPs per batch, printed and (with --json) written."""
from __future__ import annotations

import argparse
import math
import sys

from ..files.atomic import ExportError
from ..files.live import check_output_path
from ..files.measured import check_keeps_measurements
from ..files.sweeps.sets import parse_labels
from ..report.inputs import read_sweeps
from ..report.rule import rule_of, write_rule
from ..analysis.serving_rates import lane_for_rate, run_points
from ..config import MAX_RATE, ConfigError
from ..files.sweeps.sets import file_prices, sidecar_of
from ..words.rates import choice_words, sweep_lines
from .analyze import read_rate_runs
from .common import EXIT_FAILED, EXIT_OK
from .rate_sweep import check_bound
from .machines import add_price_arg, prices_from
from ..words.numbers import fmt_count


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rule", help="the decision rule from sweep CSVs: which lane to use at a number of FLOPs "
                       "per batch, per kind of model (as analyze finds the crossover)")
    p.add_argument("files", nargs="+", metavar="file", help="sweep CSVs; files of one machine keep their lanes' names, of several machines lanes are named MACHINE/LANE")
    p.add_argument("--json", metavar="PATH", help="also write the rule here as JSON (what choose() reads)")
    p.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                   help="name a file's machine (default: the machine in its sidecar, else the file name)")
    p.add_argument("--rate", type=float, metavar="R", help="a rate sweep's file (sweep --arrival-rates): which lane "
                   "to use for R requests per second")
    p.add_argument("--p99-ms", type=float, metavar="MS", help="with --rate: with its p99 latency at most MS")
    add_price_arg(p)
    p.set_defaults(func=cmd_rule)


def rule_for_rates(args: argparse.Namespace) -> int | None:
    """`rule` of a rate sweep's file: the lane for --rate requests per second (at --p99-ms), from the same
    RatePoints `analyze` reads; None when the file is no rate sweep's."""
    results = read_rate_runs(args.files[0]) if len(args.files) == 1 else None
    if results is None:
        if args.rate is not None or args.p99_ms is not None:
            raise ConfigError("--rate and --p99-ms ask a rate sweep's file (sweep --task predict --arrival-rates …)")
        return None
    bound = check_bound(args.p99_ms)
    points = run_points(results)
    prices = {**file_prices(sidecar_of(args.files[0])), **prices_from(args)}
    for line in sweep_lines(points, bound, prices):
        print(line + ".")
    if args.rate is not None:
        print(choice_words(lane_for_rate(points, args.rate, bound, prices), args.rate, bound) + ".")
    if args.json:
        print("note: --json writes the rule of a width sweep; a rate sweep's figures are in `analyze --json`",
              file=sys.stderr)
    return EXIT_OK


def cmd_rule(args: argparse.Namespace) -> int:
    if args.rate is not None and not (math.isfinite(args.rate) and 0 < args.rate <= MAX_RATE):
        raise ConfigError(f"--rate {args.rate:g}: give the requests per second to choose a lane for, above 0 and at "
                          f"most {MAX_RATE:,.0f}")
    if args.json:
        check_output_path(args.json, "--json")
        check_keeps_measurements(args.json, "--json", args.files)
    done = rule_for_rates(args)
    if done is not None:
        return done
    sweeps = read_sweeps(args.files, parse_labels(args.label))
    for s in sweeps:
        if s.dropped:
            print(s.dropped, file=sys.stderr)
    rule = rule_of(sweeps)
    for s in sweeps:
        print(f"{s.label}: {s.path}, {fmt_count(len(s.rows), 'point')} ({'; '.join(s.devices) or 'no device named'})")
    for line in rule.lines():
        print(line + ".")
    if args.json:
        try:
            print(f"wrote {write_rule(rule, args.json)}")
        except (ExportError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    return EXIT_OK
