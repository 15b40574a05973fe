"""What lanes report: per-batch timings, run summaries and lifecycle events (frozen, picklable), and a lane's settings
read by type (RunSettings); a run summarised from its records is core/run_stats.py's."""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from enum import Enum
from typing import Any, Mapping, Union

from .json_data import JsonObject, JsonValue
from .config import Task


class Status(str, Enum):
    """What became of a lane's run, or of one segment of it. A str, so that files and the wire carry
    the word itself ("completed") and a status read back compares equal to its member."""

    WAITING = "waiting"  # not started yet
    RUNNING = "running"
    COMPLETED = "completed"  # its budget ran out (a run, a segment)
    CANCELLED = "cancelled"  # a stop
    FAILED = "failed"
    SWITCHED = "switched"  # a segment whose model was changed before its budget ran out

    def __str__(self) -> str:
        return self.value

def now_iso() -> str:
    """The time now in UTC, ISO 8601 to the millisecond: how every record and file dates itself."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


# A figure is measured on a busy machine when other processes took this share of its lane's cores.
BUSY_SHARE = 0.10
# The shortest stretch an energy counter is read over to give joules: 2 s is 20 updates of NVML's energy counter
# (it updates about every 100 ms; RAPL's every millisecond or so), so one update more or less moves the figure by
# 5% at most. A shorter stretch is "too short to read", never joules (Zeus's measurement windows; SC24, "Part-time
# power measurements", on how coarsely a GPU's power is sampled).
MIN_ENERGY_WINDOW_S = 2.0

# The per-batch CSV's leading columns, in this order (see core/files/run_files.py).
CSV_COLUMNS = ("run_id", "lane", "device", "epoch", "batch", "step", "start_s", "ms",
               "samples", "warmup", "loss")
# After the leading ones: what a record covers, and the model it trained, so that a run whose model
# changed mid-way (a ramp, a dragged width) reads without its sidecar.
CSV_EXTRA_COLUMNS = ("batches", "backend", "widths", "batch_size", "segment", "resumed", "task", "family",
                     "requests", "queued", "backlog", "waits_ms")


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
    widths: tuple[int, ...] = ()  # the hidden widths, (750, 150, 50, 50); the CSV's cell joins them: "750-150-50-50"
    batch_size: int = 0
    segment: int = 1  # which stretch of the run on one model (see SegmentStarted)
    resumed: bool = False  # the first step after the lane's turn came back (lanes taking turns)
    task: Task = Task.TRAIN  # a training step, or one forward call timed begin to end (its latency)
    family: str = "mlp"  # the kind of model `widths` belongs to (core/families.py kind_word: mlp, cnn, lstm, …)
    # A call under open-loop arrivals (core/lane/arrivals.py; 0 and () for a closed loop): how many requests it
    # answered, how many of those arrived while the server was busy, how many still waited behind them when it
    # began, and each one's wait from its intended arrival to the call's beginning (its latency: wait + ms).
    requests: int = 0
    queued: int = 0
    backlog: int = 0
    waits_ms: tuple[float, ...] = ()

    def row(self) -> list[str | int | float]:
        return [self.run_id, self.lane, self.device, self.epoch, self.batch, self.step,
                f"{self.start_s:.6f}", f"{self.ms:.4f}", self.samples, int(self.warmup),
                f"{self.loss:.6g}", self.batches, self.backend, _widths_cell(self.widths), self.batch_size,
                self.segment, int(self.resumed), str(self.task), self.family, self.requests, self.queued, self.backlog,
                ";".join(f"{w:.4f}" for w in self.waits_ms)]

    @property
    def latencies_ms(self) -> tuple[float, ...]:
        """At an arrival rate: each answered request's latency, intended arrival to answer on the host."""
        return tuple(w + self.ms for w in self.waits_ms)

    @classmethod
    def from_csv_row(cls, row: dict[str, str | None]) -> BatchTiming:
        """A record back from a per-batch CSV row; columns a file lacks take their defaults. A damaged row raises
        ValueError naming its column: "ms is not a number", "step is missing"."""
        values: dict[str, Any] = {}
        for name, kind in _BATCH_FIELD_TYPES.items():
            text = row.get(name)
            if text is None or text == "":
                continue
            try:
                values[name] = text == "1" if kind == "bool" else int(text) if kind == "int" else \
                    float(text) if kind == "float" else \
                    tuple(float(w) for w in text.split(";")) if kind == "tuple[float, ...]" else \
                    _widths_of_cell(text) if kind == "tuple[int, ...]" else \
                    Task(text) if kind == "Task" else text
            except ValueError:
                raise ValueError(f"{name} is not {_BATCH_KIND_WORDS.get(str(kind), 'text')}") from None
        missing = [name for name in _BATCH_REQUIRED if name not in values]
        if missing:
            raise ValueError(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
        return cls(**values)


_BATCH_FIELD_TYPES = {f.name: f.type for f in fields(BatchTiming)}
_BATCH_REQUIRED = tuple(f.name for f in fields(BatchTiming) if f.default is MISSING and f.default_factory is MISSING)
_BATCH_KIND_WORDS = {"int": "a whole number", "float": "a number", "tuple[float, ...]": "numbers joined by ';'",
                     "tuple[int, ...]": "whole numbers joined by '-'", "Task": "train or predict"}


def _widths_cell(widths: tuple[int, ...]) -> str:
    """A model's hidden widths as the per-batch CSV's `widths` cell holds them: "750-150-50-50" ("" for none)."""
    return "-".join(map(str, widths))


def _widths_of_cell(text: str) -> tuple[int, ...]:
    """The widths back from a per-batch CSV's `widths` cell ("750-150-50-50"); ValueError for any other text."""
    parts = text.split("-")
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(f"{text[:40]!r} is not widths joined by '-'")
    return tuple(int(p) for p in parts)


@dataclass(frozen=True)
class RunSummary:
    """What a lane's run amounted to; steady-state figures exclude warm-up batches."""

    run_id: str
    lane: str
    device: str
    status: str  # a Status: completed | cancelled | failed; running for a live summary of a run in progress
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
    # What a user's own fit costs: the steady stretch's wall time per step, epoch ends and slow steps
    # included (the median leaves them out); it multiplies into "how long will my training take".
    mean_wall_ms: float = float("nan")
    # The machine while it was measured: the share of the lane's cores that other processes used
    # (from /proc; NaN where it cannot be read), and the 1-minute load average at the end.
    others_cpu: float = float("nan")
    load_avg: float = float("nan")
    # Energy over the steady stretch, as a hardware counter gave it (core/lane/energy.py): the joules between
    # the first steady step and the last (turns waited out left out), the steps, samples and seconds they
    # cover, which counter (rapl-package, rapl-package+dram, nvml-energy, nvml-power-samples; "" where none
    # reads), a note (why not measured, or that a package's energy is shared), and the device's idle power
    # measured before the lane's first segment. NaN where unknown; never an estimate.
    energy_j: float = float("nan")
    energy_steps: int = 0
    energy_samples: int = 0
    energy_s: float = float("nan")
    energy_counter: str = ""
    energy_note: str = ""
    idle_w: float = float("nan")
    # Where the segment's compiled program came from, on a JAX lane with the persistent compilation cache
    # (core/lane/backends.py): "cache" (every program read back), "compiled" (compiled and stored), "both", or
    # "" (nothing compiled: another backend, the cache off, or a model the lane kept from before).
    compile_cache: str = ""
    # The 99th percentile of the steady steps' ms: for a predict run, the tail of one call's latency. NaN below the
    # calls the tail rule needs (core/analysis/tails.py: 662), whose words say so from n_batches.
    p99_ms: float = float("nan")
    # Under open-loop arrivals (predict --arrival-rate): how its schedule ended: "done" (every request answered),
    # "behind" (the oldest waiting request had waited arrivals.BEHIND_S: the lane does not hold the rate), or
    # "stopped" (a stop or a new model). "" for a closed loop.
    arrivals_ended: str = ""
    # A GPU's temperature (°C) when its energy window began and when it ended (NVML); NaN elsewhere. A GPU that
    # heats up slows itself: the figures say how warm it was.
    gpu_temp_begin_c: float = float("nan")
    gpu_temp_end_c: float = float("nan")

    def as_dict(self) -> JsonObject:
        return asdict(self)

    @property
    def requests_per_s(self) -> float:
        """Calls answered per second, measured: the steady calls over the wall time they took, the gaps between them
        included (one client, one call at a time, no queue: MLPerf's SingleStream). Not 1000 / median."""
        return 1000.0 / self.mean_wall_ms if self.mean_wall_ms > 0 else float("nan")

    @property
    def energy_read(self) -> bool:
        """A counter read the steady stretch, over however short a window (runs pooled add such readings up)."""
        return (bool(self.energy_counter) and self.energy_steps > 0 and 0 <= self.energy_j < float("inf")
                and self.energy_s == self.energy_s)

    @property
    def energy_measured(self) -> bool:
        """A counter read the steady stretch over a window long enough to read (MIN_ENERGY_WINDOW_S): every energy
        figure of every view is given from this, or not at all."""
        return self.energy_read and self.energy_s >= MIN_ENERGY_WINDOW_S

    @property
    def joules_per_step(self) -> float:
        return self.energy_j / self.energy_steps if self.energy_measured else float("nan")

    @property
    def joules_per_msample(self) -> float:
        """Joules per million samples over the steady stretch."""
        return 1e6 * self.energy_j / self.energy_samples if self.energy_measured and self.energy_samples > 0 \
            else float("nan")

    @property
    def mean_w(self) -> float:
        return self.energy_j / self.energy_s if self.energy_measured and _positive(self.energy_s) else float("nan")

    @property
    def above_idle_j(self) -> float:
        """The steady stretch's joules less the idle power over the same seconds (NaN without a baseline)."""
        if not (self.energy_measured and _positive(self.energy_s) and self.idle_w == self.idle_w):
            return float("nan")
        return self.energy_j - self.idle_w * self.energy_s

    @property
    def joules_per_msample_above_idle(self) -> float:
        j = self.above_idle_j
        return 1e6 * j / self.energy_samples if j == j and self.energy_samples > 0 else float("nan")

    @property
    def mean_w_above_idle(self) -> float:
        j = self.above_idle_j
        return j / self.energy_s if j == j else float("nan")


def _positive(x: float) -> bool:
    return x == x and 0 < x < float("inf")


def _int(value: JsonValue) -> int:
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float):
        return int(value) if value == value and abs(value) != float("inf") else 0
    try:
        return int(value) if isinstance(value, str) else 0
    except ValueError:
        return 0


