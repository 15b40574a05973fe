"""How often the one rule names a lead that is not there, and how often it finds one that is: simulated sweeps of two
lanes, measured as a sweep measures them, judged by the same code every view calls.

Each simulated sweep times two lanes at 10 widths from 16 to 4,096 units (60 steady batches a turn), the lanes
taking turns in the order a sweep uses (reversed at every other width; a recheck reverses its first run's order).
A batch's time is the lane's cost at that width times: a log-AR(1) series (sd 0.12, lag-1 correlation 0.4), spikes
of 1.5-3x in 3% of batches, a shift per turn (what a turn meets that the batches cannot show), and a load that both
lanes feel, drifting slowly over the sweep's clock. Two machine states: quiet (shift sd 0.02, load sd 0.03) and
shared (shift sd 0.06, load sd 0.25). The rows are built as a sweep builds them (core/study/sweep.py with_batches
pools a recheck's batches; the row keeps its first run's id) and judged by each view's path:

- sweep: the CLI's `sweep` (two widths measured again): core/analysis/verdict.py pair_verdict on its rows' points;
- no-recheck: `sweep --no-recheck`;
- window: the Sweep tab's findings (core/files/findings.py), given each point's rows as they come, rechecks too;
- analyze-1: `analyze FILE`: the rows written as the sweep CSV (SweepRow.to_csv_row) and read back;
- analyze-2: `analyze A B`: two sweeps' files in one Findings.

Usage: .venv/bin/python benchmarks/rule_calibration.py [--sweeps 400] [--seed 1] [--out docs/results/DIR]
With --out, writes rule-calibration.txt and .json there, and (--ship) resources/rule-calibration.json, whose worst
false-lead rate every answer's words cite.
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
from typing import Callable, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent))

from crossover_lab.core.analysis.stats import robust_stats  # noqa: E402
from crossover_lab.core.analysis.verdict import PairVerdict, State, pair_verdict  # noqa: E402
from crossover_lab.core.files.findings import Findings  # noqa: E402
from crossover_lab.core.files.sweep_rows import COLUMNS, SweepRow, group_rows  # noqa: E402
from crossover_lab.core.records import BatchTiming  # noqa: E402
from crossover_lab.core.study.sweep import recheck_places, with_batches  # noqa: E402

WIDTHS = (16, 32, 64, 128, 256, 512, 1024, 1536, 2048, 4096)
BATCHES = 60
RECHECK_AT = tuple(recheck_places(len(WIDTHS), 3))  # what core/study/sweep.py measures again of 10 points
TURN_S = 3.0


@dataclass(frozen=True)
class Machine:
    name: str
    shift_sd: float  # per turn
    load_sd: float  # the slow load's standard deviation (both lanes feel it)
    load_tau_s: float = 40.0  # how slowly it drifts


MACHINES = (Machine("quiet", 0.02, 0.03), Machine("shared", 0.06, 0.25))
INDEPENDENT = Machine("independent noise, no load", 0.0, 0.0)


def cost_ms(width: int) -> float:
    flops = 6.0 * 128 * (784 * width + width * width + width * 10)
    return 1.5 + flops / 40e9 * 1000


class Clock:
    """The sweep's clock and the load on it: an Ornstein-Uhlenbeck drift both lanes feel."""

    def __init__(self, rng: np.random.Generator, machine: Machine) -> None:
        self.rng, self.machine, self.t, self.load = rng, machine, 0.0, rng.normal(0, machine.load_sd)

    def advance(self, seconds: float) -> float:
        m = self.machine
        if m.load_sd > 0:
            keep = math.exp(-seconds / m.load_tau_s)
            self.load = keep * self.load + math.sqrt(1 - keep * keep) * self.rng.normal(0, m.load_sd)
        self.t += seconds
        return self.load


def turn(rng: np.random.Generator, clock: Clock, lane: str, width: int, true_ms: float, run_id: str,
         segment: int) -> list[BatchTiming]:
    """One lane's turn at one width: BATCHES steady batches."""
    load = clock.advance(TURN_S)
    shift = rng.normal(0, clock.machine.shift_sd) if clock.machine.shift_sd > 0 else 0.0
    phi, sd = 0.4, 0.12
    e = np.empty(BATCHES)
    e[0] = rng.normal(0, sd)
    innov = rng.normal(0, sd * math.sqrt(1 - phi * phi), BATCHES)
    for i in range(1, BATCHES):
        e[i] = phi * e[i - 1] + innov[i]
    spikes = np.where(rng.random(BATCHES) < 0.03, rng.uniform(1.5, 3.0, BATCHES), 1.0)
    ms = true_ms * np.exp(load + shift + e) * spikes
    return [BatchTiming(run_id, lane, "cpu", 1, i, i, clock.t + i * 0.01, float(x), 128, False, math.nan,
                        segment=segment) for i, x in enumerate(ms)]


