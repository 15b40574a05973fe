"""How often the one rule names a lead that is not there, and finds one that is, for each design a user runs, on
noise the rule does not itself model: simulated sweeps of two lanes, measured as a sweep measures them and judged
by the code every view calls (core/analysis/verdict.py pair_verdict, core/files/findings.py).

Designs (what a user runs): a run of one model (1 width: `run`, the window's Start), 5 widths (the window's ramp),
6 (the CLI's default sweep), 10 and 20; one pass with no
width measured again (`--no-recheck`, a ramp), one pass with its rechecks (the CLI's default: 1-3 widths measured
again, core/study/sweep.py), three passes (`--passes 3`: every width once a pass, the passes apart in time, the
widths' order and the lanes' order reversed from pass to pass); one file (both lanes in one sweep) or two (`analyze
A B`, each lane from a sweep of its own, in its own session).

Noise (each row says its model; the rule models none of them but the first's parts):
- quiet: batches log-AR(1) (sd 0.12, lag-1 0.4) with 3% spikes of 1.5-3x, a shift per turn (sd 0.02), a slow
  load both lanes feel alike (sd 0.03, 40 s);
- shared: the same, shift sd 0.06, load sd 0.25;
- unequal load: a slow load (sd 0.10, 40 s) that lane a feels whole and lane b at 30%, invisible to any load meter;
- AR(1) 0.8: batches correlated at lag 1 by 0.8 (sd 0.12), a shift per turn of 0.04;
- heavy tails: batch noise Student t with 3 degrees of freedom (scale 0.08), a shift per turn of 0.04 (t3 too);
- unequal batches: lane b gets 20 steady batches a turn, lane a 60, on the shared machine;
- session offset (two files only): each file's lane shifted by N(0, 0.08) for its session, on the quiet machine.

Cases: equal lanes (a lead named is a false lead; a crossing named a false crossing), lane a faster by 10% on the
quiet machine, by 30% under the unequal load and at the default design. "found": the faster lane named and never
the other; "wrong": the slower one named anywhere.

Usage: .venv/bin/python benchmarks/rule_calibration.py [--sweeps 200] [--seed 1] [--jobs 2] [--tails] [--out docs/results/DIR] [--ship]
With --out, writes rule-calibration.txt and .json there; --ship also writes resources/rule-calibration.json, the
table whose row for an answer's own design every answer quotes.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent))

from crossover_lab.core.run_stats import robust_stats  # noqa: E402
from crossover_lab.core.analysis.verdict import PairVerdict, State  # noqa: E402
from crossover_lab.core.files.findings import Findings  # noqa: E402
from crossover_lab.core.files.sweeps.rows import COLUMNS, SweepRow  # noqa: E402
from crossover_lab.core.records import BatchTiming  # noqa: E402
from crossover_lab.core.study.sweep import recheck_places, rechecks_for, with_batches  # noqa: E402

WIDTH_COUNTS = (1, 5, 6, 10, 20)  # 1: a run of one model (`run`, the window's Start), at one width
DESIGNS = ("one pass", "rechecks", "3 passes", "5 passes")  # 5 passes: the CLI's and the Sweep tab's default
TURN_S = 3.0
FORMAT = "crossover-rule-calibration/2"


def passes_of(design: str) -> int:
    """A design's passes: "5 passes" 5; one pass and its rechecks 1."""
    return int(design.split()[0]) if design.endswith(" passes") else 1


def widths_of(n: int) -> tuple[int, ...]:
    if n == 1:
        return (256,)
    return tuple(sorted({int(round(16 * (4096 / 16) ** (i / (n - 1)))) for i in range(n)}))


@dataclass(frozen=True)
class Machine:
    name: str
    shift_sd: float = 0.02  # per turn
    load_sd: float = 0.03  # the slow load's SD
    felt_by_b: float = 1.0  # the share of the slow load lane b feels (lane a feels it whole)
    phi: float = 0.4  # batches' lag-1 correlation
    batch_sd: float = 0.12
    tails: bool = False  # Student t (3 dof) batch noise and shifts instead of normal
    batches_b: int = 60  # lane b's steady batches a turn (lane a: 60)
    session_sd: float = 0.0  # an offset per file on one lane (two files only)
    load_tau_s: float = 40.0


