"""`main.py analyze`: cost fits and crossovers of any sweep CSV, as a table or as JSON."""
from __future__ import annotations

import argparse
import json
import sys

from crossover_lab.core.analysis import analyze_groups
from crossover_lab.core.cli_common import EXIT_BAD_INPUT, EXIT_OK
from crossover_lab.core.report import print_groups_analysis
from crossover_lab.core.sweep_files import SweepReading, iter_sweep_rows
from crossover_lab.core.sweep_rows import group_rows


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="fit the cost model and find crossovers in a sweep CSV")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_analyze)


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