def _flag(value: JsonValue) -> bool | None:
    return None if value is None else bool(value)


# The counts among a lane's settings: never negative (the wire's guard refuses one that is, core/engine/remote/guard.py).
COUNT_SETTINGS = ("threads", "samples", "steps_per_epoch", "total_steps", "epochs", "warmup_steps",
                  "steps_per_execution", "gc_frozen_objects")


@dataclass(frozen=True)
class RunSettings:
    """The settings a lane resolved for a run, typed: those that change its speed or say what it trained on, each a
    field; every other key it recorded (backend-specific ones, its process id, a remote lane's host) in `extra`, as
    data. The type RunStarted carries on the wire and in memory; `to_json` writes the sidecar's flat object (a field
    at its default is not written: it was not recorded), `from_json` reads one back, of any version."""

    backend: str = ""
    threads: int = 0
    jit_compile: bool | None = None  # None: not said (an old file)
    jit_source: str = ""  # "config", or the backend's default
    steps_per_execution: int | None = None
    feeding: str = ""  # how batches reach the model (core/lane/feeding.py)
    mixed_precision: bool | None = None
    data_source: str = ""  # mnist | synthetic | a file's path
    data_description: str = ""  # a sentence: what the data is and why ("auto" became synthetic: …)
    samples: int = 0
    steps_per_epoch: int = 0
    total_steps: int = 0
    epochs: int = 0
    warmup_steps: int = 0
    paced: bool = False
    model_reused: bool | None = None  # the model came from the lane's shelf (no build or trace)
    family: str = ""  # the model's family as the lane built it (an anatomy's)
    # How the lane's process was set up, as the settings' words say it (core/words/settings.py lane_rows).
    cpu_affinity: tuple[int, ...] = ()  # the cores a thread budget pinned it to
    intra_op_threads: int | None = None  # TensorFlow's pools
    inter_op_threads: int | None = None
    torch_threads: int | None = None
    xla_flags: str = ""
    compile_cache_dir: str = ""  # JAX's persistent cache, where one is used
    framework_version: str = ""  # the backend's own ("2.21.0"), recorded as "<backend>_version"
    keras_version: str = ""
    placement: str = ""  # where the model's variables were placed
    soft_device_placement: bool | None = None
    gc_frozen_objects: int = 0
    framework_warmed_s: float | None = None  # the framework's once-a-process costs paid as the lane started
    serve: str = ""  # a served run: how each call was made (keras | compiled)
    weights: str = ""  # a served run: where its weights came from, in words
    server: str = ""  # a run at an arrival rate: how the server batches requests, in words
    # How busy the machine was while an anatomy point was measured, recorded beside its settings.
    others_cpu: float | None = None  # the share of the lane's cores other work used
    load_avg: float | None = None  # the 1-minute load average
    extra: dict[str, Any] = field(default_factory=dict)  # every other key the lane recorded, as data

    @classmethod
    def from_json(cls, settings: Mapping[str, JsonValue] | None) -> RunSettings:
        """The settings a lane recorded (a sidecar's object, an anatomy point's): the one reader of their keys, each
        read as its field's type (_SETTING_READERS). A value of the wrong kind reads as not recorded; a count below
        0 as 0; a key no field names is kept in `extra`."""
        settings = settings or {}
        backend = str(settings.get("backend") or "")
        typed = {name: _SETTING_READERS[kind](settings.get(name)) for name, kind in _SETTINGS_KINDS.items()
                 if name in settings}
        version = settings.get(f"{backend}_version") if backend else None
        known = _SETTINGS_KEYS | ({f"{backend}_version"} if backend else set())
        return cls(**typed, framework_version=str(version) if version is not None else "",
                   extra={k: v for k, v in settings.items() if k not in known})

    def to_json(self) -> JsonObject:
        """The flat object a sidecar keeps: each field the lane recorded (none at its default), under the key it was
        read from, then `extra`'s keys."""
        out: JsonObject = {}
        for f in fields(self):
            if f.name in ("extra", "framework_version"):
                continue
            value = getattr(self, f.name)
            if value != _SETTINGS_DEFAULTS[f.name]:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        if self.backend and self.framework_version:
            out[f"{self.backend}_version"] = self.framework_version
        return {**out, **{k: v for k, v in self.extra.items() if k not in out}}

    def with_extra(self, **more: JsonValue) -> RunSettings:
        """The same settings with more keys recorded beside them (a remote lane's host, as the app heard it)."""
        return replace(self, extra={**self.extra, **more})


