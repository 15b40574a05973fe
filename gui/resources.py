"""Loading the window's plain-file resources (SVG icons, style sheets) from the package's resources/."""
from __future__ import annotations

import warnings
from pathlib import Path

from PySide6.QtGui import QIcon

from ..core.paths import resource_dir


class ResourceMissing(UserWarning):
    """A file the window needs is not where it was installed: the window opens without it."""


def resource_path(name: str) -> Path:
    """The path of a file in resources/ (it need not exist: callers decide what a missing file means)."""
    return resource_dir() / name


def _missing(path: Path) -> None:
    # Never a silent blank: the user reads this on stderr, and the tests turn it into an error
    # (pyproject.toml's filterwarnings), so a wheel without its resources cannot pass them.
    warnings.warn(f"Crossover resource missing: {path} (the installation is incomplete: reinstall Crossover)",
                  ResourceMissing, stacklevel=3)


def icon(name: str) -> QIcon:
    """The icon resources/<name>.svg (scalable: crisp at any screen scale); empty, with a warning, if missing."""
    path = resource_path(f"{name}.svg")
    if not path.is_file():
        _missing(path)
        return QIcon()
    return QIcon(str(path))


def style_sheet(dark: bool = False) -> str:
    """The application style sheet: style.qss, and for a dark scheme style-dark.qss's colours (and its visible
    check boxes) after it."""
    parts = []
    for name in ("style.qss", "style-dark.qss") if dark else ("style.qss",):
        try:
            # url() in a style sheet is read from the working folder: name the installed one.
            parts.append(resource_path(name).read_text(encoding="utf-8").replace(
                "@RESOURCES@", resource_dir().as_posix()))
        except OSError:
            _missing(resource_path(name))
    return "\n".join(parts)
