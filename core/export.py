"""Per-batch CSV and its JSON sidecar, written atomically; reading them back."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

from crossover_lab.core.records import CSV_COLUMNS, CSV_EXTRA_COLUMNS, BatchTiming

HEADER = CSV_COLUMNS + CSV_EXTRA_COLUMNS


class ExportError(OSError):
    """The file could not be written; nothing partial was left and nothing in memory was lost."""


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write to a temporary file beside `path`, then rename it over: readers never see half a file."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc} (is the folder there and writable?)") from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; an export is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def sidecar_path(csv_path: str | os.PathLike) -> Path:
    """`timings.csv` → `timings.json`."""
    return Path(csv_path).with_suffix(".json")


def _clean(value: Any) -> Any:
    """JSON has no NaN: missing figures become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def run_metadata(result: Any) -> dict[str, Any]:
    """A core.session.RunResult as the sidecar describes it: config, resolved settings, summaries."""
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
        }
    return {"run_id": result.run_id, "config": result.config.to_dict(), "schedule": result.schedule,
            "started_at": result.started_at, "ended_at": result.ended_at, "lanes": lanes}


def export_runs(csv_path: str | os.PathLike, results: Sequence[Any], host: dict[str, Any],
                extra: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """Write every record of `results` to `csv_path` and the metadata to its sidecar; both atomic."""
    rows = (rec.row() for result in results for lane in result.lanes.values() for rec in lane.records)
    text = csv_text(HEADER, rows)
    meta = {"format": "crossover-batches/1", "columns": list(HEADER), "host": host,
            "runs": [run_metadata(r) for r in results], **(extra or {})}
    json_path = sidecar_path(csv_path)
    atomic_write_text(csv_path, text)
    atomic_write_text(json_path, json.dumps(_clean(meta), indent=2, sort_keys=False) + "\n")
    return Path(csv_path), json_path


def read_batches_csv(path: str | os.PathLike) -> list[BatchTiming]:
    """Records back from a per-batch CSV written by export_runs."""
    out = []
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            out.append(BatchTiming(
                run_id=row["run_id"], lane=row["lane"], device=row["device"], epoch=int(row["epoch"]),
                batch=int(row["batch"]), step=int(row["step"]), start_s=float(row["start_s"]),
                ms=float(row["ms"]), samples=int(row["samples"]), warmup=row["warmup"] == "1",
                loss=float(row["loss"]), batches=int(row.get("batches") or 1),
                backend=row.get("backend") or "tensorflow"))
    return out
