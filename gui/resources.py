"""Where the window's plain-file resources (SVG icons, the style sheet) live, and loading them."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCE_DIR = Path(__file__).resolve().parent.parent / "resources"


def resource_path(name: str) -> Path:
    """The path of a file in resources/ (it need not exist: callers decide what a missing file means)."""
    return RESOURCE_DIR / name


def icon(name: str) -> QIcon:
    """An icon from resources/<name>.svg; an empty icon where the file is missing."""
    path = resource_path(f"{name}.svg")
    return QIcon(str(path)) if path.exists() else QIcon()


def style_sheet() -> str:
    """The application style sheet (resources/style.qss), or "" where there is none."""
    path = resource_path("style.qss")
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""
