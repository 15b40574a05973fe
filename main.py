"""Crossover: `python main.py` opens the window; `python main.py devices|run|sweep|analyze …` works headless."""
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

CLI_COMMANDS = {"devices", "run", "sweep", "analyze"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (argv[0] in CLI_COMMANDS or argv[0] in ("-h", "--help")):
        from crossover_lab.core.cli import main as cli_main

        return cli_main(argv)
    from crossover_lab.gui.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
