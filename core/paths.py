"""Where Crossover's files live: the resources it ships, and its own settings, lane logs and autosaves."""
from __future__ import annotations

import os
import sys
from pathlib import Path

# The package's root: the repository folder in a checkout, site-packages/crossover_lab when installed.
PACKAGE_DIR = Path(__file__).resolve().parent.parent
# A checkout (an editable install too) has the project file beside the code; a wheel's copy has not. Help and
# install hints speak to each as it was started: `python main.py` and `pip install -e`, or `crossover` and pipx.
IN_CHECKOUT = (PACKAGE_DIR / "pyproject.toml").is_file()
PROG = "python main.py" if IN_CHECKOUT else "crossover"
# Every file in resources/ the app loads; a wheel that lacks one is broken (tests/test_packaging.py).
RESOURCES = ("crossover.svg", "start.svg", "stop.svg", "export.svg", "clear.svg", "delete.svg", "style.qss",
             "style-dark.qss", "tick-dark.svg")


GUIDE_PAGE = "window.md"  # the guide's page a window's Help opens first (its pages link to the others)


def guide_path() -> Path | None:
    """The guide's page on the window (docs/guide/, beside the code in a checkout), or None in an installed copy
    without the docs."""
    page = PACKAGE_DIR / "docs" / "guide" / GUIDE_PAGE
    return page if page.is_file() else None


def resource_dir() -> Path:
    """resources/ beside core/ and gui/: shipped inside the package by pyproject.toml's package-data."""
    return PACKAGE_DIR / "resources"


def missing_resources() -> list[str]:
    """The names in RESOURCES that are not in resource_dir(): an incomplete installation."""
    return [name for name in RESOURCES if not (resource_dir() / name).is_file()]


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


def compile_cache_dir() -> Path:
    """JAX lanes' persistent compilation cache: a program compiled once is read back by the next lane that
    builds the same model (File > Clear compiled cache empties it; CROSSOVER_NO_COMPILE_CACHE=1 turns it off)."""
    return crossover_home() / "compiled"


COMPILE_CACHE_MAX_BYTES = 512 * 1024 * 1024  # JAX evicts the least recently used programs beyond this


def received_models_dir() -> Path:
    """Where a remote lane's end keeps the model files an app sent it, by SHA-256 (core/engine/remote/model_files.py)."""
    return crossover_home() / "received-models"


def settings_path() -> Path:
    return crossover_home() / "settings.ini"


def install_hint(extra: str, package: str) -> str:
    """How to add `package` (the project's extra `extra`, "" for the base) to this copy of Crossover: in a
    checkout pip -e, in pipx's own environment for the app pipx inject, in any other environment pip."""
    if IN_CHECKOUT:
        return f"pip install -e '.[{extra}]'" if extra else "pip install -e ."
    prefix = Path(sys.prefix)
    if prefix.parent.name == "venvs" and "pipx" in str(prefix.parent.parent).lower():
        return f"pipx inject {prefix.name} {package}"
    return f"pip install {package}"
