"""The README's animated picture: a ramp on cpu and cpu1, the live plot and the map filling as it goes.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/images/ramp_animation.py docs/images/ramp.gif

The real window runs a ramp (synthetic data, lanes taking turns) and grabs the Compare tab every
FRAME_S seconds; ImageMagick's `convert` joins the frames into a looping GIF, scaled and reduced to a
palette so it stays under 3 MB. Settings and autosaves go to a temporary CROSSOVER_HOME.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-ramp-"))
import main  # noqa: E402,F401  (makes crossover_lab importable from a plain checkout)

from PySide6.QtWidgets import QApplication  # noqa: E402

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.gui.window.main_window import MainWindow

RAMP = "16,64,256,1024,2048"
FRAME_S = 0.8  # a frame this often; the GIF plays them at FRAME_DELAY (hundredths of a second) each
FRAME_DELAY = 40
WIDTH_PX = 960  # the GIF's width: readable in a README, small enough to load
MAX_BYTES = 3 * 2**20


def main(out: str) -> int:
    if shutil.which("convert") is None:
        raise SystemExit("ImageMagick's convert is needed to join the frames (apt-get install imagemagick)")
    out = os.path.abspath(out)
    os.chdir(ROOT)
    app = QApplication(sys.argv[:1])
    window = MainWindow(offer_recovery=False)
    window.resize(1440, 860)
    window.show()
    deadline = time.monotonic() + 120
    while window.controller.discovering and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    window.side.lanes_panel.select(["cpu", "cpu1"])
    window.side.lanes_panel.set_schedule("interleaved")
    window.side.model_panel.set_config(RunConfig(ModelSpec((16,)), TrainSpec(batch_size=128, data="synthetic")))
    frames = Path(tempfile.mkdtemp(prefix="crossover-frames-"))
    live = window.desk.start_ramp(RAMP)
    if live is None:
        raise SystemExit(f"the ramp did not start: {window.status.message()}")
    n, next_frame = 0, time.monotonic()
    while window.controller.running:
        app.processEvents()
        if time.monotonic() >= next_frame:
            window.compare.grab().save(str(frames / f"{n:04d}.png"))
            n, next_frame = n + 1, next_frame + FRAME_S
        time.sleep(0.02)
    for _ in range(5):  # the ended run: the map's firm points and the verdict, held a moment
        app.processEvents()
        window.compare.grab().save(str(frames / f"{n:04d}.png"))
        n += 1
    window.close()
    subprocess.run(["convert", "-delay", str(FRAME_DELAY), "-loop", "0", *sorted(map(str, frames.glob("*.png"))),
                    "-resize", f"{WIDTH_PX}x", "-colors", "48", "-layers", "Optimize", out], check=True)
    size = os.path.getsize(out)
    print(f"{out}: {n} frames, {size / 2**20:.1f} MB")
    return 0 if size <= MAX_BYTES else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/images/ramp.gif"))