MACHINES = (Machine("quiet"), Machine("shared", shift_sd=0.06, load_sd=0.25),
            Machine("unequal load", load_sd=0.10, felt_by_b=0.3),
            Machine("AR(1) 0.8", shift_sd=0.04, phi=0.8),
            Machine("heavy tails (t3)", shift_sd=0.04, tails=True, batch_sd=0.08),
            Machine("unequal batches", shift_sd=0.06, load_sd=0.25, batches_b=20),
            Machine("session offset", session_sd=0.08))
QUIET, UNEQUAL = MACHINES[0], MACHINES[2]


def cost_ms(width: int) -> float:
    flops = 6.0 * 128 * (784 * width + width * width + width * 10)
    return 1.5 + flops / 40e9 * 1000


def flops_of(width: int) -> int:
    return int(6 * 128 * (784 * width + width * width + width * 10))


class Clock:
    """The sweep's clock and the slow load on it (an Ornstein-Uhlenbeck drift)."""

    def __init__(self, rng: np.random.Generator, machine: Machine) -> None:
        self.rng, self.machine, self.t = rng, machine, 0.0
        self.load = rng.normal(0, machine.load_sd) if machine.load_sd > 0 else 0.0

    def advance(self, seconds: float) -> float:
        m = self.machine
        if m.load_sd > 0:
            keep = math.exp(-seconds / m.load_tau_s)
            self.load = keep * self.load + math.sqrt(1 - keep * keep) * self.rng.normal(0, m.load_sd)
        self.t += seconds
        return self.load


def _noise(rng: np.random.Generator, m: Machine, n: int) -> np.ndarray:
    if m.tails:
        return rng.standard_t(3, n) * m.batch_sd
    return rng.normal(0, m.batch_sd, n)


def turn(rng: np.random.Generator, clock: Clock, lane: str, width: int, true_ms: float, run_id: str,
         offset: float) -> list[BatchTiming]:
    """One lane's turn at one width."""
    m = clock.machine
    load = clock.advance(TURN_S) * (m.felt_by_b if lane == "b" else 1.0)
    shift = (float(rng.standard_t(3)) * m.shift_sd / math.sqrt(3) if m.tails else rng.normal(0, m.shift_sd)) \
        if m.shift_sd > 0 else 0.0
    n = m.batches_b if lane == "b" else 60
    e = np.empty(n)
    innov = _noise(rng, m, n) * math.sqrt(1 - m.phi * m.phi)
    e[0] = _noise(rng, m, 1)[0]
    for i in range(1, n):
        e[i] = m.phi * e[i - 1] + innov[i]
    spikes = np.where(rng.random(n) < 0.03, rng.uniform(1.5, 3.0, n), 1.0)
    ms = true_ms * np.exp(load + shift + offset + e) * spikes
    return [BatchTiming(run_id, lane, "cpu", 1, i, i, clock.t + i * 0.01, float(x), 128, False, math.nan,
                        segment=1) for i, x in enumerate(ms)]


def row_of(records: Sequence[BatchTiming], lane: str, width: int, run_id: str) -> SweepRow:
    s = robust_stats([r.ms for r in records])
    return SweepRow(lane=lane, device="cpu", width=width, params=0, flops_per_batch=flops_of(width), batch_size=128,
                    median_ms=s.median, p10_ms=s.p10, p90_ms=s.p90, n_batches=s.n, layers=2, run_id=run_id)


