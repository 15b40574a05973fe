"""What a run produced, lane by lane and segment by segment: the unit the files, the map and the history hold.

LaneResult.status is the one rule for a lane's state; every view of a run (the CLI, sweeps, the
window, the files) reads it from here.
"""
from __future__ import annotations

import datetime as _dt
import math
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, TypedDict

if TYPE_CHECKING:
    from typing_extensions import NotRequired  # typing's own from Python 3.11

from .config import RunConfig, Schedule, Task
from .json_data import JsonObject, JsonValue, as_map, as_seq
from .records import (BatchTiming, LaneEnded, LaneEvent, LaneInterrupted, RunFailed, RunFinished, RunSettings, RunStarted,
                      RunSummary, SegmentEnded, SegmentStarted, Status, TurnEnded, TurnResumed)
from .run_stats import known, summarize

LANE_STATUSES = (Status.WAITING, Status.RUNNING, Status.COMPLETED, Status.CANCELLED, Status.FAILED)


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass
class Segment:
    """A stretch of one lane's run on one model: when it started and, once over, its summary."""

    started: SegmentStarted
    ended: SegmentEnded | None = None
    # Lanes taking turns: when it paused mid-segment and when it went on (time.time()), in order.
    pauses: list[tuple[float, float | None]] = field(default_factory=list)

    @property
    def index(self) -> int:
        return self.started.segment

    @property
    def label(self) -> str:
        """The hidden widths, "512-512", as the plot marks the segment ("as saved": a saved model has none)."""
        return "-".join(map(str, self.started.widths)) or "as saved"

    def named(self, by_batch: bool) -> str:
        """The segment as a view names it beside the run's others: its widths, or in a ramp through batch sizes
        (by_batch_size) its batch size, "batch 64"."""
        return f"batch {self.started.batch_size:,}" if by_batch else self.label

    def span(self, now: float) -> tuple[float, float]:
        """When it ran (time.time()), up to `now` while it still runs."""
        return self.started.at, self.ended.at if self.ended is not None else now

    def spans(self, now: float) -> list[tuple[float, float]]:
        """When it trained: its span less the pauses while other lanes took their turns."""
        begin, end = self.span(now)
        out = []
        for paused, resumed in self.pauses:
            out.append((begin, paused))
            begin = resumed if resumed is not None else end
        out.append((begin, end))
        return [(a, b) for a, b in out if b > a]

    def to_json(self, task: Task = Task.TRAIN) -> JsonObject:
        """The segment as a run's sidecar holds it (_SegmentEntry; from_json reads it back)."""
        return {"segment": self.index, "widths": list(self.started.widths), "batch_size": self.started.batch_size,
                "flops_per_batch": self.started.flops_per_batch, "first_step": self.started.first_step,
                "started_at": self.started.at, "clock_at": self.started.clock_at,
                "ended_at": self.ended.at if self.ended else None,
                "pauses": [[paused, resumed] for paused, resumed in self.pauses],
                "summary": summary_json(self.ended.summary, task) if self.ended else None}

    @classmethod
    def from_json(cls, run_id: str, lane: str, d: _SegmentEntry) -> Segment:
        started = SegmentStarted(run_id, lane, int(d["segment"]), tuple(d["widths"]), int(d["batch_size"]),
                                 int(d["flops_per_batch"]), int(d["first_step"]), float(d["started_at"]),
                                 float(d.get("clock_at") or 0.0))
        summary = _summary(d.get("summary"))
        ended_at = d.get("ended_at")
        ended = SegmentEnded(run_id, lane, started.segment, summary, float(ended_at)) \
            if summary is not None and ended_at is not None else None
        pauses = [(float(paused), None if resumed is None else float(resumed))
                  for paused, resumed in d.get("pauses") or [] if paused is not None]
        return cls(started, ended, pauses)


class _SegmentEntry(TypedDict):
    """A segment as the sidecar holds it (Segment.to_json writes it)."""

    segment: int
    widths: list[int]
    batch_size: int
    flops_per_batch: int
    first_step: int
    started_at: float
    clock_at: NotRequired[float]  # newer files: the wall time when the records' clock read 0
    ended_at: float | None
    pauses: NotRequired[list[tuple[float | None, float | None]]]  # [paused, resumed] while other lanes took turns
    summary: dict[str, JsonValue] | None


# Figures every view withholds are null in the file too (issue 45), each kept under a raw name for what reads them
# again (runs pooled later add short energy readings up; a view gates a tail itself): a counter's reading over a
# window too short to give joules (RunSummary.energy_measured false), and a served call's p90 from fewer calls than
# its rule needs (core/run_stats.py known, core/analysis/tails.py; the p99 is withheld where it is computed).
RAW_ENERGY = {"energy_j": "energy_j_raw", "energy_s": "energy_s_raw"}
RAW_TAIL = {"p90_ms": "p90_ms_raw"}


