"""Crossover: `python main.py` opens the window; `python main.py devices|run|sweep|analyze …` works headless."""
from __future__ import annotations

import sys

CLI_COMMANDS = {"devices", "run", "sweep", "analyze"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (argv[0] in CLI_COMMANDS or argv[0] in ("-h", "--help")):
        from core.cli import main as cli_main

        return cli_main(argv)
    from gui.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