def simulate(rng: np.random.Generator, m: Machine, lead: float, tag: str, widths: Sequence[int], design: str,
             lanes: Sequence[str] = ("a", "b"), offsets: dict[str, float] | None = None) -> list[SweepRow]:
    """One sweep's rows as it ends, as core/study/sweep.py builds them: b's cost is `lead` times a's."""
    clock = Clock(rng, m)
    offsets = offsets or {}
    passes = passes_of(design)
    records: dict[tuple[str, int], list[BatchTiming]] = {}
    first: dict[tuple[str, int], str] = {}
    orders: dict[int, list[str]] = {}
    for p in range(passes):
        order = list(widths) if p % 2 == 0 else list(reversed(widths))
        for width in order:
            run_id = f"{tag}-{width}-{p}"
            i = widths.index(width)  # as core/study/sweep.py turn_order: by the point's index and the pass
            lane_order = list(lanes) if (i + p) % 2 == 0 else list(reversed(lanes))
            orders.setdefault(width, lane_order)
            for lane in lane_order:
                true_ms = cost_ms(width) * (lead if lane == "b" else 1.0)
                records.setdefault((lane, width), []).extend(
                    turn(rng, clock, lane, width, true_ms, run_id, offsets.get(lane, 0.0)))
                first.setdefault((lane, width), run_id)
    if design == "rechecks" and len(lanes) > 1:
        for i in recheck_places(len(widths), rechecks_for(len(widths))):
            width = widths[i]
            for lane in reversed(orders[width]):
                true_ms = cost_ms(width) * (lead if lane == "b" else 1.0)
                records[(lane, width)].extend(
                    turn(rng, clock, lane, width, true_ms, f"{tag}-{width}-again", offsets.get(lane, 0.0)))
    rows = []
    for (lane, width), recs in records.items():
        one = row_of(recs, lane, width, first[(lane, width)])
        pooled = with_batches(one, recs) if len({r.run_id for r in recs}) > 1 else one
        rows.append(dataclasses.replace(pooled, run_id=first[(lane, width)]))
    return rows


def through_csv(rows: Sequence[SweepRow]) -> list[SweepRow]:
    """The rows as the sweep CSV writes them and `analyze` reads them back."""
    return [SweepRow.from_csv_row(dict(zip(COLUMNS, r.to_csv_row()))) for r in rows]


def judged(rows: Sequence[SweepRow]) -> PairVerdict:
    """`analyze` of the files: every row in one Findings, its answer on the pair."""
    answers = Findings(through_csv(rows)).answers()
    return answers[0].verdict


def one_sweep(rng: np.random.Generator, m: Machine, lead: float, tag: str, widths: Sequence[int], design: str,
              files: int) -> PairVerdict:
    if files == 1:
        return judged(simulate(rng, m, lead, tag, widths, design))
    rows = []
    for lane, name in (("a", "A"), ("b", "B")):  # each lane in a sweep (a session) of its own
        offset = {lane: float(rng.normal(0, m.session_sd))} if m.session_sd > 0 else {}
        rows += simulate(rng, m, lead, f"{tag}{name}", widths, design, lanes=(lane,), offsets=offset)
    return judged(rows)


@dataclass
class Tally:
    sweeps: int = 0
    lead: int = 0
    crossing: int = 0
    found: int = 0
    wrong: int = 0

    def add(self, v: PairVerdict, faster: str | None) -> None:
        self.sweeps += 1
        named = {s.leader for s in v.stretches if s.leader}
        self.lead += bool(named)
        self.crossing += v.state is State.CROSSES
        if faster is not None:
            slower = "b" if faster == "a" else "a"
            self.found += named == {faster}
            self.wrong += slower in named

    def share(self, n: int) -> float:
        return n / self.sweeps if self.sweeps else math.nan

    def interval(self, n: int) -> tuple[float, float]:
        """Wilson's 95% interval of the share n / sweeps."""
        if not self.sweeps:
            return math.nan, math.nan
        z, p, k = 1.96, n / self.sweeps, self.sweeps
        centre = (p + z * z / (2 * k)) / (1 + z * z / k)
        half = z * math.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / (1 + z * z / k)
        return max(centre - half, 0.0), min(centre + half, 1.0)


Key = tuple[str, int, str, int, str]  # machine, widths, design, files, case


def cases_for(m: Machine, n_widths: int, design: str, files: int) -> list[tuple[str, float, str | None]]:
    out: list[tuple[str, float, str | None]] = [("equal lanes", 1.0, None)]
    if m is QUIET and files == 1:
        out.append(("a 10% lead", 1 / 1.1, "b"))
    if m is UNEQUAL and files == 1:
        out.append(("a 30% lead", 1 / 1.3, "b"))
    return out


