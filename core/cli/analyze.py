"""`main.py analyze`: cost fits and crossovers of sweep CSVs, from one machine or several, as a table or as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Mapping, cast

import dataclasses

from ..analysis.crossings import SweepAnalysis, analyze_groups
from ..analysis.serving_load import LoadPoint, rates_of, run_points
from ..config import ConfigError
from ..files.inputs import RowsReading
from ..files.run_files import read_runs
from ..results import RunResult
from ..words.load import sweep_lines
from .load_sweep import check_bound
from .printing import print_load
from ..analysis.points import SweepPoint
from ..json_data import JsonValue, finite_or_none
from .common import EXIT_BAD_INPUT, EXIT_OK
from .machines import add_price_arg, print_costs, prices_from
from ..analysis.costs import cost_analysis
from ..analysis.energy import energy_analysis
from ..analysis.leads import refinement_of_sidecar
from ..words.sweep import refine_lines
from .printing import print_groups_analysis
from ..files.sweeps import SweepReading, iter_sweep_rows
from ..files.findings import Findings
from ..files.sweep_rows import group_rows
from ..files.sweep_sets import file_prices, parse_labels, sidecar_of
from ..report.inputs import read_sweeps
from ..words.numbers import fmt_count


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="fit the cost model and find crossovers in sweep CSVs (one or several machines)")
    p.add_argument("files", nargs="+", metavar="file", help="sweep CSVs; files of one machine keep their lanes' names, of several machines lanes are named MACHINE/LANE")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                   help="name a file's machine (default: the machine in its sidecar, else the file name)")
    p.add_argument("--p99-ms", type=float, metavar="MS", help="a load sweep's file (sweep --arrival-rates): the "
                   "highest rate each lane holds with its p99 at most MS")
    add_price_arg(p)
    p.set_defaults(func=cmd_analyze)


def with_costs(analysis: SweepAnalysis, groups: dict[str, list[SweepPoint]],
               prices: dict[str, float]) -> SweepAnalysis:
    """The analysis with each group's cost analysis beside its time analysis, where lanes are priced."""
    if not prices:
        return analysis
    return analysis.with_parts(cost={label: cost_analysis(points, prices) for label, points in groups.items()})


def with_energy(analysis: SweepAnalysis, groups: dict[str, list[SweepPoint]]) -> SweepAnalysis:
    """The analysis with each group's energy analysis (joules per million samples, the energy crossovers) beside
    its time analysis, where any point's energy was measured."""
    energy = {label: energy_analysis(points) for label, points in groups.items()}
    return analysis.with_parts(energy=energy) if any(e.measured for e in energy.values()) else analysis


def cmd_analyze(args: argparse.Namespace) -> int:
    if len(args.files) == 1 and not args.label:
        return analyze_one(args)
    # Named as the report and the rule name them (core/report/inputs.py read_sweeps): files of one machine are one
    # machine, its lanes named once; lanes of several machines MACHINE/LANE.
    sets = read_sweeps(args.files, parse_labels(args.label))
    for s in sets:
        if s.dropped:
            print(s.dropped, file=sys.stderr)
    prices = {k: v for s in sets for k, v in s.prices.items()}
    prices.update(prices_from(args))
    # Every file's points in one Findings: a width measured by several runs is pooled, not the latest kept.
    findings = Findings(row for s in sets for row in s.rows)
    groups = group_rows(findings.rows())
    if args.json:
        result = with_energy(with_costs(analyze_groups(groups), groups, prices), groups).to_json()
        files: dict[str, JsonValue] = {}
        for s in sets:  # keyed by machine label; a second file of one machine under its own path
            key = s.label if s.label not in files else s.path
            files[key] = {"path": s.path, "machine": s.machine or None, "devices": s.devices, "points": len(s.rows)}
        result["files"] = files
        print(json.dumps(result, indent=2))
        return EXIT_OK
    for s in sets:
        print(f"{s.label}: {s.path}, {fmt_count(len(s.rows), 'point')} ({'; '.join(s.devices) or 'no device named'})")
    print()
    print_groups_analysis(groups, answers=findings.answers())
    if prices:
        print_costs(groups, prices)
    return EXIT_OK


def load_runs(path: str) -> list[RunResult] | None:
    """The runs of a load sweep's file (the per-call CSV and sidecar of `sweep --arrival-rates` or `run
    --arrival-rate`), or None when the file is no such file (a sweep CSV, another run). Rows that are damaged or
    hold what no lane measures are dropped, and said on stderr ("…: dropped 3 of 200 rows: …")."""
    reading = RowsReading(path)
    try:
        results = read_runs(path, reading)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not any(r.config.train.arrival_rate is not None for r in results):
        return None
    if reading.dropped:
        print(f"{reading.drop_note()}; each lane is judged from the rows kept", file=sys.stderr)
    return results


def analyze_load(args: argparse.Namespace, results: list[RunResult]) -> int:
    """A load sweep's file, in the words the sweep said when it ended (core/words/load.py)."""
    bound = check_bound(args.p99_ms)
    points = run_points(results)
    prices = {**file_prices(sidecar_of(args.files[0])), **prices_from(args)}
    if args.json:
        print(json.dumps({"load": [load_json(p) for p in points],
                          "answer": sweep_lines(points, bound, prices)}, indent=2))
        return EXIT_OK
    for rate in rates_of(points):
        print_load([p for p in points if p.rate == rate])
        print()
    for line in sweep_lines(points, bound, prices):
        print(line + ".")
    return EXIT_OK


def load_json(p: LoadPoint) -> dict[str, JsonValue]:
    """A LoadPoint as JSON: its fields (NaN as null) and what is derived from them."""
    fields = {k: finite_or_none(v) if isinstance(v, float) else v for k, v in dataclasses.asdict(p).items()}
    return {**fields, "achieved": finite_or_none(p.achieved), "held": p.held}


def analyze_one(args: argparse.Namespace) -> int:
    """One file: lanes keep their own names (the output of earlier versions, plus costs when priced)."""
    path = args.files[0]
    results = load_runs(path)
    if results is not None:
        return analyze_load(args, results)
    if args.p99_ms is not None:
        raise ConfigError(f"--p99-ms: {path} is not a load sweep's file (sweep --task predict --arrival-rates …)")
    reading = SweepReading(path)
    groups = group_rows(iter_sweep_rows(path, reading))
    if reading.dropped:
        print(reading.drop_note(), file=sys.stderr)
    if not groups:
        print(f"error: {path} holds no points" + (" that can be used" if reading.lines else ""), file=sys.stderr)
        return EXIT_BAD_INPUT
    prices = {**file_prices(sidecar_of(path)), **prices_from(args)}
    if args.json:
        print(json.dumps(with_energy(with_costs(analyze_groups(groups), groups, prices), groups).to_json(), indent=2))
    else:
        print_groups_analysis(groups)
        refined = refinement_of_sidecar(sidecar_of(path))
        for line in refine_lines(refined) if refined else []:  # as the refined sweep said it when it ended
            print(line if line.endswith(".") else line + ".")
        if prices:
            print_costs(groups, prices)
    return EXIT_OK

