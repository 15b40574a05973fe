"""What a report costs: `crossover report` of a 40-point sweep (2 lanes × 20 widths, a sidecar with 40 runs
of per-batch records beside it), timed from the command's start to the file on disk, and the file's size.
Targets: under 3 s and under 2 MB. Prints the figures of this one run, then PASS or FAIL.
Run: .venv/bin/python benchmarks/report_cost.py [--points 40]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from crossover_lab.core.files.run_files import export_runs
from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
from crossover_lab.core.records import BatchTiming, RunStarted
from crossover_lab.core.run_stats import summarize
from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.results import LaneResult, RunResult

TARGET_S, TARGET_BYTES = 3.0, 2 * 1024 * 1024


def make_sweep(folder: Path, points: int) -> Path:
    """A sweep CSV of `points` points on cpu and gpu0 (smooth cost models, 3% noise) and its sidecar with the runs."""
    rng = np.random.default_rng(0)
    widths = np.unique(np.geomspace(16, 8192, points // 2).astype(int))
    rows, runs = [], []
    for w in widths:
        config = RunConfig(ModelSpec((int(w), int(w))), TrainSpec(batch_size=128, data="synthetic"))
        flops = config.flops_per_batch
        lanes = {}
        for lane, fixed, gflops in (("cpu", 0.9, 340.0), ("gpu0", 1.4, 50_000.0)):
            ms = (fixed + flops / gflops / 1e6) * (1 + 0.03 * rng.standard_normal())
            rows.append(SweepRow(lane, lane.upper(), int(w), config.model.params, flops, 128, ms, ms * 0.95,
                                 ms * 1.05, 100, layers=2))
            run_id = f"r{w}"
            records = [BatchTiming(run_id, lane, lane.upper(), 1, i, i, i * ms / 1000, ms * (1 + 0.02 * np.sin(i)),
                                   128, i <= 5, 1.0) for i in range(1, 106)]
            summary = summarize(records, run_id=run_id, lane=lane, device=lane.upper(), status="completed",
                                flops_per_batch=flops, wall_s=1.0)
            lanes[lane] = LaneResult(lane, RunStarted(run_id, lane, lane.upper(), {"backend": "jax"}), records, summary)
        runs.append(RunResult(f"r{w}", config, Schedule.SEQUENTIAL, "2026-01-01T00:00:00+00:00", lanes))
    path = folder / "sweep.csv"
    path.write_text(sweep_rows_text(rows))
    host = {"machine": "bench", "cpu": "Xeon", "cpu_cores": 16}
    export_runs(folder / "sweep-batches.csv", runs, host, {"sweep": {"widths": [int(w) for w in widths], "layers": 2}})
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sweep = make_sweep(folder, args.points)
        n = len(sweep.read_text().splitlines()) - 1
        out = folder / "report.html"
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(ROOT / "main.py"), "report", str(sweep), "-o", str(out)],
                              capture_output=True, text=True, timeout=120)
        took = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        size = out.stat().st_size
        print(json.dumps({"points": n, "sidecar_bytes": (folder / "sweep-batches.json").stat().st_size,
                          "seconds": round(took, 3), "report_bytes": size}))
        print(f"report of a {n}-point sweep: {took:.2f} s (target < {TARGET_S:g} s), {size / 1024:.0f} KiB "
              f"(target < {TARGET_BYTES / 1024 / 1024:g} MB)")
        ok = took < TARGET_S and size < TARGET_BYTES
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
