"""Sweeps: the same MLP at growing widths (and batch sizes) on each lane, one point at a time."""
from __future__ import annotations

import csv
import dataclasses
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from crossover_lab.core.analysis import SweepPoint, analyze_points
from crossover_lab.core.config import ConfigError, LaneSpec, RunConfig
from crossover_lab.core.export import atomic_write_text, csv_text, export_runs
from crossover_lab.core.records import LaneEvent
from crossover_lab.core.session import LanePool, RunResult, new_run_id, run_comparison

SWEEP_COLUMNS = ("lane", "device", "width", "params", "flops_per_batch", "batch_size", "median_ms",
                 "p10_ms", "p90_ms", "n_batches", "mad_ms", "layers", "backend", "samples_per_s",
                 "gflops", "peak_gflops", "peak_share", "warmup_s", "status", "jit", "steps_per_execution",
                 "feeding", "mixed_precision", "variant", "run_id", "reason")
DEFAULT_STEADY_STEPS = 60
DEFAULT_POINT_SECONDS = 3.0


# The settings a compare sweep may change, and how a value is read from the command line.
KNOBS: dict[str, Callable[[str], Any]] = {
    "batch_size": int,
    "steps_per_execution": int,
    "jit": lambda v: {"on": True, "off": False}[v],
    "feeding": str,
    "mixed_precision": lambda v: {"on": True, "off": False}[v],
}


def with_knob(spec: SweepSpec, text: str) -> SweepSpec:
    """The same sweep with one knob changed: `jit=on`, `batch_size=512`, `feeding=device`…"""
    knob, _, value = text.partition("=")
    knob = knob.strip().replace("-", "_")
    if knob not in KNOBS or not value:
        raise ConfigError(f"compare {text!r}: use KNOB=VALUE with a knob among {', '.join(KNOBS)}")
    try:
        parsed = KNOBS[knob](value.strip().lower())
    except (KeyError, ValueError):
        raise ConfigError(f"compare {text!r}: {value!r} is not a value for {knob}") from None
    train = dataclasses.replace(spec.base.train, **{knob: parsed})
    base = RunConfig(spec.base.model, train)
    batches = (parsed,) if knob == "batch_size" else spec.batch_sizes
    return dataclasses.replace(spec, base=base, batch_sizes=batches, variant=f"{knob}={value.strip().lower()}")


def log_widths(lo: int = 16, hi: int = 4096, n: int = 6) -> tuple[int, ...]:
    """`n` widths evenly spaced in log scale from `lo` to `hi`, rounded to whole numbers."""
    if not (1 <= lo < hi) or n < 2:
        raise ConfigError(f"width range {lo}-{hi} with {n} points: need 1 ≤ low < high and at least 2 points")
    return tuple(sorted({int(round(w)) for w in np.geomspace(lo, hi, n)}))


@dataclass(frozen=True)
class SweepSpec:
    """What to sweep: hidden widths (every layer the same width) × batch sizes, on a base config."""

    widths: tuple[int, ...]
    layers: int = 2
    batch_sizes: tuple[int, ...] = ()  # empty: the base config's batch size only
    base: RunConfig = field(default_factory=RunConfig)
    steady_steps: int = DEFAULT_STEADY_STEPS
    seconds_per_point: float = DEFAULT_POINT_SECONDS
    calibrate: bool = True  # time a large matrix product per lane: the GFLOP/s each point is a share of
    variant: str = "base"  # in compare mode, the knob setting this sweep ran with ("jit=on")

    def __post_init__(self) -> None:
        if not self.widths:
            raise ConfigError("a sweep needs at least one width")
        if self.steady_steps < 3:
            raise ConfigError(f"steady batches per point {self.steady_steps}: choose at least 3")

    def points(self) -> list[RunConfig]:
        out = []
        for batch in self.batch_sizes or (self.base.train.batch_size,):
            for width in self.widths:
                model = dataclasses.replace(self.base.model, widths=(width,) * self.layers)
                train = dataclasses.replace(self.base.train, batch_size=batch,
                                            max_steps=self.base.train.warmup_steps + self.steady_steps,
                                            max_seconds=self.seconds_per_point)
                out.append(RunConfig(model, train))
        return out


@dataclass
class SweepResult:
    spec: SweepSpec
    points: list[dict[str, Any]] = field(default_factory=list)  # one row per point and lane
    runs: list[RunResult] = field(default_factory=list)
    cancelled: bool = False
    calibration: dict[str, dict[str, Any]] = field(default_factory=dict)  # lane → {"gflops", "size", "error"}

    def sweep_points(self) -> list[SweepPoint]:
        return [row_to_point(r) for r in self.points if r["status"] != "failed"]

    def groups(self) -> dict[str, list[SweepPoint]]:
        return group_rows(self.points)


