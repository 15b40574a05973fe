"""The per-batch CSV and its JSON sidecar: written together and atomically, and read back as runs."""
from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypedDict, overload

if TYPE_CHECKING:
    from typing_extensions import NotRequired  # typing's own from Python 3.11

from ..config import RunConfig, Schedule
from ..json_data import JsonValue, parse_json
from .atomic import ExportError, atomic_write_files, complete_lines, csv_text
from .inputs import open_regular, read_text_bounded
from ..records import (CSV_COLUMNS, CSV_EXTRA_COLUMNS, BatchTiming, RunStarted, RunSummary, SegmentEnded,
                       SegmentStarted, Status)
from ..results import LaneResult, RunResult, Segment

HEADER = CSV_COLUMNS + CSV_EXTRA_COLUMNS
FORMAT = "crossover-batches/1"

__all__ = ["ExportError", "HEADER", "export_runs", "read_runs", "sidecar_path", "run_metadata", "json_clean"]


def sidecar_path(csv_path: str | os.PathLike) -> Path:
    """`timings.csv` → `timings.json`."""
    return Path(csv_path).with_suffix(".json")


@overload
def json_clean(value: dict[str, JsonValue]) -> dict[str, JsonValue]: ...


@overload
def json_clean(value: JsonValue) -> JsonValue: ...


