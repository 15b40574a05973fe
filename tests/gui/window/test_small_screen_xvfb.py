"""A fresh window on a small screen (issue 55): under Xvfb at 1024×700 with a fresh HOME (the window's own size is
1440×900), and again at the next launch from its saved geometry, the window opens inside the screen, so the map, the History and the status bar
are on it. (Offscreen, Qt's screen is a fixed 800×600 of no real monitor: the window is left its own size there.)"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from helpers import ROOT

pytestmark = [pytest.mark.xvfb, pytest.mark.lanes]


def _geometry(display: str, timeout: float = 60) -> tuple[int, int, int, int]:
    """The Crossover window's x, y, width, height as the X server has it, once it is mapped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # "^Crossover ." is the window ("Crossover — …"), not the opening card ("Crossover") shown while it loads.
        out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Crossover .", "getwindowgeometry",
                              "--shell"], env={**os.environ, "DISPLAY": display}, capture_output=True, text=True)
        values = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
        if {"X", "Y", "WIDTH", "HEIGHT"} <= set(values):
            return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])
        time.sleep(0.5)
    raise AssertionError("the window never appeared")


def test_the_window_opens_inside_a_1024x700_screen(tmp_path):
    if shutil.which("Xvfb") is None or shutil.which("xdotool") is None:
        pytest.skip("needs Xvfb and xdotool (apt-get install xvfb xdotool)")
    n = next(n for n in range(200, 300) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    server = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1024x700x24", "-nolisten", "tcp", "-noreset"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            assert server.poll() is None, "Xvfb did not start"
            time.sleep(0.05)
        env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": f":{n}", "CROSSOVER_HOME": str(tmp_path / "home"),
               "KERAS_HOME": str(tmp_path / "keras"), "CROSSOVER_NO_RESTORE_PROMPT": "1"}
        for attempt in ("fresh", "from its saved geometry"):
            if attempt != "fresh":
                ini = tmp_path / "home" / "settings.ini"
                text = ini.read_text() if ini.exists() else ""
                assert "geometry" in text, text[:500]
            app = subprocess.Popen([sys.executable, str(ROOT / "main.py")], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                x, y, width, height = _geometry(f":{n}")
                assert x >= 0 and y >= 0 and x + width <= 1024 and y + height <= 700, (attempt, x, y, width, height)
            finally:
                app.terminate()
                # 128 + SIGTERM: the stop was heard (its handler is set before the window shows), the state saved
                assert app.wait(30) == 143, app.stderr.read()[-2000:] if app.stderr else ""
    finally:
        server.terminate()
        server.wait(10)
