"""Where Crossover keeps its own files: settings, lane logs and autosaves, under one folder."""
from __future__ import annotations

import os
from pathlib import Path


def crossover_home() -> Path:
    """$CROSSOVER_HOME, else $XDG_DATA_HOME/crossover, else ~/.local/share/crossover."""
    explicit = os.environ.get("CROSSOVER_HOME")
    if explicit:
        return Path(explicit)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "crossover"


def log_dir() -> Path:
    """Lane processes write their framework logs and tracebacks here."""
    return crossover_home() / "logs"


def lane_log_path(lane: str) -> Path | None:
    """Where a lane writes its framework logs; None (the terminal) when the folder cannot be written."""
    if log_dir_problem():
        return None
    return log_dir() / f"lane-{lane.replace(':', '-').replace('/', '-')}.log"


def log_dir_problem() -> str:
    """Why lanes cannot log to log_dir() (a sentence), or "" when they can."""
    folder = log_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"lane logs go to the terminal: cannot create {folder} ({exc.strerror or exc})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"lane logs go to the terminal: {folder} is not writable"
    return ""


def autosave_dir() -> Path:
    """Runs in progress and finished, one CSV + JSON pair each; sweeps under sweeps/."""
    return crossover_home() / "autosave"


def settings_path() -> Path:
    return crossover_home() / "settings.ini"