def _whole(value: JsonValue) -> int:
    return max(_int(value), 0)


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else None


# How a recorded value is read as its field's type (the field's annotation, as text).
_SETTING_READERS: dict[str, Any] = {
    "str": lambda v: "" if v is None else str(v), "int": _whole, "bool": bool, "bool | None": _flag,
    "int | None": lambda v: None if v is None else _whole(v), "float | None": _number,
    "tuple[int, ...]": lambda v: tuple(c for c in v if isinstance(c, int) and not isinstance(c, bool))
    if isinstance(v, (list, tuple)) else ()}
_SETTINGS_DEFAULTS: dict[str, Any] = {f.name: (f.default if f.default is not MISSING else ()) for f in fields(RunSettings)
                                      if f.name != "extra"}
_SETTINGS_KINDS = {f.name: str(f.type) for f in fields(RunSettings) if f.name not in ("extra", "framework_version")}
_SETTINGS_KEYS = frozenset(_SETTINGS_KINDS)


@dataclass(frozen=True)
class RunStarted:
    """A lane began a run, with every setting it resolved (XLA, threads, feeding…), typed (RunSettings)."""

    run_id: str
    lane: str
    device: str
    settings: RunSettings = field(default_factory=RunSettings)
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
    clock_at: float = 0.0  # time.time() when the records' clock (start_s) read 0; 0: not said (older files)


