"""How often does a rate's "99% bound" on its p99 (and p90) hold? Simulated M/M/1 queues, judged by the code every view
calls (core/analysis/tails.py).

Requests arrive by a Poisson schedule at utilisation ρ (50%, 80%, 90%) and one server answers them in exponential
times, first come first served, its queue empty at the first request as a rate's is (the warm-up calls are no
request's). A request's latency is its wait plus its call (Lindley's recursion). The queue's stationary latency
is Exponential(μ − λ), so its true p99 is ln(100) / (μ − λ) and its p90 ln(10) / (μ − λ). A control draws
independent exponential latencies (what a closed loop's calls are).

Each row: many seeded runs of n requests, and for each method the share of runs whose bound is at or above the true
percentile ("covers"), counted over the runs where it gives one; the new method's share of runs withheld; the share of
all runs where it gave a bound under the true percentile (what a user would be told wrongly); and its median bound
over the true percentile (what the bound costs in width).

- old: MLPerf loadgen's early stopping (tails.early_stopping), which counts every request as independent;
- new: tails.queue_tail, the same binomial bound with each request counted at its worth (the run's memory), withheld
  where the requests are worth too few independent ones (tails.MIN_WORTH).

Usage: .venv/bin/python benchmarks/tail_coverage.py [--runs 1000] [--seed 1] [--lengths 1000,10000,100000,1000000]
       [--out docs/results/DIR/tail-coverage.txt]
NumPy for the queues and the project's tails for the bounds; the rows of 100,000 and 1,000,000 requests run fewer
seeds (--long-runs, --longest-runs). A few minutes on one core at the defaults.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent))

from crossover_lab.core.analysis import tails  # noqa: E402

UTILISATIONS = (0.0, 0.5, 0.8, 0.9)  # 0: the control, independent latencies
QUANTILES = (99, 90)
TARGET = 0.95  # issue 57: the new bound covers in at least this share of the runs that give one


def mm1(rho: float, n: int, runs: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`runs` latency series of `n` requests, one at a time (a million requests a run stay 8 MB each), service rate
    1, arrival rate `rho`, the queue empty at the start; ρ = 0: independent Exponential(1) latencies."""
    for _ in range(runs):
        if rho == 0.0:
            yield rng.exponential(1.0, n)
            continue
        service = rng.exponential(1.0, n)
        gaps = rng.exponential(1.0 / rho, n - 1)  # gaps[i]: from request i's arrival to the next one's
        # Lindley's recursion, W[i+1] = max(0, W[i] + service[i] - gaps[i]) from W[0] = 0, in closed form: the walk
        # of (service - gap) so far, less its lowest point so far.
        walk = np.concatenate(([0.0], np.cumsum(service[:-1] - gaps)))
        yield walk - np.minimum.accumulate(np.minimum(walk, 0.0)) + service


def true_percentile(q: int, rho: float) -> float:
    """The stationary latency's q-th percentile: Exponential(1 − ρ) (Exponential(1) for the control)."""
    return math.log(100.0 / (100.0 - q)) / (1.0 - rho)


@dataclass(frozen=True)
class Row:
    q: int
    rho: float
    n: int
    runs: int
    old_covers: float
    new_covers: float  # among runs given a bound; NaN where none was
    withheld: float
    wrong: float  # runs given a bound under the true percentile, of all runs
    width: float  # median new bound over the true percentile (NaN where none was given)

    def cells(self) -> list[str]:
        pct = (lambda x: "–" if math.isnan(x) else f"{100 * x:.1f}%")
        return [f"p{self.q}", "independent" if self.rho == 0 else f"{100 * self.rho:.0f}%", f"{self.n:,}",
                f"{self.runs:,}", pct(self.old_covers), pct(self.new_covers), pct(self.withheld), pct(self.wrong),
                "–" if math.isnan(self.width) else f"{self.width:.2f}x"]

    @property
    def meets(self) -> bool | None:
        """The target where it applies (the queues, p99): None where no bound was given to judge."""
        if math.isnan(self.new_covers):
            return None
        return self.new_covers >= TARGET