Row = tuple[int, int, int, int, int, int, int]  # sweeps, seed, machine, widths, design, files, case (indices)


def _key(row: Row) -> Key:
    _, _, m_i, n_widths, d_i, files, c_i = row
    m, design = MACHINES[m_i], DESIGNS[d_i]
    return m.name, n_widths, design, files, cases_for(m, n_widths, design, files)[c_i][0]


def _row(row: Row) -> tuple[Key, Tally]:
    """One row of the table: its sweeps, its generator seeded by the row alone (so rows run in any order, or in
    processes of their own, give the same table)."""
    sweeps, seed, m_i, n_widths, d_i, files, c_i = row
    m, design = MACHINES[m_i], DESIGNS[d_i]
    _, lead, faster = cases_for(m, n_widths, design, files)[c_i]
    rng = np.random.default_rng([seed, m_i, n_widths, d_i, files, c_i])
    tally = Tally()
    for k in range(sweeps):
        tally.add(one_sweep(rng, m, lead, f"s{k}", widths_of(n_widths), design, files), faster)
    return _key(row), tally


def run(sweeps: int, seed: int, width_counts: Sequence[int] = WIDTH_COUNTS, jobs: int = 1) -> dict[Key, Tally]:
    rows: list[Row] = [(sweeps, seed, m_i, n_widths, d_i, files, c_i)
                       for m_i, m in enumerate(MACHINES) for n_widths in width_counts
                       for d_i, design in enumerate(DESIGNS) for files in ((1, 2) if m.session_sd == 0 else (2,))
                       for c_i in range(len(cases_for(m, n_widths, design, files)))]
    if jobs <= 1:
        return dict(map(_row, rows))
    import multiprocessing
    with multiprocessing.get_context("fork").Pool(jobs) as pool:  # the longest rows first, then in table order
        done = dict(pool.imap_unordered(_row, sorted(rows, key=lambda r: -r[3] * passes_of(DESIGNS[r[4]]))))
    return {_key(r): done[_key(r)] for r in rows}


def table(results: dict[Key, Tally]) -> str:
    lines = [f"{'noise model':<18} {'widths':>6} {'design':<9} {'files':>5} {'true state':<12} {'sweeps':>6} "
             f"{'lead':>7} {'crossing':>9} {'found':>7} {'wrong':>6}"]
    for (machine, n, design, files, case), t in results.items():
        lead = case != "equal lanes"
        lines.append(f"{machine:<18} {n:>6} {design:<9} {files:>5} {case:<12} {t.sweeps:>6} "
                     f"{100 * t.share(t.lead):>6.1f}% {100 * t.share(t.crossing):>8.1f}% "
                     f"{(f'{100 * t.share(t.found):.1f}%' if lead else '–'):>7} "
                     f"{(f'{100 * t.share(t.wrong):.1f}%' if lead else '–'):>6}")
    return "\n".join(lines)


def designs_table(results: dict[Key, Tally]) -> list[dict[str, object]]:
    """Per design (widths, passes, files): the worst false-lead rate over every noise model, with its interval and
    the model it came from, and the power rows: what an answer of that design quotes."""
    rows = []
    for n in sorted({k[1] for k in results}):
        for design in DESIGNS:
            for files in (1, 2):
                equal = [(k[0], t) for k, t in results.items()
                         if k[1:4] == (n, design, files) and k[4] == "equal lanes"]
                if not equal:
                    continue
                worst_name, worst = max(equal, key=lambda item: item[1].share(item[1].lead))
                lo, hi = worst.interval(worst.lead)
                power = {k[4] + " (" + k[0] + ")": t.share(t.found) for k, t in results.items()
                         if k[1:4] == (n, design, files) and k[4] != "equal lanes"}
                rows.append({"widths": n, "design": design, "files": files, "sweeps": worst.sweeps,
                             "false_lead": worst.share(worst.lead), "false_lead_lo": lo, "false_lead_hi": hi,
                             "worst_noise": worst_name,
                             "false_crossing": max(t.share(t.crossing) for _, t in equal),
                             "wrong_lane": max((t.share(t.wrong) for k, t in results.items()
                                                if k[1:4] == (n, design, files) and k[4] != "equal lanes"),
                                               default=0.0),
                             "found": power})
    return rows