def row_of(records: Sequence[BatchTiming], lane: str, width: int, run_id: str) -> SweepRow:
    s = robust_stats([r.ms for r in records])
    flops = int(6 * 128 * (784 * width + width * width + width * 10))
    return SweepRow(lane=lane, device="cpu", width=width, params=0, flops_per_batch=flops, batch_size=128,
                    median_ms=s.median, p10_ms=s.p10, p90_ms=s.p90, n_batches=s.n, layers=2, run_id=run_id)


@dataclass
class Simulated:
    first: list[SweepRow]  # every width's first run, both lanes
    again: list[SweepRow]  # the rechecks' rows, pooling both runs (the first run's id)

    def swept(self) -> list[SweepRow]:
        """The sweep's rows as it ends: a recheck's row in place of its first."""
        swap = {(r.lane, r.width): r for r in self.again}
        return [swap.get((r.lane, r.width), r) for r in self.first]


def simulate(rng: np.random.Generator, machine: Machine, lead: float, tag: str, recheck: bool = True) -> Simulated:
    """One sweep of lanes a and b; b's cost is `lead` times a's (1: equal lanes)."""
    clock = Clock(rng, machine)
    first, records = [], {}
    lanes = ("a", "b")
    for i, width in enumerate(WIDTHS):
        run_id = f"{tag}-{i}"
        order = lanes if i % 2 == 0 else lanes[::-1]
        for lane in order:
            recs = turn(rng, clock, lane, width, cost_ms(width) * (lead if lane == "b" else 1.0), run_id, 1)
            records[(lane, width)] = (order, recs)
            first.append(row_of(recs, lane, width, run_id))
    again = []
    for i in RECHECK_AT if recheck else ():
        width = WIDTHS[i]
        order = records[("a", width)][0][::-1]
        for lane in order:
            recs = turn(rng, clock, lane, width, cost_ms(width) * (lead if lane == "b" else 1.0), f"{tag}-{i}-again", 1)
            one = row_of(recs, lane, width, f"{tag}-{i}-again")
            pooled = with_batches(one, records[(lane, width)][1] + recs)
            again.append(dataclasses.replace(pooled, run_id=f"{tag}-{i}"))
    return Simulated(first, again)


def verdict_of_rows(rows: Sequence[SweepRow]) -> PairVerdict:
    points = next(iter(group_rows(rows).values()))
    return pair_verdict(points, "a", "b")


def through_csv(rows: Sequence[SweepRow]) -> list[SweepRow]:
    """The rows as the sweep CSV writes them and `analyze` reads them back."""
    return [SweepRow.from_csv_row(dict(zip(COLUMNS, r.to_csv_row()))) for r in rows]


def window(sim: Simulated) -> PairVerdict:
    findings = Findings()
    findings.put(sim.first)
    findings.put(sim.again)
    return findings.answers()[0].verdict


def two_files(one: Simulated, two: Simulated) -> PairVerdict:
    findings = Findings(list(through_csv(one.swept())) + list(through_csv(two.swept())))
    return findings.answers()[0].verdict


PATHS: dict[str, Callable[[Simulated, Simulated, Simulated], PairVerdict]] = {
    "sweep": lambda s, plain, second: verdict_of_rows(s.swept()),
    "no-recheck": lambda s, plain, second: verdict_of_rows(plain.swept()),
    "window": lambda s, plain, second: window(s),
    "analyze-1": lambda s, plain, second: verdict_of_rows(through_csv(s.swept())),
    "analyze-2": lambda s, plain, second: two_files(s, second),
}


def leaders(v: PairVerdict) -> set[str]:
    return {s.leader for s in v.stretches if s.leader}


@dataclass
class Tally:
    sweeps: int = 0
    lead: int = 0  # any lead named
    crossing: int = 0
    found: int = 0  # the faster lane named, the other never
    wrong: int = 0  # the slower lane named anywhere

    def add(self, v: PairVerdict, faster: str | None) -> None:
        self.sweeps += 1
        named = leaders(v)
        self.lead += bool(named)
        self.crossing += v.state is State.CROSSES
        if faster is not None:
            slower = "b" if faster == "a" else "a"
            self.found += named == {faster}
            self.wrong += slower in named

    def share(self, n: int) -> float:
        return n / self.sweeps if self.sweeps else math.nan


