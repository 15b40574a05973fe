"""Crossover: `python main.py` opens the window; `python main.py devices|run|sweep|analyze|anatomy …` works headless.

Installed, `crossover` is main() and `crossover-window` is window(); `crossover --install-desktop` puts the
window in the desktop's launcher.
"""
from __future__ import annotations

import os
import sys

try:
    import crossover_lab  # noqa: F401  (installed, or editable: `pip install -e .` maps it to this folder)
except ImportError:
    # A plain checkout run as `python main.py` without installing: this folder is the package. Lane
    # processes (spawned) run this file first too, so they find it the same way.
    import types

    _package = types.ModuleType("crossover_lab")
    _package.__path__ = [os.path.dirname(os.path.abspath(__file__))]
    sys.modules["crossover_lab"] = _package

CLI_COMMANDS = {"devices", "run", "sweep", "analyze", "anatomy"}
DESKTOP_OPTIONS = {"--install-desktop", "--uninstall-desktop"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (argv[0] in CLI_COMMANDS or argv[0] in ("-h", "--help")):
        from crossover_lab.core.cli import main as cli_main

        return cli_main(argv)
    if argv and argv[0] in DESKTOP_OPTIONS:
        from crossover_lab.core.desktop_entry import main as desktop_main

        return desktop_main(argv)
    return window(argv)


def window(argv: list[str] | None = None) -> int:
    """The window alone: the gui-script `crossover-window`, which the desktop entry runs. On Windows it
    starts without a console window, so it takes no command-line commands."""
    from crossover_lab.gui.app import main as gui_main

    return gui_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