def measure(rho: float, n: int, runs: int, seed: int) -> list[Row]:
    rng = np.random.default_rng([seed, int(round(100 * rho)), n])
    old: dict[int, list[float]] = {q: [] for q in QUANTILES}
    new: dict[int, list[float]] = {q: [] for q in QUANTILES}
    for x in mm1(rho, n, runs, rng):
        memory = tails.queue_memory(x)  # once a run, for both tails, as a rate point does
        for q in QUANTILES:
            old[q].append(tails.early_stopping(q, x))
            new[q].append(tails.queue_tail(q, x, memory).value)
    rows = []
    for q in QUANTILES:
        truth = true_percentile(q, rho)
        bounds = np.array(new[q])
        given = np.isfinite(bounds)
        covers = bounds[given] >= truth
        rows.append(Row(q, rho, n, runs, float(np.mean(np.array(old[q]) >= truth)),
                        float(covers.mean()) if given.any() else math.nan, float(1 - given.mean()),
                        float(np.sum(~covers) / runs),
                        float(np.median(bounds[given] / truth)) if given.any() else math.nan))
    return rows


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = (lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


HEADER = ["tail", "utilisation", "requests", "runs", "old covers", "new covers", "new withheld", "new wrong",
          "new width"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="seeded runs per row (1,000 and 10,000 requests)")
    parser.add_argument("--long-runs", type=int, default=200, help="seeded runs per row of 100,000 requests")
    parser.add_argument("--longest-runs", type=int, default=50, help="seeded runs per row of more than 100,000")
    parser.add_argument("--lengths", default="1000,10000,100000,1000000", help="requests per run, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the output here, the command at its top")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]

    out: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        out.append(text)

    command = "$ .venv/bin/python benchmarks/tail_coverage.py " + " ".join(sys.argv[1:])
    say(command.rstrip())
    say("# M/M/1, service rate 1, the queue empty at first; true p99 = ln(100)/(1 - ρ), p90 = ln(10)/(1 - ρ).\n"
        "# old: tails.early_stopping (requests counted as independent); new: tails.queue_tail (counted at their\n"
        f"# worth, withheld under {tails.MIN_WORTH[99]:,} independent requests' worth for a p99, "
        f"{tails.MIN_WORTH[90]:,} for a p90).\n"
        "# covers: bound ≥ the true percentile (new: among runs given one); wrong: given a bound under it, of all\n"
        "# runs; width: the median new bound over the true percentile.\n"
        f"# Target (issue 57): new covers ≥ {TARGET:.0%} for p99 under the queues.")
    started = time.perf_counter()
    rows: list[Row] = []
    for n in lengths:
        runs = args.runs if n <= 10_000 else args.long_runs if n <= 100_000 else args.longest_runs
        for rho in UTILISATIONS:
            rows += measure(rho, n, runs, args.seed)
    for q in QUANTILES:
        say("")
        say(table(HEADER, [r.cells() for r in rows if r.q == q]))
    queues = [r for r in rows if r.q == 99 and r.rho > 0]
    given = [r for r in queues if r.meets is not None]
    missed = [r for r in given if not r.meets]
    cell = (lambda r: f"{100 * r.rho:.0f}% × {r.n:,}")  # noqa: E731
    say("")
    say(f"target (issue 57), the new p99 bound under a queue at or over the true p99 in ≥ {TARGET:.0%} of the runs "
        f"that give one: {'met' if not missed else 'MISSED'} in {len(given) - len(missed)} of the {len(given)} "
        f"rows that gave one ({', '.join(f'{cell(r)}: {100 * r.new_covers:.1f}%' for r in given)})"
        + (f"; missed at {', '.join(cell(r) for r in missed)}" if missed else "")
        + f"; withheld in every run at {', '.join(cell(r) for r in queues if r.meets is None)}")
    say(f"# {time.perf_counter() - started:.0f} s")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