CASES = [("equal lanes", 1.0, None), ("a true 10% lead", 1.1, "a"), ("a true 30% lead", 1.3, "a")]


def run(sweeps: int, seed: int) -> dict[tuple[str, str, str], Tally]:
    out: dict[tuple[str, str, str], Tally] = {}
    for m_i, machine in enumerate((INDEPENDENT, *MACHINES)):
        for c_i, (case, lead, faster) in enumerate(CASES):
            if machine is INDEPENDENT and lead != 1.0:
                continue
            rng = np.random.default_rng([seed, m_i, c_i])
            for k in range(sweeps):
                sim = simulate(rng, machine, lead, f"s{k}")
                plain = simulate(rng, machine, lead, f"p{k}", recheck=False)
                second = simulate(rng, machine, lead, f"t{k}")
                for path, judge in PATHS.items():
                    out.setdefault((machine.name, case, path), Tally()).add(judge(sim, plain, second), faster)
    return out


def table(results: dict[tuple[str, str, str], Tally]) -> str:
    lines = [f"{'machine':<28} {'true state':<16} {'view':<11} {'sweeps':>6} {'lead':>7} {'crossing':>9} "
             f"{'found':>7} {'wrong lane':>10}"]
    for (machine, case, path), t in results.items():
        found = f"{100 * t.share(t.found):.1f}%" if case != "equal lanes" else "–"
        wrong = f"{100 * t.share(t.wrong):.1f}%" if case != "equal lanes" else "–"
        lines.append(f"{machine:<28} {case:<16} {path:<11} {t.sweeps:>6} {100 * t.share(t.lead):>6.1f}% "
                     f"{100 * t.share(t.crossing):>8.1f}% {found:>7} {wrong:>10}")
    return "\n".join(lines)


def summary(results: dict[tuple[str, str, str], Tally]) -> dict[str, float]:
    equal = [t for (m, c, p), t in results.items() if c == "equal lanes"]
    lead10 = [t for (m, c, p), t in results.items() if c == "a true 10% lead" and m == "quiet"]
    lead30q = [t for (m, c, p), t in results.items() if c == "a true 30% lead" and m == "quiet"]
    lead30s = [t for (m, c, p), t in results.items() if c == "a true 30% lead" and m == "shared"]
    wrong = [t for (m, c, p), t in results.items() if c != "equal lanes"]
    return {"worst_false_lead": max(t.share(t.lead) for t in equal),
            "worst_false_crossing": max(t.share(t.crossing) for t in equal),
            "least_found_10pct_quiet": min(t.share(t.found) for t in lead10),
            "least_found_30pct_quiet": min(t.share(t.found) for t in lead30q),
            "least_found_30pct_shared": min(t.share(t.found) for t in lead30s),
            "worst_wrong_lane": max(t.share(t.wrong) for t in wrong)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweeps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="a results folder for rule-calibration.txt and .json")
    ap.add_argument("--ship", action="store_true", help="also write resources/rule-calibration.json")
    args = ap.parse_args()
    t0 = time.monotonic()
    results = run(args.sweeps, args.seed)
    took = time.monotonic() - t0
    text = table(results)
    worst = summary(results)
    head = (f"rule calibration: {args.sweeps} simulated sweeps per machine, true state and view (seed {args.seed}), "
            f"{len(WIDTHS)} widths, {BATCHES} steady batches a turn; {took:.0f} s, load {os.getloadavg()[0]:.1f}")
    lines = [head, "", text, ""] + [f"{k}: {100 * v:.1f}%" for k, v in worst.items()]
    print("\n".join(lines))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "rule-calibration.txt").write_text("\n".join(lines) + "\n")
        doc = {"format": "crossover-rule-calibration/1", "date": time.strftime("%Y-%m-%d"), "sweeps": args.sweeps,
               "seed": args.seed, "widths": list(WIDTHS), "batches": BATCHES,
               "command": " ".join(["benchmarks/rule_calibration.py", *sys.argv[1:]]), **worst,
               "table": [{"machine": m, "true_state": c, "view": p, "sweeps": t.sweeps, "lead": t.share(t.lead),
                          "crossing": t.share(t.crossing), "found": t.share(t.found), "wrong": t.share(t.wrong)}
                         for (m, c, p), t in results.items()]}
        (out / "rule-calibration.json").write_text(json.dumps(doc, indent=1) + "\n")
        if args.ship:
            (HERE / "resources" / "rule-calibration.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
