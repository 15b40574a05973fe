"""The per-batch CSV and its JSON sidecar: written together and atomically, and read back as runs."""
from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..json_data import JsonValue, json_clean, parse_json
from .atomic import ExportError, atomic_write_files, complete_lines, csv_text, plain_row
from .inputs import RowsReading, open_regular, read_text_bounded
from ..records import CSV_COLUMNS, CSV_EXTRA_COLUMNS, BatchTiming
from ..results import RunResult

HEADER = CSV_COLUMNS + CSV_EXTRA_COLUMNS
FORMAT = "crossover-batches/1"
# What one record can hold, as a lane measures it: a longer time or a larger count is a damaged file's.
MAX_PLAUSIBLE_MS = 86_400_000.0  # a day for one training step or call, or for a request's wait
MAX_PLAUSIBLE_RUN_S = 366 * 86_400.0  # a record's start, in seconds since its run began
MAX_PLAUSIBLE_COUNT = 10**9  # an epoch, step, sample or request count of one record
_COUNTS = ("epoch", "batch", "step", "samples", "batches", "batch_size", "segment", "requests", "queued", "backlog")

__all__ = ["ExportError", "HEADER", "export_runs", "read_runs", "sidecar_path"]


def sidecar_path(csv_path: str | os.PathLike) -> Path:
    """`timings.csv` → `timings.json`."""
    return Path(csv_path).with_suffix(".json")


def batches_text(results: Sequence[RunResult]) -> str:
    return csv_text(HEADER, (rec.row() for result in results for lane in result.lanes.values()
                             for rec in lane.records))


def run_json(result: RunResult) -> str:
    """One run's sidecar entry as one line of JSON (a finished run's never changes: callers may keep it)."""
    return json.dumps(json_clean(result.to_json()))


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


def record_problem(rec: BatchTiming) -> str:
    """Why `rec` holds what no lane measures, as the end of "3 rows whose …", or "" when it holds what one can: a
    time that is not finite, negative or longer than a day, a count below zero or beyond any run's."""
    if not (math.isfinite(rec.ms) and 0 <= rec.ms <= MAX_PLAUSIBLE_MS):
        return "ms is not a time from 0 to a day"
    if not (math.isfinite(rec.start_s) and 0 <= rec.start_s <= MAX_PLAUSIBLE_RUN_S):
        return "start_s is not a time from 0 to a year since the run began"
    if not all(math.isfinite(w) and 0 <= w <= MAX_PLAUSIBLE_MS for w in rec.waits_ms):
        return "waits_ms holds a wait that is not a time from 0 to a day"
    for name in _COUNTS:
        if not 0 <= getattr(rec, name) <= MAX_PLAUSIBLE_COUNT:
            return f"{name} is not a count from 0 to {MAX_PLAUSIBLE_COUNT:,}"
    if rec.requests != len(rec.waits_ms) or rec.queued > rec.requests:
        return "requests is not the number of waits_ms (with at most as many queued)"
    return ""


def read_batches_csv(path: str | os.PathLike, reading: RowsReading | None = None) -> list[BatchTiming]:
    """Records back from a per-batch CSV (a last line cut off by a crash is skipped). A row that is damaged, or
    holds what no lane measures (record_problem), is dropped and counted in `reading` by what is wrong with it, as
    the sweep reader drops its rows; a file that is not a per-batch CSV raises ValueError."""
    reading = reading if reading is not None else RowsReading(os.fspath(path))
    out = []
    with io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline="") as fh:  # never a fifo or a device
        try:
            reader = csv.DictReader(complete_lines(fh, name=os.fspath(path)))  # each line of bounded length
            missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise ValueError(f"{os.fspath(path)} is not a per-batch CSV: it has no {', '.join(missing)} column")
            for row in reader:
                reading.lines += 1
                try:
                    rec = BatchTiming.from_csv_row(plain_row(row))
                except ValueError as exc:
                    reading.dropped[str(exc)] += 1
                    continue
                problem = record_problem(rec)
                if problem:
                    reading.dropped[problem] += 1
                else:
                    out.append(rec)
        except csv.Error as exc:
            raise ValueError(f"{os.fspath(path)} is not a readable CSV: {exc}") from None
    return out


def read_runs(csv_path: str | os.PathLike, reading: RowsReading | None = None) -> list[RunResult]:
    """The runs of a per-batch CSV and its sidecar, as the engine made them.

    Raises OSError or ValueError (KeyError, TypeError included) on a damaged or foreign file.
    A lane that had not ended when the file was written reads as stopped.
    """
    return read_run_file(csv_path, reading)[1]


def read_run_file(csv_path: str | os.PathLike,
                  reading: RowsReading | None = None) -> tuple[dict[str, JsonValue], list[RunResult]]:
    """The sidecar of a per-batch CSV as read (its host, what a sweep adds) and the runs it records, the file read
    once; raises as read_runs does."""
    meta: Any = parse_json(read_text_bounded(sidecar_path(csv_path)), "a sidecar")
    if not isinstance(meta, dict):
        raise ValueError(f"{sidecar_path(csv_path)} is not a Crossover sidecar (not a JSON object)")
    if meta.get("format") != FORMAT:
        raise ValueError(f"{sidecar_path(csv_path)} is not a Crossover sidecar ({FORMAT})")
    return meta, sidecar_runs(meta, read_batches_csv(csv_path, reading), strict=True)


def sidecar_runs(sidecar: Mapping[str, JsonValue], records: Sequence[BatchTiming] = (),
                 strict: bool = False) -> list[RunResult]:
    """The runs a sidecar records (a run's, or a sweep's points'), with `records`: each read by RunResult.from_json,
    the one reader of what RunResult.to_json writes. `strict`: every key a writer always writes must be there."""
    meta: Any = sidecar  # read by key: a wrong shape raises, and the callers say so
    return [RunResult.from_json(run, records, strict) for run in (meta["runs"] if strict else meta.get("runs") or [])]
