"""What lanes report: per-batch timings, run summaries and lifecycle events (frozen, picklable)."""
from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Union

def now_iso() -> str:
    """The time now in UTC, ISO 8601 to the millisecond: how every record and file dates itself."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


# The per-batch CSV's leading columns, in this order (see core/files/run_files.py).
CSV_COLUMNS = ("run_id", "lane", "device", "epoch", "batch", "step", "start_s", "ms",
               "samples", "warmup", "loss")
# After the leading ones: what a record covers, and the model it trained, so that a run whose model
# changed mid-way (a ramp, a dragged width) reads without its sidecar.
CSV_EXTRA_COLUMNS = ("batches", "backend", "widths", "batch_size", "segment")


@dataclass(frozen=True)
class BatchTiming:
    """One timed training step (or `batches` steps when steps_per_execution > 1).

    `start_s` is seconds since the run started on its lane; `ms` is the wall time of the
    step from the end of the previous one (the first of an epoch: from its begin), read
    after the loss was fetched from the device, so the device had finished the step.
    """

    run_id: str
    lane: str
    device: str
    epoch: int
    batch: int
    step: int
    start_s: float
    ms: float
    samples: int
    warmup: bool
    loss: float
    batches: int = 1
    backend: str = "tensorflow"
    widths: str = ""  # the hidden widths joined by "-": "750-150-50-50"
    batch_size: int = 0
    segment: int = 1  # which stretch of the run on one model (see SegmentStarted)

    def row(self) -> list[Any]:
        return [self.run_id, self.lane, self.device, self.epoch, self.batch, self.step,
                f"{self.start_s:.6f}", f"{self.ms:.4f}", self.samples, int(self.warmup),
                f"{self.loss:.6g}", self.batches, self.backend, self.widths, self.batch_size, self.segment]

    @classmethod
    def from_csv_row(cls, row: dict[str, str | None]) -> BatchTiming:
        """A record back from a per-batch CSV row (raises ValueError or KeyError on a damaged one);
        columns a file lacks take their defaults."""
        values: dict[str, Any] = {}
        for name, kind in _BATCH_FIELD_TYPES.items():
            text = row.get(name)
            if text is None or text == "":
                continue
            values[name] = text == "1" if kind == "bool" else int(text) if kind == "int" else \
                float(text) if kind == "float" else text
        return cls(**values)


_BATCH_FIELD_TYPES = {f.name: f.type for f in fields(BatchTiming)}


@dataclass(frozen=True)
class RunSummary:
    """What a lane's run amounted to; steady-state figures exclude warm-up batches."""

    run_id: str
    lane: str
    device: str
    status: str  # completed | cancelled | failed; "running" for a live summary of a run in progress
    reason: str = ""
    n_batches: int = 0  # steady training steps (a record covers `batches` of them)
    n_warmup: int = 0  # warm-up training steps
    median_ms: float = float("nan")
    p10_ms: float = float("nan")
    p90_ms: float = float("nan")
    mad_ms: float = float("nan")
    samples_per_s: float = float("nan")
    flops_per_batch: int = 0
    gflops: float = float("nan")
    warmup_s: float = 0.0
    wall_s: float = 0.0
    final_loss: float = float("nan")
    final_accuracy: float = float("nan")
    batches_per_record: int = 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunStarted:
    """A lane began a run. `settings` holds every resolved setting (XLA, threads, feeding…)."""

    run_id: str
    lane: str
    device: str
    settings: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""  # ISO 8601, UTC


@dataclass(frozen=True)
class EpochEnded:
    run_id: str
    lane: str
    epoch: int
    loss: float
    accuracy: float


@dataclass(frozen=True)
class RunFinished:
    """A run ended on its lane, completed or cancelled; `summary.status` says which."""

    run_id: str
    lane: str
    summary: RunSummary
    ended_at: str = ""


@dataclass(frozen=True)
class RunFailed:
    """A run could not finish: the reason is a sentence for the user."""

    run_id: str
    lane: str
    reason: str
    summary: RunSummary | None = None
    ended_at: str = ""


@dataclass(frozen=True)
class SegmentStarted:
    """A lane began a segment: a stretch of the run on one model (a run has one unless its model was
    changed while it trained, or it is a ramp). Its first `warmup_steps` steps are warm-up again."""

    run_id: str
    lane: str
    segment: int
    widths: tuple[int, ...]
    batch_size: int
    flops_per_batch: int
    first_step: int  # the run's step count before the segment's first step
    at: float  # time.time() at its start: a clock that lanes on one machine share (for overlaps)


@dataclass(frozen=True)
class SegmentEnded:
    """A segment is over: `summary.status` is completed (its budget ran out), cancelled (a stop), or
    switched (the model was changed before its budget ran out)."""

    run_id: str
    lane: str
    segment: int
    summary: RunSummary
    at: float  # time.time()


LaneEvent = Union[RunStarted, BatchTiming, EpochEnded, SegmentStarted, SegmentEnded, RunFinished, RunFailed]