def calibration_size(lane: LaneSpec) -> int:
    """Big enough to reach the device's throughput, small enough to take about a second."""
    return 8192 if lane.kind == "gpu" else 2048


def point_row(result: RunResult, lane: str, peak_gflops: float = math.nan, variant: str = "base") -> dict[str, Any]:
    lr = result.lanes[lane]
    s, cfg = lr.summary, result.config
    settings = lr.started.settings if lr.started else {}
    nan = math.nan
    return {
        "lane": lane, "device": lr.started.device if lr.started else (s.device if s else ""),
        "width": cfg.model.widths[0], "params": cfg.model.params, "flops_per_batch": cfg.flops_per_batch,
        "batch_size": cfg.train.batch_size, "median_ms": s.median_ms if s else nan,
        "p10_ms": s.p10_ms if s else nan, "p90_ms": s.p90_ms if s else nan,
        "n_batches": s.n_batches if s else 0, "mad_ms": s.mad_ms if s else nan,
        "layers": len(cfg.model.widths), "backend": LaneSpec.parse(lane).backend,
        "samples_per_s": s.samples_per_s if s else nan, "gflops": s.gflops if s else nan,
        "peak_gflops": peak_gflops, "peak_share": (s.gflops / peak_gflops) if s and peak_gflops > 0 else nan,
        "mixed_precision": settings.get("mixed_precision", ""), "variant": variant,
        "warmup_s": s.warmup_s if s else nan,
        "status": "failed" if lr.failure and (s is None or s.status == "failed") else (s.status if s else "failed"),
        "jit": settings.get("jit_compile", ""), "steps_per_execution": settings.get("steps_per_execution", ""),
        "feeding": settings.get("feeding", ""), "run_id": result.run_id, "reason": lr.failure,
    }


def row_to_point(row: dict[str, Any]) -> SweepPoint:
    return SweepPoint(lane=row["lane"], width=int(row["width"]), flops_per_batch=float(row["flops_per_batch"]),
                      median_ms=float(row["median_ms"]), p10_ms=float(row["p10_ms"]),
                      p90_ms=float(row["p90_ms"]), device=row.get("device", ""),
                      batch_size=int(row.get("batch_size") or 0), n_batches=int(row.get("n_batches") or 0))


def run_sweep(pool: LanePool, lanes: Sequence[LaneSpec], spec: SweepSpec, *,
              on_point: Callable[[dict[str, Any], int, int], None] | None = None,
              on_event: Callable[[LaneEvent], None] | None = None,
              on_run: Callable[[RunResult], None] | None = None,
              cancel: threading.Event | None = None) -> SweepResult:
    """Run every point on every lane, one lane at a time so figures are exact; stop on `cancel`.

    `on_point(row, done, total)` is called after each point and lane, `on_run(run)` with each
    point's per-batch records; finished points are kept when the sweep is cancelled.
    """
    cancel = cancel or threading.Event()
    result = SweepResult(spec)
    configs = spec.points()
    total, done = len(configs) * len(lanes), 0
    if spec.calibrate:
        for lane in lanes:
            if cancel.is_set():
                break
            answer = pool.get(lane).calibrate(calibration_size(lane), 1.0, cancel)
            result.calibration[lane.name] = {k: answer.get(k) for k in ("gflops", "size", "error", "reason")}
    for config in configs:
        if cancel.is_set():
            result.cancelled = True
            break
        run = run_comparison(pool, list(lanes), config, schedule="sequential", run_id=new_run_id(),
                             on_event=on_event, cancel=cancel)
        result.runs.append(run)
        if on_run is not None:
            on_run(run)
        for lane in lanes:
            peak = result.calibration.get(lane.name, {}).get("gflops")
            row = point_row(run, lane.name, peak if isinstance(peak, float) else math.nan, spec.variant)
            if row["status"] == "cancelled" or (cancel.is_set() and row["status"] != "completed"):
                continue  # a point cut short is not a point
            result.points.append(row)
            done += 1
            if on_point is not None:
                on_point(row, done, total)
    result.cancelled = result.cancelled or cancel.is_set()
    return result


def analyze_groups(groups: dict[str, list[SweepPoint]]) -> dict[str, Any]:
    """The documented analysis JSON for the first group; with several, each one's under "groups" too."""
    results = {label: analyze_points(points) for label, points in groups.items()}
    first = next(iter(results.values()), analyze_points([]))
    return first if len(results) <= 1 else {**first, "group": next(iter(results)), "groups": results}


