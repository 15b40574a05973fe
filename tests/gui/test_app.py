"""The application: `python main.py --screenshot`, its arguments, About, shortcuts and start-up time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gui_fixtures import held_discovery
from helpers import MAIN, ROOT, cli, wall_limit
from PySide6.QtGui import QImage, QKeySequence

from crossover_lab.core.engine.devices import host_info
from crossover_lab.core.files.run_files import read_batches_csv
from crossover_lab.gui.window.about import about_text

def run_main(*args: str, home: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return cli(*args, timeout=timeout, env={"CROSSOVER_HOME": home, "QT_QPA_PLATFORM": "offscreen"})


@pytest.mark.lanes
def test_screenshot_mode_saves_the_window_and_exits(gui_home, tmp_path):
    path = tmp_path / "window.png"
    out = run_main("--screenshot", str(path), "--after", "0.5", home=gui_home)
    assert out.returncode == 0, out.stderr
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1440, 900)
    # It says when the window was shown, from the process's start: how fast is benchmarks/window_start.py's to say.
    shown = float(out.stderr.split("window shown ")[1].split(" s")[0])
    assert 0 < shown < wall_limit(60), out.stderr


@pytest.mark.lanes
def test_bad_arguments_get_a_sentence_and_exit_code_2(gui_home, tmp_path):
    out = run_main("--screenshot", str(tmp_path / "missing" / "x.png"), home=gui_home)
    assert out.returncode == 2 and "does not exist" in out.stderr
    out = run_main("--after", "-1", home=gui_home)
    assert out.returncode == 2 and "choose 0 seconds or more" in out.stderr
    out = run_main("--ramp", "16,99999", home=gui_home)
    assert out.returncode == 2 and "--ramp 16,99999: sweep width 99999: widths must be 1-16384" in out.stderr
    out = run_main("--ramp", "16,256", "--run", home=gui_home)
    assert out.returncode == 2 and "not allowed with argument" in out.stderr


@pytest.mark.lanes
def test_screenshot_mid_ramp(gui_home, tmp_path):
    path = tmp_path / "ramp.png"
    out = run_main("--screenshot", str(path), "--ramp", "16,256,2048", "--after", "20", home=gui_home, timeout=150)
    assert out.returncode == 0, out.stderr[-2000:]
    assert QImage(str(path)).size().toTuple() == (1440, 900)
    saved = list((Path(gui_home) / "autosave").glob("*.csv"))
    assert len(saved) == 1, "the ramp's records were not autosaved"
    run = json.loads(saved[0].with_suffix(".json").read_text())["runs"][0]
    # A ramp, not a run of the last configuration (784-128-10): its first width, a point's budget, paced.
    assert run["config"]["model"]["widths"] == [16] and run["config"]["train"]["max_steps"] is not None
    # On a busy machine a lane may still be importing its framework after 20 s: those that started are paced.
    started = [lane for lane in run["lanes"].values() if lane["settings"]]
    assert all(lane["settings"]["paced"] for lane in started)
    widths = {r.widths for r in read_batches_csv(saved[0])}
    assert widths <= {(16,), (256,), (2048,)} and (not started or (16,) in widths)  # how far it got: the load's say


def test_ramp_waits_for_the_lanes_then_starts_on_them(qtbot, gui_home):
    # What --ramp does: while discovery may still change the default lanes, the ramp waits for it.
    from crossover_lab.gui.window.main_window import MainWindow

    found = threading.Event()
    window = MainWindow(discover_fn=held_discovery(found), prestart=False, offer_recovery=False)
    qtbot.addWidget(window)
    started = []
    window.controller.start_run = lambda config, specs, schedule, plan=(): started.append((specs, plan))
    window.desk.start_when_ready("16,256,2048")
    qtbot.wait(200)
    assert started == [] and window.controller.discovering
    found.set()
    qtbot.waitUntil(lambda: bool(started), timeout=10_000)
    specs, plan = started[0]
    assert [s.name for s in specs] == ["cpu", "cpu1"]
    assert [c.model.widths[0] for c in plan] == [16, 256, 2048]


def test_the_window_appears_while_the_lanes_are_still_probed(qtbot, gui_home):
    # How fast it appears is benchmarks/window_start.py's to measure; that it never waits for the probes is this.
    from crossover_lab.gui.window.main_window import MainWindow

    found = threading.Event()
    window = MainWindow(discover_fn=held_discovery(found), prestart=False, offer_recovery=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.controller.discovering  # shown, and the probes still going
    found.set()
    qtbot.waitUntil(lambda: not window.controller.discovering, timeout=30_000)


def test_shortcuts(make_window):
    window = make_window()
    a = window.actions
    assert [s.toString() for s in a.start.shortcuts()] == ["F5", "Ctrl+R"]
    assert a.stop.shortcut() == QKeySequence("Esc")
    assert a.quit.shortcut() == QKeySequence("Ctrl+Q")
    assert a.export_timings.shortcut() == QKeySequence("Ctrl+E")
    for action in (a.start, a.stop, a.export_timings, a.export_png, a.export_svg, a.clear_map, a.reset, a.quit,
                   a.about):
        assert action.toolTip() and action.toolTip() != action.text().replace("&", "")


def test_about_names_versions_devices_and_folders(make_window):
    window = make_window()
    host = host_info()
    text = about_text(host, window.controller.options)
    for expected in (host["python"], host["cpu"], "autosave", "gpu0", "GPU extra".lower()):
        assert expected.lower() in text.lower()


@pytest.mark.lanes  # a Python process of its own: a test of realness
def test_the_gui_process_never_imports_a_framework():
    code = ("import sys; from PySide6.QtWidgets import QApplication; app = QApplication([]); "
            "import crossover_lab.gui.window.main_window, crossover_lab.gui.app; "
            "bad = [m for m in ('tensorflow', 'keras', 'jax', 'torch') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True, capture_output=True, timeout=60,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.lanes  # a Python process of its own: a test of realness
def test_no_display_gives_a_sentence_not_an_abort():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    r = subprocess.run([sys.executable, str(MAIN)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2
    assert "no display here" in r.stderr and "python main.py devices | run | sweep | analyze" in r.stderr


@pytest.mark.lanes  # the window as a process of its own
def test_an_opening_card_shows_before_the_plots_library_loads_and_closes_with_the_window(gui_home):
    """Issue 55: something on the screen within a second of launch. The card is painted before pyqtgraph is
    imported (seconds on a busy machine) and closed once the window is shown."""
    code = ("import sys; from crossover_lab.gui import app as gui_app\n"
            "from PySide6.QtCore import QTimer\n"
            "from PySide6.QtWidgets import QApplication\n"
            "seen = {}\n"
            "real = gui_app.opening_card\n"
            "def look():\n"
            "    windows = [x for x in QApplication.topLevelWidgets() if type(x).__name__ == 'MainWindow']\n"
            "    if not (windows and windows[0].isVisible()):\n"
            "        QTimer.singleShot(200, look); return\n"
            "    QApplication.processEvents()\n"
            "    print('CARD', seen['card'], 'CLOSED', not seen['c'].isVisible(), 'WINDOW', True, flush=True)\n"
            "    QApplication.closeAllWindows()\n"
            "def card():\n"
            "    c = real(); seen['card'] = c.isVisible() and 'pyqtgraph' not in sys.modules; seen['c'] = c\n"
            "    QTimer.singleShot(0, look)\n"
            "    return c\n"
            "gui_app.opening_card = card\n"
            "sys.exit(gui_app.main([]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True, capture_output=True,
                         timeout=wall_limit(90), env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                                                      "CROSSOVER_HOME": gui_home, "CROSSOVER_NO_RESTORE_PROMPT": "1"})
    assert "CARD True CLOSED True WINDOW True" in out.stdout, out.stdout + out.stderr[-2000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the boot clock of /proc is Linux's")
def test_the_process_age_the_window_prints_is_the_launchers_clock():
    # "window shown X s after the process started" is X by the clock of whoever launched it: a fresh process's age,
    # read as it starts, is no more than the seconds its launcher saw pass (psutil's whole-second boot time made it
    # up to 1 s longer: 0.6 s on one boot), and not much less.
    code = "from crossover_lab.gui.app import seconds_since_process_start as age; print(age())"
    for _ in range(3):
        launched = time.time()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
        seen = time.time() - launched
        age = float(out.stdout)
        assert 0 < age <= seen + 0.02, (age, seen)  # /proc/uptime and a tick are 10 ms steps
        assert age > seen - 0.5, (age, seen)
