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


def lane_log_path(lane: str) -> Path:
    return log_dir() / f"lane-{lane.replace(':', '-').replace('/', '-')}.log"


def autosave_dir() -> Path:
    """Runs in progress and finished, one CSV + JSON pair each; sweeps under sweeps/."""
    return crossover_home() / "autosave"


def settings_path() -> Path:
    return crossover_home() / "settings.ini"
