"""The Why tab picture in docs/images: the real window measures the blog's small model on two lanes, grabbed to PNG.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/images/why_picture.py docs/images/why.png [LANES]

LANES defaults to cpu1,jax:cpu1 (one CPU thread under TensorFlow and under JAX: a machine without a GPU).
Settings and autosaves go to a temporary CROSSOVER_HOME; it prints the tab's sentences.
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
os.environ.setdefault("CROSSOVER_NO_RESTORE_PROMPT", "1")
import main  # noqa: E402,F401  (makes crossover_lab importable from a plain checkout)

from PySide6.QtWidgets import QApplication  # noqa: E402

from crossover_lab.core.presets import PRESETS
from crossover_lab.gui.window.main_window import MainWindow


def wait(app: QApplication, done, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not (done and done()) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)


def picture(path: str, lanes: list[str]) -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(prestart=False)
    window.resize(1440, 900)
    window.show()
    wait(app, lambda: not window.controller.discovering, 120)
    config = PRESETS["blog-small"].config
    window.side.model_panel.set_config(config.replace(data="synthetic", samples=6000))
    window.side.lanes_panel.select(lanes)
    window.tabs.setCurrentWidget(window.why)
    wait(app, None, 0.5)
    window.why.start()
    wait(app, lambda: not window.why.running, 600)
    wait(app, None, 0.5)
    window.grab().save(path, "PNG")
    print(window.why.words.text())
    window.close()


if __name__ == "__main__":
    picture(sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "cpu1,jax:cpu1").split(","))
