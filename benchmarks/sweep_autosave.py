"""What autosaving one sweep point costs, at the first point and at the fortieth.

A synthetic sweep (2 lanes, 65 records per lane and point, as a default sweep point has) is
autosaved point by point with core/files/sweeps/files.py SweepFiles, as the Sweep tab does; each point's
cost is the time from handing it over until it is on disk (appended rows and records, the
sidecar replaced, fsynced). For contrast, the old way (rewriting every file after every point)
is timed at the same points. Prints the ratio point 40 / point 1 last (target < 1.5).
Run: .venv/bin/python benchmarks/sweep_autosave.py [--points 40] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.records import BatchTiming, RunStarted, RunSummary
from crossover_lab.core.results import LaneResult, RunResult
from crossover_lab.core.study.sweep import SweepResult, SweepSpec
from crossover_lab.core.files.sweeps.files import SweepFiles, export_sweep
from crossover_lab.core.files.sweeps.rows import SweepRow

LANES = ("cpu", "cpu1")
HOST = {"cpu": "synthetic", "cpu_cores": 2}


def point(i: int) -> tuple[RunResult, list[SweepRow]]:
    width = 16 + 8 * i
    config = RunConfig(ModelSpec((width, width)), TrainSpec(batch_size=128))
    run_id = f"20260101-000000-{i:04x}"
    lanes = {}
    for lane in LANES:
        records = [BatchTiming(run_id, lane, f"CPU ({lane})", 1, s, s, s * 0.002, 1.0 + 0.01 * s, 128, s <= 5, 2.3)
                   for s in range(1, 66)]
        settings = {"jit_compile": False, "steps_per_execution": 1, "feeding": "host", "threads": 2,
                    "tensorflow_version": "2.21.0", "keras_version": "3.15.1", "placement": "/CPU:0"}
        summary = RunSummary(run_id, lane, f"CPU ({lane})", "completed", n_batches=60, n_warmup=5, median_ms=1.3,
                             p10_ms=1.1, p90_ms=1.6, mad_ms=0.1, samples_per_s=98000.0,
                             flops_per_batch=config.flops_per_batch, gflops=5.0)
        lanes[lane] = LaneResult(lane, RunStarted(run_id, lane, f"CPU ({lane})", settings), records, summary)
    run = RunResult(run_id, config, Schedule.SEQUENTIAL, "2026-01-01T00:00:00+00:00", lanes)
    return run, [SweepRow.from_result(run, lane) for lane in LANES]


def appending(folder: Path, points: list) -> list[float]:
    spec = SweepSpec(widths=tuple(16 + 8 * i for i in range(len(points))))
    files = SweepFiles(folder / "sweep.csv", HOST, [spec])
    times = []
    for run, rows in points:
        t0 = time.perf_counter()
        files.add_point(rows, run)
        files.writer.flush()
        times.append(time.perf_counter() - t0)
    files.close()
    return times


def rewriting(folder: Path, points: list) -> list[float]:
    spec = SweepSpec(widths=tuple(16 + 8 * i for i in range(len(points))))
    result = SweepResult(spec)
    times = []
    for run, rows in points:
        result.runs.append(run)
        result.rows.extend(rows)
        t0 = time.perf_counter()
        export_sweep(folder / "sweep.csv", [result], HOST)
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    points = [point(i) for i in range(args.points)]
    results: dict[str, list[list[float]]] = {"append": [], "rewrite": []}
    for _ in range(args.repeats):
        for name, fn in (("append", appending), ("rewrite", rewriting)):
            with tempfile.TemporaryDirectory() as folder:
                results[name].append(fn(Path(folder), points))
    for name, runs in results.items():
        first = statistics.median(r[0] for r in runs) * 1000
        last = statistics.median(r[-1] for r in runs) * 1000
        print(f"{name:>7}: point 1 {first:.2f} ms, point {args.points} {last:.2f} ms, ratio {last / first:.2f}")
    first = statistics.median(r[0] for r in results["append"])
    last = statistics.median(r[-1] for r in results["append"])
    print(f"autosave_ratio_point{args.points}_vs_point1={last / first:.2f}")


if __name__ == "__main__":
    main()