def tails_section(seed: int) -> list[str]:
    """The p99 rows of benchmarks/tail_coverage.py (1,000, 10,000 and 100,000 requests; independent latencies and
    queues at 50, 80 and 90% utilisation), as lines of this table."""
    import tail_coverage as tc  # beside this file
    rows = []
    for n, runs in ((1_000, 1000), (10_000, 1000), (100_000, 200)):
        for rho in tc.UTILISATIONS:
            rows += [r for r in tc.measure(rho, n, runs, seed) if r.q == 99]
    return tc.table(tc.HEADER, [r.cells() for r in rows]).splitlines()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--widths", default=",".join(map(str, WIDTH_COUNTS)), help="the width counts to simulate")
    ap.add_argument("--jobs", type=int, default=1, help="rows measured at once, in processes of their own (the "
                    "table is the same whatever the count)")
    ap.add_argument("--tails", action="store_true", help="also the latency tails' rows: how often a rate's p99 "
                    "bound covers the true p99 of an M/M/1 queue at 50, 80 and 90%% utilisation (benchmarks/"
                    "tail_coverage.py, 1,000-100,000 requests; about 5 minutes more)")
    ap.add_argument("--out", help="a results folder for rule-calibration.txt and .json")
    ap.add_argument("--ship", action="store_true", help="also write resources/rule-calibration.json")
    args = ap.parse_args()
    t0 = time.monotonic()
    load = os.getloadavg()[0]
    results = run(args.sweeps, args.seed, tuple(int(x) for x in args.widths.split(",")), args.jobs)
    took = time.monotonic() - t0
    designs = designs_table(results)
    head = (f"rule calibration: {args.sweeps} simulated sweeps a row (seed {args.seed}); {took:.0f} s in "
            f"{args.jobs} process{'es' if args.jobs > 1 else ''}, load "
            f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    summary = [f"{d['widths']:>2} widths, {d['design']:<9}, {d['files']} file{'s' if d['files'] > 1 else ''}: "
               f"false lead ≤ {100 * d['false_lead']:.1f}% (95%: {100 * d['false_lead_lo']:.1f}–"
               f"{100 * d['false_lead_hi']:.1f}%, worst under {d['worst_noise']}), false crossing "
               f"{100 * d['false_crossing']:.1f}%, wrong lane {100 * d['wrong_lane']:.1f}%"
               + "".join(f"; {k} found {100 * v:.0f}%" for k, v in d["found"].items())  # type: ignore[union-attr]
               for d in designs]
    lines = [head, "", table(results), "", "Per design (what an answer quotes):"] + summary
    tail_rows = tails_section(args.seed) if args.tails else []
    if tail_rows:
        lines += ["", "Latency tails: the p99 bound a rate states (core/analysis/tails.py queue_tail) against the true "
                  "p99 of M/M/1 queues", "(benchmarks/tail_coverage.py's rows; covers: bound ≥ the true p99, among "
                  "runs given one; target ≥ 95% under the queues)", ""] + tail_rows
    print("\n".join(lines))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "rule-calibration.txt").write_text("\n".join(lines) + "\n")
        doc = {"format": FORMAT, "date": time.strftime("%Y-%m-%d"), "sweeps": args.sweeps, "seed": args.seed,
               "command": " ".join(["benchmarks/rule_calibration.py", *sys.argv[1:]]), "tails": tail_rows,
               "worst_false_lead": max(d["false_lead"] for d in designs), "designs": designs,  # type: ignore
               "table": [{"noise": k[0], "widths": k[1], "design": k[2], "files": k[3], "true_state": k[4],
                          "sweeps": t.sweeps, "lead": t.share(t.lead), "crossing": t.share(t.crossing),
                          "found": t.share(t.found), "wrong": t.share(t.wrong)} for k, t in results.items()]}
        (out / "rule-calibration.json").write_text(json.dumps(doc, indent=1) + "\n")
        if args.ship:
            (HERE / "resources" / "rule-calibration.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
