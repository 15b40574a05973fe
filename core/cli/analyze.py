"""`main.py analyze`: cost fits and crossovers of sweep CSVs, from one machine or several, as a table or as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Mapping, Sequence, TextIO, cast

import dataclasses

from ..analysis.crossings import SweepAnalysis, analyze_groups
from ..analysis.serving_rates import RatePoint, rates_of, run_points
from ..config import ConfigError
from ..files.inputs import RowsReading
from ..files.run_files import read_runs
from ..results import RunResult
from ..words.rates import sweep_lines
from .rate_sweep import check_bound
from .printing import print_rates
from ..analysis.points import SweepPoint
from ..json_data import JsonValue, finite_or_none
from .common import EXIT_BAD_INPUT, EXIT_OK
from .machines import add_price_arg, print_costs, prices_from
from ..analysis.costs import cost_analysis
from ..analysis.energy import energy_analysis
from ..analysis.refinement import refinement_of_sidecar
from ..words.sweep import refine_lines
from .printing import print_groups_analysis
from ..files.sweeps.files import SweepReading, iter_sweep_rows
from ..files.findings import Findings
from ..files.sweeps.rows import group_rows
from ..files.sweeps.sets import file_prices, parse_labels, sidecar_of
from ..report.inputs import SweepInput, read_sweeps
from ..words.numbers import fmt_count, fmt_num
from ..analysis.anatomy import floor_points
from ..analysis.costs import cost_curves
from ..analysis.crossings import LaneFit, analyze_points
from ..analysis.energy import energy_curves
from ..analysis.leaders import leaders
from ..analysis.points import CurvePoint
from ..files.sweeps.rows import SweepRow
from ..words import leaders as leader_words
from ..words.anatomy import floor_notes
from ..words.sweep import busy_lines
from ..words.verdict import unit_of
from .printing import table
from .streams import STDOUT

# Up to this many lanes in a group every pair is said in full: four lanes make six sentences, each still read (the
# usual cpu, cpu1, gpu0 and jax:gpu0, or two machines of two lanes). Beyond, pairs grow as the square of the lanes
# (forty files of two lanes: 3,160 sentences, 1.5 MB, and a bootstrap of the fitted lines for each pair that meets),
# and a table per width says what a reader of that many lanes asks: which lane leads, by how much, and whether the
# rule finds that lead (core/analysis/leaders.py: at most one pair judged per width).
MAX_PAIRED_LANES = 4


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="fit the cost model and find crossovers in sweep CSVs (one or several machines)")
    p.add_argument("files", nargs="+", metavar="file", help="sweep CSVs; files of one machine keep their lanes' names, of several machines lanes are named MACHINE/LANE")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                   help="name a file's machine (default: the machine in its sidecar, else the file name)")
    p.add_argument("--lanes", metavar="LANE,LANE…", help="compare only these lanes, named as the output names them "
                   f"(every pair in full where {MAX_PAIRED_LANES} or fewer; more get a table per width: the fastest "
                   "lane, its runner-up and the rule on that lead)")
    p.add_argument("--p99-ms", type=float, metavar="MS", help="a rate sweep's file (sweep --arrival-rates): the "
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
    findings = Findings(only_lanes([row for s in sets for row in s.rows], args.lanes))
    groups = group_rows(findings.rows())
    many = many_lanes(groups)  # a table per width, and no pair judged but each width's leader and runner-up
    if args.json:
        result = leaders_json(groups, prices) if many else with_energy(
            with_costs(analyze_groups(groups), groups, prices), groups).to_json()
        result["files"] = files_json(sets)
        print(json.dumps(result, indent=2))
        return EXIT_OK
    for s in sets:
        print(f"{s.label}: {s.path}, {fmt_count(len(s.rows), 'point')} ({'; '.join(s.devices) or 'no device named'})")
    print()
    if many:
        print_leaders(groups, prices)
        return EXIT_OK
    print_groups_analysis(groups, answers=findings.answers())
    if prices:
        print_costs(groups, prices)
    return EXIT_OK


def files_json(sets: Sequence[SweepInput]) -> dict[str, JsonValue]:
    """What each file gave, keyed by machine label; a second file of one machine under its own path."""
    files: dict[str, JsonValue] = {}
    for s in sets:
        key = s.label if s.label not in files else s.path
        files[key] = {"path": s.path, "machine": s.machine or None, "devices": s.devices, "points": len(s.rows)}
    return files


def asked_lanes(lanes: str, known: Sequence[str]) -> set[str]:
    """The lanes `--lanes A,B` names, each one of `known`; ConfigError for a name none is, or fewer than two."""
    wanted = list(dict.fromkeys(lane.strip() for lane in lanes.split(",") if lane.strip()))
    unknown = [lane for lane in wanted if lane not in known]
    if unknown or len(wanted) < 2:
        raise ConfigError(leader_words.asked_lanes_words(unknown, wanted, known))
    return set(wanted)


def only_lanes(rows: Sequence[SweepRow], lanes: str | None) -> list[SweepRow]:
    """The rows of the lanes `--lanes` names; all where it names none."""
    if lanes is None:
        return list(rows)
    wanted = asked_lanes(lanes, list(dict.fromkeys(r.lane for r in rows)))
    return [r for r in rows if r.lane in wanted]


def many_lanes(groups: Mapping[str, Sequence[SweepPoint]]) -> bool:
    """Whether any group has more lanes than every pair can be said of (MAX_PAIRED_LANES)."""
    return any(len({p.lane for p in points}) > MAX_PAIRED_LANES for points in groups.values())


def lane_fits(points: Sequence[SweepPoint]) -> dict[str, LaneFit]:
    """Each lane's cost fit, one lane at a time: analyze_points of one lane fits it and judges no pair."""
    by_lane: dict[str, list[SweepPoint]] = {}
    for p in points:
        by_lane.setdefault(p.lane, []).append(p)
    return {lane: analyze_points(mine).lanes[lane] for lane, mine in sorted(by_lane.items())}