def summary_json(s: RunSummary, task: Task = Task.TRAIN) -> JsonObject:
    """A summary as a sidecar holds it: its fields, each withheld figure null (RAW_ENERGY, RAW_TAIL keep it raw)."""
    d = s.as_dict()
    withheld = {**(RAW_ENERGY if s.energy_read and not s.energy_measured else {}),
                **(RAW_TAIL if task == Task.PREDICT and not known(90, s.n_batches) else {})}
    for name, raw in withheld.items():
        if d[name] is not None and d[name] == d[name]:  # NaN is written null already
            d[raw], d[name] = d[name], None
    return d


def _summary(d: Mapping[str, JsonValue] | None) -> RunSummary | None:
    if not d:
        return None
    fields = RunSummary.__dataclass_fields__
    # As read back: RunSummary takes the figures as they were written (a damaged file raises, see RunResult.from_json).
    values: dict[str, Any] = {k: (math.nan if v is None and fields[k].type == "float" else v)
                              for k, v in d.items() if k in fields}
    if "arrivals_ended" not in d and isinstance(d.get("load_ended"), str):  # its name in files before 2026-12-07
        values["arrivals_ended"] = d["load_ended"]
    for name, raw in {**RAW_ENERGY, **RAW_TAIL}.items():  # a raw reading (summary_json) is the summary's figure again
        if d.get(raw) is not None and d.get(name) is None:
            values[name] = d[raw]
    return RunSummary(**values)


@dataclass
class LaneResult:
    """Everything one lane produced for one run; kept even when the run failed or was cancelled."""

    lane: str
    started: RunStarted | None = None
    records: list[BatchTiming] = field(default_factory=list)
    summary: RunSummary | None = None
    failure: str = ""  # why the lane failed, or why it stopped without a summary
    stopped: bool = False  # a stop or a close ended it before it could report: cancelled, not failed
    segments: list[Segment] = field(default_factory=list)

    @property
    def status(self) -> Status:
        """The one rule for a lane's state, used by the CLI, sweeps, the window and the files:
        waiting | running | completed | cancelled | failed."""
        if self.summary is not None:
            return Status(self.summary.status)
        if self.stopped:
            return Status.CANCELLED
        if self.failure:
            return Status.FAILED
        return Status.RUNNING if self.started is not None or self.records else Status.WAITING

    def apply(self, event: LaneEvent) -> None:
        """Fold in one of this lane's events."""
        if isinstance(event, BatchTiming):
            self.records.append(event)
        elif isinstance(event, SegmentStarted):
            self.segments.append(Segment(event))
        elif isinstance(event, SegmentEnded):
            segment = self._segment(event.segment)
            if segment is not None:
                segment.ended = event
        elif isinstance(event, TurnEnded):
            segment = self._segment(event.segment)
            if segment is not None:
                segment.pauses.append((event.at, None))
        elif isinstance(event, TurnResumed):
            segment = self._segment(event.segment)
            if segment is not None and segment.pauses and segment.pauses[-1][1] is None:
                segment.pauses[-1] = (segment.pauses[-1][0], event.at)
        elif isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, RunFinished):
            self.summary = event.summary
        elif isinstance(event, RunFailed):
            self.summary, self.failure = event.summary, event.reason
        elif isinstance(event, LaneEnded):
            self.summary = self._last_segment_summary(event)
            self.failure = event.reason if event.status == Status.FAILED else ""
        elif isinstance(event, LaneInterrupted):
            if self.summary is None and not self.failure:
                self.stopped, self.failure = True, event.reason

    def to_json(self, task: Task = Task.TRAIN) -> JsonObject:
        """The lane as a run's sidecar holds it (from_json reads it back; its records live in the CSV); `task`, the
        run's, says which of its figures a view withholds (summary_json)."""
        return {"device": self.started.device if self.started else None,
                "settings": self.started.settings.to_json() if self.started else None,
                "started_at": self.started.started_at if self.started else None,
                "status": self.status, "failure": self.failure or None,
                "summary": summary_json(self.summary, task) if self.summary else None, "n_records": len(self.records),
                "segments": [segment.to_json(task) for segment in self.segments]}

    @classmethod
    def from_json(cls, run_id: str, name: str, entry: Mapping[str, JsonValue],
                  records: Iterable[BatchTiming] = ()) -> LaneResult:
        """`entry` as to_json wrote it (read by key: a wrong shape raises, and RunResult.from_json's callers say so);
        a lane that had not ended when the file was written reads as stopped."""
        info: Any = entry
        lane = cls(name, records=[r for r in records if r.run_id == run_id and r.lane == name],
                   summary=_summary(info.get("summary")), failure=info.get("failure") or "",
                   stopped=info.get("status") == Status.CANCELLED and not info.get("summary"))
        if lane.summary is None and not lane.failure:
            lane.stopped = True
            lane.failure = "interrupted: the app was closed or crashed during the run"
        if info.get("device") is not None:
            lane.started = RunStarted(run_id, name, info["device"], RunSettings.from_json(info.get("settings")),
                                      info.get("started_at") or "")
        lane.segments = [Segment.from_json(run_id, name, seg) for seg in info.get("segments") or []]
        return lane

    def _segment(self, index: int) -> Segment | None:
        return next((s for s in reversed(self.segments) if s.index == index), None)

    def _last_segment_summary(self, end: LaneEnded) -> RunSummary:
        """A lane's own summary, as it would have sent it: its last segment's figures (a ramp's widths are
        not pooled), from the records folded here."""
        last = self.records[-1].segment if self.records else 1
        segment = next((s for s in self.segments if s.index == last), None)
        return summarize([r for r in self.records if r.segment == last], run_id=end.run_id, lane=self.lane,
                         device=self.started.device if self.started is not None else self.lane,
                         status=end.status, reason=end.reason,
                         flops_per_batch=segment.started.flops_per_batch if segment else end.flops_per_batch,
                         wall_s=end.wall_s)


