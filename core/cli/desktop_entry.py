"""Crossover in a Linux desktop's launcher: `crossover --install-desktop` writes a desktop entry and the icon
into the user's data folder (freedesktop.org's layout); `crossover --uninstall-desktop` removes both."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..files.atomic import atomic_write_files
from ..paths import PACKAGE_DIR, resource_dir

# Reverse-DNS: the entry's file name, the icon's theme name and Qt's desktopFileName, so a dock or a
# Wayland compositor matches the running window to its entry and icon.
APP_ID = "io.github.crossover_lab.Crossover"
GUI_SCRIPT = "crossover-window"  # pyproject.toml's gui-script: the window only (no console window on Windows)
OPTIONS = ("--install-desktop", "--uninstall-desktop")
# The Desktop Entry spec's "Exec key": an argument holding one of these is quoted, and inside the quotes
# these four take a backslash.
_RESERVED = set(" \t\"'\\><~|&;$*?#()`")
_ESCAPED_IN_QUOTES = set('"`$\\')


class DesktopEntryError(ValueError):
    """The launcher command cannot be written into a desktop entry (a path with a line break)."""


@dataclass(frozen=True)
class DesktopFiles:
    """Where one user's entry and icon go."""

    entry: Path
    icon: Path


def data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share: where a user's launcher looks for entries and icons."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def desktop_files(home: Path | None = None) -> DesktopFiles:
    home = home or data_home()
    return DesktopFiles(home / "applications" / f"{APP_ID}.desktop",
                        home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg")


def launcher_command() -> list[str]:
    """What the entry runs: the installed gui-script by its absolute path (a launcher does not read the
    shell's PATH, which may lack ~/.local/bin), found beside the `crossover` that was run (pipx's link,
    then the environment it points into) or among this Python's scripts; else, in a plain checkout,
    this Python running main.py."""
    folders = []
    if sys.argv and sys.argv[0]:
        ran = Path(sys.argv[0])
        folders += [ran.absolute().parent, ran.resolve().parent]
    folders.append(Path(sysconfig.get_path("scripts")))
    for folder in folders:
        script = folder / GUI_SCRIPT
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    return [sys.executable, str(PACKAGE_DIR / "main.py")]


def exec_arg(arg: str) -> str:
    """One argument as the Exec key wants it: quoted where needed, % doubled (it starts a field code),
    then every backslash doubled again, as in any string value of a desktop entry."""
    if any(c in arg for c in "\n\r"):
        raise DesktopEntryError(f"{arg!r}: a desktop entry cannot run a path with a line break in it")
    arg = arg.replace("%", "%%")
    if not arg or any(c in _RESERVED for c in arg):
        arg = '"' + "".join("\\" + c if c in _ESCAPED_IN_QUOTES else c for c in arg) + '"'
    return arg.replace("\\", "\\\\")


def entry_text(command: Sequence[str]) -> str:
    """The desktop entry (a launcher's menu item) that runs `command`."""
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",  # of the Desktop Entry spec: what desktop-file-validate 0.26 (Debian 12, 13) knows
        "Name=Crossover",
        "GenericName=GPU and CPU training lab",
        "Comment=See where a GPU starts to train a neural network faster than a CPU",
        f"Exec={' '.join(exec_arg(a) for a in command)}",
        # A launcher hides the entry once this is gone (the app uninstalled without --uninstall-desktop).
        f"TryExec={command[0].replace(chr(92), chr(92) * 2)}",
        f"Icon={APP_ID}",
        "Terminal=false",
        # Both are main categories (validators hint so): the entry shows under Science and under Education.
        "Categories=Science;Education;",
        "Keywords=GPU;CPU;Keras;TensorFlow;benchmark;neural network;",
        "StartupNotify=true",
        "StartupWMClass=Crossover",  # Qt's X11 window class: the application name
    ]
    return "\n".join(lines) + "\n"


def install(command: Sequence[str] | None = None, home: Path | None = None) -> DesktopFiles:
    """Write the entry and the icon (both or neither: they are written as one); raises OSError."""
    files = desktop_files(home)
    text = entry_text(list(command or launcher_command()))
    svg = (resource_dir() / "crossover.svg").read_text(encoding="utf-8")
    for folder in (files.entry.parent, files.icon.parent):
        folder.mkdir(parents=True, exist_ok=True)
    atomic_write_files([(files.icon, svg), (files.entry, text)])
    _refresh_icon_cache(files.icon.parents[2])
    return files


def _refresh_icon_cache(theme: Path) -> None:
    """GTK reads a theme folder's icon-theme.cache instead of the folder: a stale one hides a new icon."""
    tool = shutil.which("gtk-update-icon-cache")
    if tool and (theme / "icon-theme.cache").exists():
        subprocess.run([tool, "--quiet", "--force", "--ignore-theme-index", str(theme)], check=False)


def uninstall(home: Path | None = None) -> list[Path]:
    """Remove the entry and the icon; returns those that were there."""
    removed = []
    files = desktop_files(home)
    for path in (files.entry, files.icon):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    if removed:
        _refresh_icon_cache(files.icon.parents[2])
    return removed


def main(argv: Sequence[str]) -> int:
    """`crossover --install-desktop` or `crossover --uninstall-desktop`: 0 done, 1 could not write, 2 bad input."""
    if len(argv) != 1 or argv[0] not in OPTIONS:
        print(f"usage: crossover {' | '.join(OPTIONS)} (alone)", file=sys.stderr)
        return 2
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        print("crossover: desktop entries are for Linux and BSD desktops. Start the window with "
              f"{GUI_SCRIPT} (or pin it to the taskbar or the Dock once it runs).", file=sys.stderr)
        return 2
    try:
        if argv[0] == "--install-desktop":
            command = launcher_command()
            files = install(command)
            print(f"Installed Crossover in your desktop's launcher (Science, Education):\n"
                  f"  entry  {files.entry}\n  icon   {files.icon}\n  runs   {' '.join(command)}\n"
                  "Remove both with: crossover --uninstall-desktop")
        else:
            removed = uninstall()
            print("Removed " + " and ".join(map(str, removed)) if removed
                  else f"Nothing to remove: no Crossover desktop entry or icon under {data_home()}.")
    except (OSError, DesktopEntryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