def worst_residual(fit: LaneFit) -> str:
    """As the table of every pair shows it (cli/printing.py): the largest miss of the fit, as a share."""
    values = [abs(r) for _, r in fit.residuals if r is not None]
    return f"{100 * max(values):.0f}%" if values else "–"


def figures(points: Sequence[SweepPoint],
            prices: Mapping[str, float]) -> list[tuple[str, leader_words.Figure, list[CurvePoint]]]:
    """The curves a table ranks lanes by, each where measured: time always; the floor (sweep --floor), energy and
    money (priced lanes) where any point has them."""
    out = [("time", leader_words.TIME, [p.curve_point() for p in points])]
    extra = [("floor", leader_words.FLOOR, [p.curve_point() for p in floor_points(points)]),
             ("energy", leader_words.ENERGY, energy_curves(points)),
             ("cost", leader_words.COST, cost_curves(points, prices) if prices else [])]
    return out + [f for f in extra if f[2]]


def print_leaders(groups: Mapping[str, list[SweepPoint]], prices: Mapping[str, float], out: TextIO = STDOUT) -> None:
    """Many lanes: per group, each lane's fit, then per width the leading lane and its runner-up, by time and by any
    other figure measured; then what is said of single lanes (a floor above its step, a busy machine)."""
    for label, points in groups.items():
        if len(groups) > 1:
            print(f"\n{label}:", file=out)
        fits = lane_fits(points)
        print(table(["lane", "intercept ms (fit)", "GFLOP/s (fit)", "points", "worst residual"],
                    [[lane, fmt_num(f.overhead_ms), fmt_num(f.gflops), f.n_points, worst_residual(f)]
                     for lane, f in fits.items()]), file=out)
        unit = unit_of(points)
        for _, figure, curve in figures(points, prices):
            found = leaders(curve)
            print(f"\n{leader_words.leaders_line(found, figure, unit)}.", file=out)
            print(table(leader_words.header(figure, unit), [leader_words.row(r, figure) for r in found.rows]),
                  file=out)
    for line in floor_notes(groups) + busy_lines(groups):
        print(line + ".", file=out)


