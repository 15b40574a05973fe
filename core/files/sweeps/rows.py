"""A sweep CSV row as one frozen type that writes and reads itself, and reading whole sweep files.

The row's fields are the file's columns, in order: adding a column is adding a field (at the
end, with a default, so older files still read). Numbers are numbers from the moment a row is
made, live or read back; only `to_csv_row` turns them into text.
"""
from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Any, Iterable, Sequence, TypedDict

from ...analysis.energy import energy_scope
from ...analysis.points import SweepPoint
from ...config import LaneSpec, Task, is_saved_kind
from ..run_files import MAX_PLAUSIBLE_MS, csv_text
from ...records import RunSettings, RunSummary, Status
from ...results import RunResult, Segment

NAN = math.nan
REQUIRED = ("lane", "width", "flops_per_batch", "median_ms")
MAX_PLAUSIBLE_WIDTH = 10_000_000


def row_width(widths: tuple[int, ...]) -> int:
    """A row's width: the first hidden layer's; 0 for a saved model, which has none (its axis is batch size)."""
    return widths[0] if widths else 0


class RowError(ValueError):
    """A row of a sweep file that cannot be used; `problem` names the column and what is wrong with it."""

    def __init__(self, problem: str, value: str = "") -> None:
        super().__init__(f"{problem} ({value!r})" if value else problem)
        self.problem = problem


# A width the user held while the lanes trained (a drag, then a pause) is a point once it has this many steady batches
# a lane, as the README promises: the next drag ends its segment ("switched") and it still counts, a point the rule
# judges with the rest. Fewer, and it was only passed through: cut short, drawn apart, never judged.
MIN_HELD_BATCHES = 10


def segment_status(s: RunSummary) -> Status:
    """A segment's status as a point: one switched away from after MIN_HELD_BATCHES steady batches is a completed
    point of its width; one switched sooner is cut short (cancelled)."""
    if s.status == Status.SWITCHED:
        return Status.COMPLETED if s.n_batches >= MIN_HELD_BATCHES else Status.CANCELLED
    return Status(s.status)