def json_clean(value: JsonValue) -> JsonValue:
    """JSON has no NaN: missing figures become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_clean(v) for v in value]
    return value


def run_metadata(result: RunResult) -> dict[str, JsonValue]:
    """A run as the sidecar describes it: config, resolved settings, summaries."""
    lanes = {}
    for name, lane in result.lanes.items():
        lanes[name] = {
            "device": lane.started.device if lane.started else None,
            "settings": lane.started.settings if lane.started else None,
            "started_at": lane.started.started_at if lane.started else None,
            "status": lane.status,
            "failure": lane.failure or None,
            "summary": lane.summary.as_dict() if lane.summary else None,
            "n_records": len(lane.records),
            "segments": [{"segment": seg.index, "widths": list(seg.started.widths),
                          "batch_size": seg.started.batch_size, "flops_per_batch": seg.started.flops_per_batch,
                          "first_step": seg.started.first_step, "started_at": seg.started.at,
                          "clock_at": seg.started.clock_at,
                          "ended_at": seg.ended.at if seg.ended else None,
                          "pauses": [[paused, resumed] for paused, resumed in seg.pauses],
                          "summary": seg.ended.summary.as_dict() if seg.ended else None} for seg in lane.segments],
        }
    return {"run_id": result.run_id, "config": result.config.to_dict(), "schedule": result.schedule,
            "started_at": result.started_at, "ended_at": result.ended_at, "lanes": lanes,
            "run_noise": dict(result.run_noise), "run_noise_from": result.run_noise_from}


def batches_text(results: Sequence[RunResult]) -> str:
    return csv_text(HEADER, (rec.row() for result in results for lane in result.lanes.values()
                             for rec in lane.records))


def run_json(result: RunResult) -> str:
    """One run's sidecar entry as one line of JSON (a finished run's never changes: callers may keep it)."""
    return json.dumps(json_clean(run_metadata(result)))


def sidecar_from_parts(run_texts: Sequence[str], host: Mapping[str, JsonValue],
                       extra: Mapping[str, JsonValue] | None = None) -> str:
    """The sidecar: one top-level entry per line and one run per line, so it reads well and builds fast."""
    head = {"format": FORMAT, "columns": list(HEADER), "host": host}
    parts = [f"  {json.dumps(key)}: {json.dumps(json_clean(value))}" for key, value in head.items()]
    parts.append('  "runs": [' + ",".join(f"\n    {text}" for text in run_texts) + ("\n  ]" if run_texts else "]"))
    parts += [f"  {json.dumps(key)}: {json.dumps(json_clean(value))}" for key, value in (extra or {}).items()]
    return "{\n" + ",\n".join(parts) + "\n}\n"


def sidecar_text(results: Sequence[RunResult], host: Mapping[str, JsonValue],
                 extra: Mapping[str, JsonValue] | None = None) -> str:
    return sidecar_from_parts([run_json(r) for r in results], host, extra)


def export_runs(csv_path: str | os.PathLike, results: Sequence[RunResult], host: Mapping[str, JsonValue],
                extra: Mapping[str, JsonValue] | None = None) -> tuple[Path, Path]:
    """Every record of `results` in `csv_path`, the metadata in its sidecar: both files or neither."""
    json_path = sidecar_path(csv_path)
    if Path(csv_path).resolve() == json_path.resolve():
        raise ExportError(f"cannot write {csv_path}: its JSON sidecar would be the same file; name it .csv")
    atomic_write_files([(csv_path, batches_text(results)), (json_path, sidecar_text(results, host, extra))])
    return Path(csv_path), json_path


def read_batches_csv(path: str | os.PathLike) -> list[BatchTiming]:
    """Records back from a per-batch CSV (a last line cut off by a crash is skipped)."""
    out = []
    with io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline="") as fh:  # never a fifo or a device
        try:
            for row in csv.DictReader(complete_lines(fh, name=os.fspath(path))):  # each line of bounded length
                out.append(BatchTiming.from_csv_row(row))
        except csv.Error as exc:
            raise ValueError(f"{os.fspath(path)} is not a readable CSV: {exc}") from None
    return out


def _summary(d: Mapping[str, JsonValue] | None) -> RunSummary | None:
    if not d:
        return None
    fields = RunSummary.__dataclass_fields__
    # As read back: RunSummary takes the figures as they were written (a damaged file raises, see read_runs).
    values: dict[str, Any] = {k: (math.nan if v is None and fields[k].type == "float" else v)
                              for k, v in d.items() if k in fields}
    return RunSummary(**values)


class _SegmentEntry(TypedDict):
    """A segment as the sidecar holds it (run_metadata writes it)."""

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


def _segment(run_id: str, lane: str, d: _SegmentEntry) -> Segment:
    started = SegmentStarted(run_id, lane, int(d["segment"]), tuple(d["widths"]), int(d["batch_size"]),
                             int(d["flops_per_batch"]), int(d["first_step"]), float(d["started_at"]),
                             float(d.get("clock_at") or 0.0))
    summary = _summary(d.get("summary"))
    ended_at = d.get("ended_at")
    ended = SegmentEnded(run_id, lane, started.segment, summary, float(ended_at)) \
        if summary is not None and ended_at is not None else None
    pauses = [(float(paused), None if resumed is None else float(resumed))
              for paused, resumed in d.get("pauses") or [] if paused is not None]
    return Segment(started, ended, pauses)


def read_runs(csv_path: str | os.PathLike) -> list[RunResult]:
    """The runs of a per-batch CSV and its sidecar, as the engine made them.

    Raises OSError or ValueError (KeyError, TypeError included) on a damaged or foreign file.
    A lane that had not ended when the file was written reads as stopped.
    """
    meta: Any = parse_json(read_text_bounded(sidecar_path(csv_path)), "a sidecar")
    if not isinstance(meta, dict):
        raise ValueError(f"{sidecar_path(csv_path)} is not a Crossover sidecar (not a JSON object)")
    if meta.get("format") != FORMAT:
        raise ValueError(f"{sidecar_path(csv_path)} is not a Crossover sidecar ({FORMAT})")
    return sidecar_runs(meta, read_batches_csv(csv_path), strict=True)


def sidecar_runs(sidecar: Mapping[str, JsonValue], records: Sequence[BatchTiming] = (),
                 strict: bool = False) -> list[RunResult]:
    """The runs a sidecar records (a run's, or a sweep's points'), as the engine made them, with `records`: the one
    reader of a sidecar's "runs" (run_json writes them), for the files, the report and its commands alike.
    `strict`: every key a writer always writes must be there (a KeyError or TypeError the callers turn into a
    sentence); else a run written by hand (a test's, an older tool's) is first given the defaults of what it lacks
    (_filled), and read the same way."""
    meta: Any = sidecar  # read by key below: a wrong shape raises, and the callers say so
    runs = []
    for run in meta["runs"] if strict else [_filled(run) for run in meta.get("runs") or []]:
        run_id = run["run_id"]
        lanes: dict[str, LaneResult] = {}
        for name, info in run["lanes"].items():
            lane = LaneResult(name, records=[r for r in records if r.run_id == run_id and r.lane == name],
                              summary=_summary(info.get("summary")), failure=info.get("failure") or "",
                              stopped=info.get("status") == Status.CANCELLED and not info.get("summary"))
            if lane.summary is None and not lane.failure:
                lane.stopped = True
                lane.failure = "interrupted: the app was closed or crashed during the run"
            if info.get("device") is not None:
                lane.started = RunStarted(run_id, name, info["device"], info.get("settings") or {},
                                          info.get("started_at") or "")
            lane.segments = [_segment(run_id, name, seg) for seg in info.get("segments") or []]
            lanes[name] = lane
        noise = run.get("run_noise") or {}
        runs.append(RunResult(run_id, RunConfig.from_dict(run["config"]), run["schedule"], run["started_at"],
                              lanes, run.get("ended_at") or "",
                              {str(k): float(v) for k, v in noise.items()
                               if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 5},
                              str(run.get("run_noise_from") or "")))
    return runs


def _filled(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run as a hand-written sidecar may give it, with what a writer always writes filled in: no id, no start
    time, one lane after another, the defaults of a config, and each segment's widths, batch size and summary as
    given (a summary with its status alone, {"status": "switched"}, is still that status)."""
    run_id = str(run.get("run_id") or "")

    def segment(lane: str, d: Mapping[str, Any]) -> dict[str, Any]:
        full = {"segment": 0, "widths": [], "batch_size": 0, "flops_per_batch": 0, "first_step": 0,
                "started_at": 0.0, "ended_at": 0.0, "summary": None, **d}
        if full["summary"] is not None:
            full["summary"] = {"run_id": run_id, "lane": lane, "device": "", **full["summary"]}
        return full

    lanes = {name: {**(info or {}), "segments": [segment(name, d) for d in (info or {}).get("segments") or []]}
             for name, info in (run.get("lanes") or {}).items()}
    return {**run, "run_id": run_id, "schedule": run.get("schedule") or Schedule.SEQUENTIAL.value,
            "started_at": str(run.get("started_at") or ""), "lanes": lanes,
            "config": {"model": {}, "train": {}, **(run.get("config") or {})}}
