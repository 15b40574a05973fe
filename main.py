"""Crossover: `python main.py` opens the window; `python main.py devices|run|sweep|analyze|anatomy|rule|report|profile|predict|calibrate …` works headless.

Installed, `crossover` is main() and `crossover-window` is window(); `crossover --install-desktop` puts the
window in the desktop's launcher. In a checkout, `make run` installs the folder (editable) into .venv
first: everything inside imports relatively, and this file, the one script, finds it as `crossover_lab`.
"""
from __future__ import annotations

import sys

CLI_COMMANDS = {"devices", "run", "sweep", "analyze", "anatomy", "rule", "report", "profile", "predict", "calibrate"}
DESKTOP_OPTIONS = {"--install-desktop", "--uninstall-desktop"}
NOT_INSTALLED = ("Crossover is not installed in this Python ({python}). In a checkout, run `make run` (it makes "
                 ".venv and installs the folder into it), or `pip install -e .` in an environment of your own.")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (argv[0] in CLI_COMMANDS or argv[0] in ("-h", "--help")):
        from crossover_lab.core.cli.main import main as cli_main

        return cli_main(argv)
    if argv and argv[0] in DESKTOP_OPTIONS:
        from crossover_lab.core.cli.desktop_entry import main as desktop_main

        return desktop_main(argv)
    return window(argv)


def window(argv: list[str] | None = None) -> int:
    """The window alone: the gui-script `crossover-window`, which the desktop entry runs. On Windows it
    starts without a console window, so it takes no command-line commands."""
    from crossover_lab.gui.app import main as gui_main

    return gui_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    try:
        import crossover_lab  # noqa: F401  (installed, or this folder through `pip install -e .`)
    except ImportError:
        print(NOT_INSTALLED.format(python=sys.executable), file=sys.stderr)
        sys.exit(2)
    sys.exit(main())
