"""Autosaved runs: every run's records in `crossover_home()/autosave/`, written atomically, read back.

Each run is one pair of files in the engine's export format (core/export.py):
`<run_id>.csv` (per-batch records) and `<run_id>.json` (config, devices, summaries).
A run in progress is saved every few seconds and again when it ends, so a close or a
crash loses at most those seconds. At launch the window offers back whatever is there.
"""
from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

from crossover_lab.core.config import RunConfig
from crossover_lab.core.export import ExportError, export_runs, read_batches_csv, sidecar_path
from crossover_lab.core.lanes import crossover_home
from crossover_lab.core.records import RunStarted, RunSummary
from crossover_lab.core.session import LaneResult, RunResult


def autosave_dir() -> Path:
    """The documented folder: $CROSSOVER_HOME/autosave (default ~/.local/share/crossover/autosave)."""
    return Path(crossover_home()) / "autosave"


def _csv_path(run_id: str) -> Path:
    return autosave_dir() / f"{run_id}.csv"


def save_run(result: RunResult, host: dict[str, Any]) -> Path:
    """Write (or overwrite) one run's autosave; raises core.export.ExportError when it cannot."""
    autosave_dir().mkdir(parents=True, exist_ok=True)
    path, _ = export_runs(_csv_path(result.run_id), [result], host, extra={"autosave": True})
    return path


def snapshot(result: RunResult) -> RunResult:
    """A copy whose record lists no longer grow: what another thread may write out safely."""
    lanes = {name: LaneResult(name, lane.started, list(lane.records), lane.summary, lane.failure)
             for name, lane in result.lanes.items()}
    return RunResult(result.run_id, result.config, result.schedule, result.started_at, lanes, result.ended_at)


class BackgroundSaver:
    """Writes a run in progress from a plain thread, so a long run's CSV never stalls the window."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self.error = ""  # the last failure, for the window to show; cleared when read

    def save(self, result: RunResult, host: dict[str, Any]) -> bool:
        """Start writing a snapshot of `result`; False (and nothing done) while the last one is still writing."""
        if self._thread is not None and self._thread.is_alive():
            return False
        self._thread = threading.Thread(target=self._write, args=(snapshot(result), host),
                                        name="crossover-autosave", daemon=True)
        self._thread.start()
        return True

    def _write(self, result: RunResult, host: dict[str, Any]) -> None:
        try:
            save_run(result, host)
        except ExportError as exc:
            self.error = str(exc)

    def wait(self) -> None:
        """Let a write in progress finish (the final save must not be overwritten by an older one)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def delete_run(run_id: str) -> None:
    """Remove a run's autosave (missing files are fine: there is nothing left to lose)."""
    for path in (_csv_path(run_id), sidecar_path(_csv_path(run_id))):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def saved_run_ids() -> list[str]:
    """Run ids with both files present, oldest first (run ids begin with their date and time)."""
    folder = autosave_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.csv") if sidecar_path(p).exists())


def _summary(d: dict[str, Any] | None) -> RunSummary | None:
    if not d:
        return None
    fields = RunSummary.__dataclass_fields__
    return RunSummary(**{k: (math.nan if v is None and fields[k].type == "float" else v)
                         for k, v in d.items() if k in fields})


def load_run(run_id: str) -> RunResult:
    """A saved run back as the engine's RunResult; raises OSError or ValueError on a damaged file."""
    path = _csv_path(run_id)
    meta = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
    run = next(r for r in meta["runs"] if r["run_id"] == run_id)
    records = read_batches_csv(path)
    lanes: dict[str, LaneResult] = {}
    for name, info in run["lanes"].items():
        lane = LaneResult(name, records=[r for r in records if r.lane == name],
                          summary=_summary(info.get("summary")), failure=info.get("failure") or "")
        if lane.summary is None and not lane.failure:
            lane.failure = "interrupted: the window was closed or crashed during the run"
        if info.get("device") is not None:
            lane.started = RunStarted(run_id, name, info["device"], info.get("settings") or {},
                                      info.get("started_at") or "")
        lanes[name] = lane
    return RunResult(run_id, RunConfig.from_dict(run["config"]), run["schedule"], run["started_at"], lanes,
                     run.get("ended_at") or "")


def load_runs(run_ids: list[str]) -> tuple[list[RunResult], list[str]]:
    """The runs that could be read, and a sentence for each that could not."""
    runs, problems = [], []
    for run_id in run_ids:
        try:
            runs.append(load_run(run_id))
        except (OSError, ValueError, KeyError, StopIteration, TypeError) as exc:
            problems.append(f"{run_id} could not be read back ({type(exc).__name__}: {exc}); "
                            f"its files stay in {autosave_dir()}")
    return runs, problems


def describe_folder() -> str:
    return os.fspath(autosave_dir())