@dataclass(frozen=True)
class SweepRow:
    """One point of a sweep on one lane: the model's size, its steady-state timing, and how it ran."""

    lane: str
    device: str
    width: int
    params: int
    flops_per_batch: int
    batch_size: int
    median_ms: float
    p10_ms: float
    p90_ms: float
    n_batches: int
    mad_ms: float = NAN
    layers: int = 0
    backend: str = ""
    samples_per_s: float = NAN
    gflops: float = NAN
    peak_gflops: float = NAN
    peak_share: float = NAN
    warmup_s: float = NAN
    status: str = Status.COMPLETED
    jit: bool | None = None
    steps_per_execution: int | None = None
    feeding: str = ""
    mixed_precision: bool | None = None
    variant: str = "base"
    run_id: str = ""
    reason: str = ""
    stage: str = "coarse"  # coarse: a width asked for; refine: one a refined sweep added (core/study/refine.py)
    floor_ms: float = NAN  # the device_loop rung of the anatomy (sweep --floor): the device's floor per step
    mean_wall_ms: float = NAN  # the steady stretch's wall time per step: what a user's own fit pays
    others_cpu: float = NAN  # the share of the lane's cores other processes used while it was measured
    load_avg: float = NAN  # the 1-minute load average when it was measured
    # Energy over the steady stretch, where a counter read it (core/lane/energy.py); NaN, and "" for the
    # counter, where none did, and in files older than these columns. Above idle per sample is
    # energy_j_per_msample × (1 − idle_w / mean_w).
    energy_j_per_step: float = NAN
    energy_j_per_msample: float = NAN
    mean_w: float = NAN
    idle_w: float = NAN
    energy_counter: str = ""
    family: str = "mlp"  # the kind of model (core/families.py: mlp, cnn, lstm, gru, transformer 4 heads)
    task: Task = Task.TRAIN  # ms per training step, or per forward call (latency, its p99 beside it)
    p99_ms: float = NAN
    # The separate runs whose steady batches the row pools (more than one where a refinement measured the width
    # again), and the spread between their medians (the standard deviation of their logs; NaN with one run): the
    # run-to-run noise that one run's batches, however many, cannot show (core/analysis/verdict.py run_noise).
    runs: int = 1
    between_runs: float = NAN
    # Each pooled run's own median ms, ";"-joined in the order measured ("" for one run, and in older files): what
    # the pair's ratio scatter between runs is read from (core/analysis/significance.py).
    run_medians_ms: str = ""
    # The ids of the runs pooled, ";"-joined in the same order ("" for one run, and in older files): a pooled row
    # stands for those runs' rows wherever they are read together (core/files/findings.py), counted once.
    pooled_run_ids: str = ""

    @property
    def pooled_runs(self) -> frozenset[str]:
        """The runs this row pools beside its own id: () for one run, and where an older file kept none."""
        if self.runs <= 1:
            return frozenset()
        return frozenset(x.strip() for x in self.pooled_run_ids.split(";") if x.strip())

    @property
    def run_medians(self) -> tuple[float, ...]:
        """Each run's own median, in the order measured: the row's own where it is one run; () where not kept."""
        if self.runs <= 1:
            return (self.median_ms,) if math.isfinite(self.median_ms) else ()
        try:
            values = tuple(float(x) for x in self.run_medians_ms.split(";") if x.strip())
        except ValueError:
            return ()
        return values if len(values) == self.runs and all(math.isfinite(v) and v > 0 for v in values) else ()

    @classmethod
    def from_result(cls, run: RunResult, lane: str, peak_gflops: float = NAN, variant: str = "base") -> SweepRow:
        """The row for `lane` of one sweep point's run (a failed or cut-short lane too, with NaNs)."""
        result, cfg = run.lanes[lane], run.config
        s = result.summary
        settings = result.started.settings if result.started else RunSettings()
        gflops = s.gflops if s else NAN
        return cls(
            lane=lane, device=result.started.device if result.started else (s.device if s else ""),
            width=row_width(cfg.model.widths), params=cfg.model.params, flops_per_batch=cfg.flops_per_batch,
            batch_size=cfg.train.batch_size, median_ms=s.median_ms if s else NAN, p10_ms=s.p10_ms if s else NAN,
            p90_ms=s.p90_ms if s else NAN, n_batches=s.n_batches if s else 0, mad_ms=s.mad_ms if s else NAN,
            layers=cfg.model.saved.layers if cfg.model.saved else len(cfg.model.widths),
            backend=settings.backend or LaneSpec.parse(lane).backend,
            samples_per_s=s.samples_per_s if s else NAN, gflops=gflops, peak_gflops=peak_gflops,
            peak_share=gflops / peak_gflops if peak_gflops > 0 else NAN, warmup_s=s.warmup_s if s else NAN,
            status=result.status, jit=settings.jit_compile,
            steps_per_execution=settings.steps_per_execution, feeding=settings.feeding,
            mixed_precision=settings.mixed_precision, variant=variant, run_id=run.run_id,
            reason=result.failure, mean_wall_ms=s.mean_wall_ms if s else NAN,
            others_cpu=s.others_cpu if s else NAN, load_avg=s.load_avg if s else NAN, family=cfg.model.kind,
            task=cfg.train.task, p99_ms=s.p99_ms if s else NAN, **energy_columns(s))

    @classmethod
    def from_segment(cls, run: RunResult, lane: str, segment: Segment) -> SweepRow:
        """A ramp's (or a dragged run's) segment as a sweep point: its model's width, its figures."""
        result = run.lanes[lane]
        s = segment.ended.summary if segment.ended is not None else None
        settings = result.started.settings if result.started else RunSettings()
        nan = NAN
        widths = segment.started.widths
        return cls(
            lane=lane, device=result.started.device if result.started else "", width=row_width(widths),
            params=dataclasses.replace(run.config.model, widths=widths).params,
            flops_per_batch=segment.started.flops_per_batch, batch_size=segment.started.batch_size,
            median_ms=s.median_ms if s else nan, p10_ms=s.p10_ms if s else nan, p90_ms=s.p90_ms if s else nan,
            n_batches=s.n_batches if s else 0, mad_ms=s.mad_ms if s else nan, layers=len(widths),
            backend=settings.backend or LaneSpec.parse(lane).backend,
            samples_per_s=s.samples_per_s if s else nan, gflops=s.gflops if s else nan,
            warmup_s=s.warmup_s if s else nan,
            status=segment_status(s) if s else Status.CANCELLED,
            jit=settings.jit_compile, steps_per_execution=settings.steps_per_execution,
            feeding=settings.feeding, mixed_precision=settings.mixed_precision,
            run_id=run.run_id, stage="ramp", mean_wall_ms=s.mean_wall_ms if s else nan,
            others_cpu=s.others_cpu if s else nan, load_avg=s.load_avg if s else nan,
            family=run.config.model.kind, task=run.config.train.task, p99_ms=s.p99_ms if s else nan,
            **energy_columns(s))

    def point(self) -> SweepPoint:
        """What the analysis needs of this row."""
        return SweepPoint(self.lane, self.width, self.flops_per_batch, self.median_ms, self.p10_ms, self.p90_ms,
                          self.device, self.batch_size, self.n_batches, self.floor_ms, self.energy_j_per_msample,
                          kind=self.family, runs=self.runs, between_runs=self.between_runs,
                          others_cpu=self.others_cpu, load_avg=self.load_avg,
                          energy_scope=energy_scope(self.energy_counter), run_medians=self.run_medians,
                          session=self.run_id)

    @property
    def width_label(self) -> str:
        """The width as a table shows it: "as saved" for a saved model, which has none."""
        return "as saved" if self.width == 0 and is_saved_kind(self.family) else f"{self.width}"

    @property
    def usable(self) -> bool:
        """Measured: not failed, and a positive, finite median at a positive width and size."""
        return (self.status != Status.FAILED and math.isfinite(self.median_ms) and self.median_ms > 0
                and (self.width > 0 or is_saved_kind(self.family)) and math.isfinite(self.flops_per_batch)
                and self.flops_per_batch > 0)

    def check(self) -> SweepRow:
        """This row, if its numbers are ones a measurement can have; else RowError saying which is not."""
        if not 1 <= self.width <= MAX_PLAUSIBLE_WIDTH and not (self.width == 0 and is_saved_kind(self.family)):
            raise RowError(f"width is not 1-{MAX_PLAUSIBLE_WIDTH:,}", str(self.width))
        if not (math.isfinite(self.flops_per_batch) and self.flops_per_batch > 0):
            raise RowError("flops_per_batch is not a positive number", str(self.flops_per_batch))
        if self.status != Status.FAILED:
            if not (math.isfinite(self.median_ms) and 0 < self.median_ms <= MAX_PLAUSIBLE_MS):
                raise RowError("median_ms is not a positive time under a day", str(self.median_ms))
            for name in ("p10_ms", "p90_ms"):
                value = getattr(self, name)
                if value < 0 or value == math.inf:
                    raise RowError(f"{name} is negative or infinite", str(value))
        return self

    def to_csv_row(self) -> list[str]:
        return [_text(getattr(self, name)) for name in COLUMNS]

    @classmethod
    def from_csv_row(cls, row: dict[str, str | None]) -> SweepRow:
        """A row as csv.DictReader gives it; missing optional columns take their defaults."""
        missing = [c for c in REQUIRED if not (row.get(c) or "").strip()]
        if missing:
            raise RowError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
        values: dict[str, Any] = {}
        for name, kind in _KINDS.items():
            text = row.get(name)
            if text is None or (text == "" and name not in REQUIRED):
                continue
            try:
                values[name] = _parse(text, kind)
            except ValueError:
                raise RowError(f"{name} is not {_KIND_WORDS[kind]}", text[:40]) from None
        values.setdefault("device", "")
        for name in ("params", "batch_size", "n_batches"):
            values.setdefault(name, 0)
        for name in ("p10_ms", "p90_ms"):
            values.setdefault(name, NAN)
        return cls(**values)