@dataclass(frozen=True)
class SegmentEnded:
    """A segment is over: `summary.status` is completed (its budget ran out), cancelled (a stop), or
    switched (the model was changed before its budget ran out)."""

    run_id: str
    lane: str
    segment: int
    summary: RunSummary
    at: float  # time.time()


@dataclass(frozen=True)
class TurnEnded:
    """A lane taking turns has paused mid-segment (after a Pause): the next lane may train."""

    run_id: str
    lane: str
    segment: int
    step: int  # the run's steps so far
    at: float  # time.time()


@dataclass(frozen=True)
class TurnResumed:
    """A lane paused mid-segment has its turn again and goes on where it stopped."""

    run_id: str
    lane: str
    segment: int
    at: float  # time.time()


@dataclass(frozen=True)
class LaneEnded:
    """The app ended a lane's run from its side: the process died, did not stop within its grace after a
    stop, or stopped answering. No summary came from the lane, so whoever folds the run's records makes it
    (LaneResult.apply): the records are kept in one place only."""

    run_id: str
    lane: str
    status: Status  # failed | cancelled | completed (stopped while finishing, after its last batch)
    reason: str
    wall_s: float  # from the job's submission to its end, on the app's monotonic clock
    flops_per_batch: int  # the run's first model's, for a lane that never began a segment
    ended_at: str = ""


@dataclass(frozen=True)
class LaneInterrupted:
    """The run ended before this lane could report: a stop before its turn, or a lane closed from another
    thread (the app quitting). What it measured is kept; it counts as cancelled."""

    run_id: str
    lane: str
    reason: str


LaneEvent = Union[RunStarted, BatchTiming, EpochEnded, SegmentStarted, SegmentEnded, TurnEnded, TurnResumed,
                  RunFinished, RunFailed, LaneEnded, LaneInterrupted]
LANE_EVENTS = (RunStarted, BatchTiming, EpochEnded, SegmentStarted, SegmentEnded, TurnEnded, TurnResumed,
               RunFinished, RunFailed, LaneEnded, LaneInterrupted)
# The events that end a lane's part in a run.
LANE_ENDS = (RunFinished, RunFailed, LaneEnded, LaneInterrupted)

