"""The light and dark pictures in docs/images: the real window, driven as a user would, grabbed to PNG.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/images/scheme_pictures.py docs/images

Three short runs (cpu against cpu1, synthetic data) fill the crossover map and the history, and the Sweep
tab shows the H200 sweep in docs/results; each view is grabbed in View > Light, then in View > Dark.
Settings and autosaves go to a temporary CROSSOVER_HOME. With QT_SCALE_FACTOR=2 (and a screen twice as
large) the same script checks high-DPI drawing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-pictures-"))
import main  # noqa: E402,F401  (makes crossover_lab importable from a plain checkout)

from PySide6.QtWidgets import QApplication  # noqa: E402

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.cli.desktop_entry import APP_ID
from crossover_lab.gui.window.main_window import MainWindow
from crossover_lab.gui.resources import icon

WIDTHS = (64, 512, 2048)
SWEEP_CSV = ROOT / "docs" / "results" / "h200-2026-11-30" / "sweep-b128.csv"


def wait(app: QApplication, done, seconds: float) -> None:
    """Let the window work until done() (or for `seconds` when done is None)."""
    deadline = time.monotonic() + seconds
    while not (done and done()) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    if done and not done():
        raise SystemExit(f"gave up after {seconds} s")


def main(folder: str) -> int:
    folder = os.path.abspath(folder)
    os.chdir(ROOT)
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Crossover")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(icon("crossover"))
    window = MainWindow(offer_recovery=False)
    window.resize(1440, 900)
    window.show()
    wait(app, lambda: not window.controller.discovering, 120)
    window.side.lanes_panel.select(["cpu", "cpu1"])
    window.side.lanes_panel.set_schedule("sequential")
    for width in WIDTHS:
        config = RunConfig(ModelSpec((width, width)), TrainSpec(batch_size=128, samples=6000, data="synthetic"))
        window.side.model_panel.set_config(config)
        window.start_run()
        wait(app, lambda: window.controller.running, 30)
        wait(app, lambda: not window.controller.running, 300)
    window.sweep.open_csv(os.path.relpath(SWEEP_CSV))  # the tab's status line names it as given
    scale = os.environ.get("QT_SCALE_FACTOR", "1")
    for scheme in ("light", "dark"):
        window.theme.choose(scheme)
        for tab, name in ((window.compare, "window"), (window.sweep, "sweep")):
            window.tabs.setCurrentWidget(tab)
            wait(app, None, 1.0)  # the plots restyle once the palette has settled
            suffix = "" if scale == "1" else f"-x{scale}"
            path = Path(folder) / f"{name}-{scheme}{suffix}.png"
            window.grab().save(str(path), "PNG")
            print(f"wrote {path}")
    window.theme.choose("system")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
