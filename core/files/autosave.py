"""Autosaved runs: each run's records in `autosave_dir()`, kept on disk while it runs, offered back at the next launch.

Each run is one pair of files in the engine's export format (core/files/run_files.py): `<run_id>.csv`
(per-batch records) and `<run_id>.json` (config, devices, summaries). The window writes them
with core/live_files.RunFiles while the run goes on, so a close or a crash loses at most the
last couple of seconds.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Mapping

from ..json_data import JsonValue
from .atomic import NAME_MAX, kind_of
from .run_files import export_runs, read_runs, sidecar_path
from ..paths import autosave_dir
from ..results import RunResult

__all__ = ["autosave_dir", "run_path", "save_run", "delete_run", "saved_run_ids", "load_run", "load_runs"]


def rescue_problem() -> str:
    """Why the autosave folder could not take a run's pair (a name of its path too long, a part of it that is not
    a folder), as a sentence without its end, or "" when it can (it need not exist yet)."""
    folder = autosave_dir()
    for part in (folder, *folder.parents):
        if len(os.fsencode(part.name)) > NAME_MAX:
            return f"the autosave folder {folder} cannot exist: the name {part.name[:40]}… is longer than " \
                   f"{NAME_MAX} bytes"
    for part in (folder, *folder.parents):
        try:
            mode = os.stat(part).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # made when it is needed, or a part above it is not a folder: said at that part
        except OSError as exc:
            return f"the autosave folder {folder} cannot be used ({exc.strerror or exc})"
        if not stat.S_ISDIR(mode):
            return f"the autosave folder {folder} cannot be made: {part} is {kind_of(mode)}, not a folder"
        break
    return ""


def run_path(run_id: str) -> Path:
    return autosave_dir() / f"{run_id}.csv"


def save_run(result: RunResult, host: Mapping[str, JsonValue]) -> Path:
    """Write a whole run there now (what cannot be written where the user asked goes here);
    raises core.files.ExportError when even this folder cannot be written."""
    autosave_dir().mkdir(parents=True, exist_ok=True)
    return export_runs(run_path(result.run_id), [result], host, extra={"autosave": True})[0]


def delete_run(run_id: str) -> None:
    """Remove a run's autosave (missing files are fine: there is nothing left to lose)."""
    for path in (run_path(run_id), sidecar_path(run_path(run_id))):
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


def load_run(run_id: str) -> RunResult:
    """A saved run back as the engine's RunResult; raises OSError or ValueError on a damaged file."""
    run = next((r for r in read_runs(run_path(run_id)) if r.run_id == run_id), None)
    if run is None:
        raise ValueError(f"{run_path(run_id)} does not hold run {run_id}")
    return run


def load_runs(run_ids: list[str]) -> tuple[list[RunResult], list[str]]:
    """The runs that could be read, and a sentence for each that could not."""
    runs, problems = [], []
    for run_id in run_ids:
        try:
            runs.append(load_run(run_id))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{run_id} could not be read back ({type(exc).__name__}: {exc}); "
                            f"its files stay in {autosave_dir()}")
    return runs, problems
