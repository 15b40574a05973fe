"""`crossover report`: one self-contained HTML file (or Markdown with its pictures beside it) a reader can cite,
from sweep CSVs (one machine or several), a run's CSV and an anatomy JSON: the question and the answer,
the pictures with their numbers, the fits, the rule, the settings, the machines and how to reproduce them."""
from __future__ import annotations

import argparse
import sys

from ..files.atomic import ExportError
from ..files.live import check_output_path
from ..files.measured import check_keeps_measurements
from ..files.device_profile import find_profile
from ..files.sweeps.sets import parse_labels
from ..report.html import FORMATS, write_report
from .common import EXIT_FAILED, EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="one HTML file (or Markdown) to cite: the answer, pictures with their numbers, "
                       "fits, the rule, settings, machines, how to reproduce, the files' SHA-256")
    p.add_argument("files", nargs="+", metavar="file", help="sweep CSVs (several machines make one report), "
                   "a run's per-batch CSV (its sidecar beside it), an anatomy JSON (anatomy --json-file)")
    p.add_argument("-o", "--output", required=True, metavar="PATH", help="the report to write, e.g. report.html")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="html (default; md when PATH ends in .md): md writes the pictures as SVG files beside it")
    p.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                   help="name a sweep file's machine (default: the machine in its sidecar, else the file name)")
    p.add_argument("--profile", action="append", default=[], metavar="PROFILE",
                   help="add a Predictions section: each lane of this device profile (a file, or the name of one "
                   "Crossover ships: profile --list) predicted on the files' models, apart from what they measured")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    check_output_path(args.output, "-o")
    check_keeps_measurements(args.output, "-o", args.files)
    fmt = args.format or ("md" if args.output.lower().endswith(".md") else "html")
    profiles = [find_profile(name) for name in args.profile]
    try:
        path = write_report(args.files, args.output, fmt, parse_labels(args.label), profiles=profiles)
    except (ExportError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"wrote {path}")
    return EXIT_OK