class _EnergyColumns(TypedDict, total=False):
    energy_j_per_step: float
    energy_j_per_msample: float
    mean_w: float
    idle_w: float
    energy_counter: str


def energy_columns(s: RunSummary | None) -> _EnergyColumns:
    """A summary's energy columns: each NaN, and no counter, where it measured none."""
    if s is None or not s.energy_measured:
        return {"energy_j_per_step": NAN, "energy_j_per_msample": NAN, "mean_w": NAN, "idle_w": NAN,
                "energy_counter": ""}
    return {"energy_j_per_step": s.joules_per_step, "energy_j_per_msample": s.joules_per_msample,
            "mean_w": s.mean_w, "idle_w": s.idle_w, "energy_counter": s.energy_counter}


COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SweepRow))
_KINDS = {name: hint for name, hint in typing.get_type_hints(SweepRow).items()}
_KIND_WORDS = {int: "a whole number", float: "a number", str: "text", bool | None: "True or False",
               int | None: "a whole number", Task: "train or predict"}


def _text(value: str | int | float | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _parse(text: str, kind: object) -> str | int | float | bool:
    """`text` read as `kind`, a column's type as typing.get_type_hints gives it (a class, or a union with None)."""
    text = text.strip()
    if kind is str:
        return text
    if kind is Task:
        return Task(text)
    if kind is float:
        return float(text)
    if kind is int or kind == int | None:
        number = float(text)  # "128.0" from a spreadsheet is still 128
        if not math.isfinite(number) or number != int(number):
            raise ValueError(text)
        return int(number)
    if kind == bool | None:
        lowered = text.lower()
        if lowered in ("true", "1", "on"):
            return True
        if lowered in ("false", "0", "off"):
            return False
        raise ValueError(text)
    raise TypeError(f"no parser for {kind}")


def latest_rows(rows: Iterable[SweepRow]) -> list[SweepRow]:
    """The rows group_rows would use: the latest usable one per kind of model, task, variant, batch size, lane and width, in the order
    first seen. `rows` may be a stream of any length; what is kept grows with the points, not the file."""
    kept: dict[tuple[str, str, str, int, str, int], SweepRow] = {}
    for row in rows:
        if row.status != Status.FAILED:
            kept[(row.family, row.task, row.variant, row.batch_size, row.lane, row.width)] = row
    return list(kept.values())


def group_rows(rows: Iterable[SweepRow]) -> dict[str, list[SweepPoint]]:
    """Usable points that belong on one curve per lane: the same kind of model, task, compare variant and
    batch size; or, where a kind of model was swept along batch size at one width, the same width.

    Crossovers and fits are only meaningful within a group (a lane measured at batch 32 and at
    batch 512 is two curves; a training step and a predict call are never crossed). Labels name what
    differs between groups ("jit=on · batch 128", "predict · mlp"), and are "all" when there is a single
    group. Along batch size a point's x (SweepPoint.width) is its batch size and its axis "batch". A width
    measured again replaces the earlier point, so `rows` may be a stream of any length: only the latest
    point per width is kept.
    """
    return {label: [curve_point(row, batch_axis) for row in group]
            for label, (group, batch_axis) in row_groups(rows).items()}


def curve_point(row: SweepRow, batch_axis: bool) -> SweepPoint:
    """A row as a point of its group's curve: along batch size, its x is its batch size."""
    return dataclasses.replace(row.point(), width=row.batch_size, axis="batch") if batch_axis else row.point()


def row_groups(rows: Iterable[SweepRow]) -> dict[str, tuple[list[SweepRow], bool]]:
    """group_rows' groups as the rows they hold (the latest per lane and x), each with whether it runs along
    batch size: what a caller needs beside the points (layers, devices, the batch size of a width curve)."""
    kept = latest_rows(rows)
    by_batch = along_batch(kept)
    latest: dict[tuple[str, str, str, str], dict[tuple[str, int], SweepRow]] = {}
    for row in kept:
        curve = (row.family, row.task, row.variant)
        if curve in by_batch:
            latest.setdefault((*curve, f"width {row.width:,}"), {})[(row.lane, row.batch_size)] = row
        else:
            latest.setdefault((*curve, f"batch {row.batch_size}"), {})[(row.lane, row.width)] = row
    kinds = {kind for kind, _, _, _ in latest}
    tasks = {task for _, task, _, _ in latest}
    variants = {variant for _, _, variant, _ in latest}
    sizes = {size for _, _, _, size in latest}
    groups: dict[str, tuple[list[SweepRow], bool]] = {}
    for (kind, task, variant, size), kept_rows in latest.items():
        parts = (([task] if len(tasks) > 1 else []) + ([kind] if len(kinds) > 1 else [])
                 + ([variant] if len(variants) > 1 else []) + ([size] if len(sizes) > 1 else []))
        groups[" · ".join(parts) or "all"] = (list(kept_rows.values()), (kind, task, variant) in by_batch)
    return groups


def runs_along_batch(widths: Iterable[int], batch_sizes: Iterable[int], kind: str) -> bool:
    """The one rule for a curve's axis: batch size where one width has several batch sizes, and always for a
    saved model (it has no width); else width. Rows measured and a sweep asked for both follow it."""
    return len(set(widths)) == 1 and (len(set(batch_sizes)) > 1 or is_saved_kind(kind))


def along_batch(rows: Iterable[SweepRow]) -> set[tuple[str, str, str]]:
    """The (kind of model, task, variant) curves swept along batch size (runs_along_batch)."""
    widths: dict[tuple[str, str, str], set[int]] = {}
    batches: dict[tuple[str, str, str], set[int]] = {}
    for row in rows:
        curve = (row.family, row.task, row.variant)
        widths.setdefault(curve, set()).add(row.width)
        batches.setdefault(curve, set()).add(row.batch_size)
    return {curve for curve in widths if runs_along_batch(widths[curve], batches[curve], curve[0])}


def sweep_rows_text(rows: Sequence[SweepRow]) -> str:
    return csv_text(COLUMNS, (r.to_csv_row() for r in rows))