def leaders_json(groups: Mapping[str, list[SweepPoint]], prices: Mapping[str, float]) -> dict[str, JsonValue]:
    """print_leaders as JSON: per group, each lane's fit and, per figure measured, the table's rows and the verdicts
    they rest on."""
    out: dict[str, JsonValue] = {}
    for label, points in groups.items():
        group: dict[str, JsonValue] = {"unit": unit_of(points),
                                       "lanes": {lane: f.to_json() for lane, f in lane_fits(points).items()}}
        for name, _, curve in figures(points, prices):
            group[name] = leaders(curve).to_json()
        out[label] = group
    return {"leaders": out}


def read_rate_runs(path: str) -> list[RunResult] | None:
    """The runs of a rate sweep's file (the per-call CSV and sidecar of `sweep --arrival-rates` or `run
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


def analyze_rates(args: argparse.Namespace, results: list[RunResult]) -> int:
    """A rate sweep's file, in the words the sweep said when it ended (core/words/rates.py)."""
    if args.lanes is not None:
        raise ConfigError(leader_words.lanes_of_rates_words(args.files[0]))
    bound = check_bound(args.p99_ms)
    points = run_points(results)
    prices = {**file_prices(sidecar_of(args.files[0])), **prices_from(args)}
    if args.json:
        print(json.dumps({"rates": [rate_json(p) for p in points],
                          "answer": sweep_lines(points, bound, prices)}, indent=2))
        return EXIT_OK
    for rate in rates_of(points):
        print_rates([p for p in points if p.rate == rate])
        print()
    for line in sweep_lines(points, bound, prices):
        print(line + ".")
    return EXIT_OK


def rate_json(p: RatePoint) -> dict[str, JsonValue]:
    """A RatePoint as JSON: its fields (NaN as null) and what is derived from them."""
    fields = {k: finite_or_none(v) if isinstance(v, float) else v for k, v in dataclasses.asdict(p).items()}
    return {**fields, "achieved": finite_or_none(p.achieved), "held": p.held}


def analyze_one(args: argparse.Namespace) -> int:
    """One file: lanes keep their own names (the output of earlier versions, plus costs when priced)."""
    path = args.files[0]
    results = read_rate_runs(path)
    if results is not None:
        return analyze_rates(args, results)
    if args.p99_ms is not None:
        raise ConfigError(f"--p99-ms: {path} is not a rate sweep's file (sweep --task predict --arrival-rates …)")
    reading = SweepReading(path)
    groups = group_rows(iter_sweep_rows(path, reading))
    if reading.dropped:
        print(reading.drop_note(), file=sys.stderr)
    if not groups:
        print(f"error: {path} holds no points" + (" that can be used" if reading.lines else ""), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.lanes is not None:  # on the points kept: the file is streamed, never held as rows
        wanted = asked_lanes(args.lanes, sorted({p.lane for points in groups.values() for p in points}))
        groups = {label: kept for label, points in groups.items() if (kept := [p for p in points if p.lane in wanted])}
    prices = {**file_prices(sidecar_of(path)), **prices_from(args)}
    many = many_lanes(groups)
    if args.json:
        print(json.dumps(leaders_json(groups, prices) if many else with_energy(
            with_costs(analyze_groups(groups), groups, prices), groups).to_json(), indent=2))
    elif many:
        print_leaders(groups, prices)
    else:
        print_groups_analysis(groups)
        refined = refinement_of_sidecar(sidecar_of(path))
        for line in refine_lines(refined) if refined else []:  # as the refined sweep said it when it ended
            print(line if line.endswith(".") else line + ".")
        if prices:
            print_costs(groups, prices)
    return EXIT_OK