def batches_path(csv_path: str) -> str:
    """`sweep.csv` → `sweep-batches.csv`: the per-batch records beside the points."""
    stem = csv_path[:-4] if csv_path.endswith(".csv") else csv_path
    return stem + "-batches.csv"


def export_sweep(csv_path: str, results: Sequence[SweepResult], host: dict[str, Any]) -> list[str]:
    """The sweep CSV (a row per point and lane), its per-batch CSV and that one's JSON sidecar.

    Every file is written atomically; returns their paths.
    """
    rows = [r for res in results for r in res.points]
    write_sweep_csv(csv_path, rows)
    spec = results[0].spec if results else None
    info: dict[str, Any] = {}
    if spec is not None:
        info = {"widths": list(spec.widths), "layers": spec.layers, "batch_sizes": list(spec.batch_sizes),
                "steady_steps": spec.steady_steps, "seconds_per_point": spec.seconds_per_point,
                "variants": {res.spec.variant: {"calibration": res.calibration, "cancelled": res.cancelled,
                                                "analysis": analyze_groups(res.groups())} for res in results}}
    batches, sidecar = export_runs(batches_path(csv_path), [run for res in results for run in res.runs], host,
                                   extra={"sweep": info})
    return [csv_path, str(batches), str(sidecar)]


def sweep_csv_text(rows: Sequence[dict[str, Any]]) -> str:
    def fmt(v: Any) -> Any:
        return f"{v:.6g}" if isinstance(v, float) else v

    return csv_text(SWEEP_COLUMNS, ([fmt(r.get(c, "")) for c in SWEEP_COLUMNS] for r in rows))


def write_sweep_csv(path: str, rows: Sequence[dict[str, Any]]) -> None:
    atomic_write_text(path, sweep_csv_text(rows))


def group_rows(rows: Sequence[dict[str, Any]]) -> dict[str, list[SweepPoint]]:
    """Points that belong on one curve per lane: the same compare variant and batch size.

    Crossovers and fits are only meaningful within a group (a lane measured at batch 32 and at
    batch 512 is two curves). Labels name what differs between groups ("jit=on · batch 128"),
    and are "all" when there is a single group.
    """
    usable = [r for r in rows if r.get("status", "completed") != "failed"]
    variants = list(dict.fromkeys(str(r.get("variant") or "base") for r in usable))
    batches = list(dict.fromkeys(int(r.get("batch_size") or 0) for r in usable))
    groups: dict[str, list[SweepPoint]] = {}
    for row in usable:
        parts = []
        if len(variants) > 1:
            parts.append(str(row.get("variant") or "base"))
        if len(batches) > 1:
            parts.append(f"batch {int(row.get('batch_size') or 0)}")
        groups.setdefault(" · ".join(parts) or "all", []).append(row_to_point(row))
    return groups


_INT_COLUMNS = ("width", "params", "batch_size", "n_batches", "layers")
_FLOAT_COLUMNS = ("flops_per_batch", "median_ms", "p10_ms", "p90_ms", "mad_ms", "samples_per_s", "gflops",
                  "peak_gflops", "peak_share", "warmup_s")


def typed_row(row: dict[str, Any]) -> dict[str, Any]:
    """A sweep CSV row with numbers as numbers (missing ones NaN), as a live sweep's rows are."""
    out = dict(row)
    for key in _INT_COLUMNS:
        out[key] = int(float(row.get(key) or 0))
    for key in _FLOAT_COLUMNS:
        try:
            out[key] = float(row.get(key) or "nan")
        except ValueError:
            if key in ("flops_per_batch", "median_ms"):  # what the analysis needs must be a number
                raise
            out[key] = float("nan")
    out["variant"] = row.get("variant") or "base"
    out["status"] = row.get("status") or "completed"
    out.setdefault("reason", "")
    return out


def read_sweep_rows(path: str) -> list[dict[str, Any]]:
    """Rows of any sweep CSV with at least the documented columns (this or another machine's)."""
    need = ("lane", "width", "flops_per_batch", "median_ms")
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise ConfigError(f"{path} is not a sweep CSV: it has no {', '.join(missing)} column")
            rows = list(reader)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    typed = []
    for i, row in enumerate(rows, start=2):
        try:
            typed.append(typed_row(row))
            row_to_point(typed[-1])
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path}, line {i}: {exc}") from None
    return typed


def read_sweep_csv(path: str) -> list[SweepPoint]:
    """Every usable point of a sweep CSV, whatever its group (see group_rows)."""
    return [p for points in group_rows(read_sweep_rows(path)).values() for p in points]