@dataclass
class RunResult:
    """One run of one config (or a plan of them) across lanes: the unit the CSV, the map and the history hold."""

    run_id: str
    config: RunConfig
    schedule: Schedule
    started_at: str
    lanes: dict[str, LaneResult]
    ended_at: str = ""
    # This machine's run-to-run noise per lane when the run began (core/files/noise.py: SD of logs, as the latest
    # sweep here measured it), and which sweep that was: what the run's verdict is bounded by. Empty: none known.
    run_noise: dict[str, float] = field(default_factory=dict)
    run_noise_from: str = ""

    def to_json(self) -> JsonObject:
        """The run as a sidecar holds it: config, resolved settings, summaries, segments (from_json reads it back;
        the records live in the per-batch CSV). The one writer of a sidecar's run entry."""
        return {"run_id": self.run_id, "config": self.config.to_dict(), "schedule": self.schedule.value,
                "started_at": self.started_at, "ended_at": self.ended_at,
                "lanes": {name: lane.to_json(self.config.train.task) for name, lane in self.lanes.items()},
                "run_noise": dict(self.run_noise), "run_noise_from": self.run_noise_from}

    @classmethod
    def from_json(cls, run: Mapping[str, JsonValue], records: Iterable[BatchTiming] = (),
                  strict: bool = False) -> RunResult:
        """The run a sidecar entry records, with its `records`: the one reader of what to_json writes, for the
        files, the report and its commands alike. `strict`: every key a writer always writes must be there (a
        KeyError or TypeError the callers turn into a sentence); else a run written by hand (a test's, an older
        tool's) is first given the defaults of what it lacks (_filled), and read the same way."""
        d: Any = run if strict else _filled(run)  # read by key below: a wrong shape raises, and the callers say so
        run_id, kept = d["run_id"], list(records)
        lanes = {name: LaneResult.from_json(run_id, name, info, kept) for name, info in d["lanes"].items()}
        noise = d.get("run_noise") or {}
        schedule = Schedule.named(d["schedule"])  # the file's word, or an old name ("concurrent"), as the type
        return cls(run_id, RunConfig.from_dict(d["config"]), schedule, d["started_at"], lanes,
                   d.get("ended_at") or "",
                   {str(k): float(v) for k, v in noise.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 5},
                   str(d.get("run_noise_from") or ""))


def _filled(run: Mapping[str, JsonValue]) -> JsonObject:
    """A run as a hand-written sidecar may give it, with what a writer always writes filled in: no id, no start
    time, one lane after another, the defaults of a config, and each segment's widths, batch size and summary as
    given (a summary with its status alone, {"status": "switched"}, is still that status)."""
    run_id = str(run.get("run_id") or "")

    def segment(lane: str, d: JsonValue) -> JsonObject:
        full: JsonObject = {"segment": 0, "widths": [], "batch_size": 0, "flops_per_batch": 0, "first_step": 0,
                            "started_at": 0.0, "ended_at": 0.0, "summary": None, **as_map(d)}
        if full["summary"] is not None:
            full["summary"] = {"run_id": run_id, "lane": lane, "device": "", **as_map(full["summary"])}
        return full

    lanes: JsonObject = {str(name): {**as_map(info), "segments": [segment(str(name), d)
                                                                  for d in as_seq(as_map(info).get("segments"))]}
                         for name, info in as_map(run.get("lanes")).items()}
    return {**run, "run_id": run_id, "schedule": run.get("schedule") or Schedule.SEQUENTIAL.value,
            "started_at": str(run.get("started_at") or ""), "lanes": lanes,
            "config": {"model": {}, "train": {}, **as_map(run.get("config"))}}


def by_batch_size(segments: Iterable[Segment]) -> bool:
    """Whether these segments (a run's, over its lanes) differ in batch size at one model: a ramp through batch
    sizes, whose segments are named by their batch size (Segment.named)."""
    seen = list(segments)
    return len({s.started.batch_size for s in seen}) > 1 and len({s.started.widths for s in seen}) == 1
