"""`crossover rule`: the decision rule a program can follow, from sweep CSVs (one machine or several): per kind
of model, which lane to use above and below a number of FLOPs per batch, printed and (with --json) written."""
from __future__ import annotations

import argparse
import sys

from ..files.atomic import ExportError
from ..files.live import check_output_path
from ..files.sweep_sets import parse_labels
from ..report.inputs import read_sweeps
from ..report.rule import rule_of, write_rule
from .common import EXIT_FAILED, EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rule", help="the decision rule from sweep CSVs: which lane to use at a number of FLOPs "
                       "per batch, per kind of model (as analyze finds the crossover)")
    p.add_argument("files", nargs="+", metavar="file", help="sweep CSVs; files of one machine keep their lanes' names, of several machines lanes are named MACHINE/LANE")
    p.add_argument("--json", metavar="PATH", help="also write the rule here as JSON (what choose() reads)")
    p.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                   help="name a file's machine (default: the machine in its sidecar, else the file name)")
    p.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    if args.json:
        check_output_path(args.json, "--json")
    sweeps = read_sweeps(args.files, parse_labels(args.label))
    for s in sweeps:
        if s.dropped:
            print(s.dropped, file=sys.stderr)
    rule = rule_of(sweeps)
    for s in sweeps:
        print(f"{s.label}: {s.path}, {len(s.rows)} points ({'; '.join(s.devices) or 'no device named'})")
    for line in rule.lines():
        print(line + ".")
    if args.json:
        try:
            print(f"wrote {write_rule(rule, args.json)}")
        except (ExportError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    return EXIT_OK
