"""The real window under Xvfb (X11, the xcb platform): run the app, grab it mid-run, check the picture; drag a
width slider mid-run with real X input (xdotool) and see the run go on with the new width; take the display away
mid-run and see the window end as its close button would.

Skipped where there is no Xvfb (apt-get install xvfb libxcb-icccm4 libxcb-keysyms1). The PNG is kept
in artifacts/ when that folder is writable: look at it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
from helpers import (ROOT, check_files, group_gone, load_words, record_counts, wait_for, wait_for_more_records,
                     wait_for_records, wall_limit)
from PySide6.QtGui import QImage

pytestmark = [pytest.mark.xvfb, pytest.mark.lanes]


def _free_display() -> int:
    for n in range(90, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            return n
    raise RuntimeError("no free X display number between :90 and :199")


@dataclass(frozen=True)
class XServer:
    """An Xvfb of a test's own: its display, and its process, which a test may end to take the display away."""

    display: str
    proc: subprocess.Popen


@pytest.fixture
def xvfb_display(xvfb_server: XServer) -> str:
    return xvfb_server.display


@pytest.fixture
def xvfb_server():
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb libxcb-icccm4 libxcb-keysyms1)")
    n = _free_display()
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"Xvfb :{n} did not start: {proc.stderr.read().decode(errors='replace')[-500:]}")
        time.sleep(0.05)
    yield XServer(f":{n}", proc)
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def distinct_colours(image: QImage, step: int = 3) -> int:
    return len({image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)})


def test_real_window_screenshot_mid_run(xvfb_display, tmp_path):
    path = tmp_path / "window.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": xvfb_display,
           "CROSSOVER_HOME": str(tmp_path / "home"), "KERAS_HOME": str(tmp_path / "keras")}
    started = time.monotonic()
    out = subprocess.run([sys.executable, "main.py", "--screenshot", str(path), "--run", "--after", "12"],
                         cwd=ROOT, env=env, text=True, capture_output=True, timeout=wall_limit(120))
    assert out.returncode == 0, out.stderr[-2000:]
    # The close after the picture did not hang: 12 s of run, then the start and the close, which stretch with the
    # load as every bound here does (48.8 s against a fixed 42 s at load 8 on a fresh clone's CI, issue 49 #7).
    took = time.monotonic() - started
    assert took < 12 + wall_limit(30), f"{took:.1f} s at {load_words()}"
    image = QImage(str(path))
    assert not image.isNull()
    assert (image.width(), image.height()) == (1440, 900)
    assert distinct_colours(image) > 200, "the window looks blank"
    assert "window shown " in out.stderr  # how soon: benchmarks/window_start.py
    autosaved = list((tmp_path / "home" / "autosave").glob("*.csv"))
    assert autosaved, "the run's records were not autosaved"
    artifacts = ROOT / "artifacts"
    if artifacts.is_dir() and os.access(artifacts, os.W_OK):
        shutil.copy(path, artifacts / "window-xvfb-test.png")


def _window(tmp_path: Path, display: str, stderr: int | IO[str] = subprocess.PIPE) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": display, "CROSSOVER_HOME": str(tmp_path / "home"),
           "KERAS_HOME": str(tmp_path / "keras"), "CROSSOVER_NO_RESTORE_PROMPT": "1"}
    return subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--run"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)


def _autosaved_records(tmp_path: Path, proc: subprocess.Popen, lanes: set[str], n: int,
                       timeout: float = 120) -> Path:
    deadline = time.monotonic() + timeout

    def found() -> list[Path]:
        return list((tmp_path / "home" / "autosave").glob("*.csv"))

    if not wait_for(lambda: found() or proc.poll() is not None, timeout, 0.2) or not found():
        pytest.fail(f"the window autosaved no run (exit code {proc.poll()})")
    wait_for_records(found()[0], lanes, n, max(1.0, deadline - time.monotonic()), proc)
    return found()[0]


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_the_window_killed_mid_run_keeps_the_records_and_leaves_no_lane(xvfb_display, tmp_path, sig, code):
    import psutil

    proc = _window(tmp_path, xvfb_display)
    saved = _autosaved_records(tmp_path, proc, {"cpu", "cpu1"}, 30)
    lanes = [c for c in psutil.Process(proc.pid).children() if "resource_tracker" not in " ".join(c.cmdline())]
    wait_for_more_records(saved, sum(record_counts(saved).values()), 1.5)  # at most a second late: the next ones
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    assert proc.returncode == code
    _gone, alive = psutil.wait_procs(lanes, timeout=5)
    assert not alive, f"lanes outlived the window: {[p.pid for p in alive]}"
    meta = check_files(saved, {"cpu", "cpu1"})
    with open(saved, newline="") as fh:
        assert sum(1 for _ in fh) > 60
    if sig == signal.SIGTERM:  # closed as by its close button: the run was stopped and saved whole
        assert {lane["status"] for lane in meta["runs"][0]["lanes"].values()} <= {"cancelled", "completed"}
    assert group_gone(proc.pid)


X11_BROKE = "The X11 connection broke"  # what Qt's xcb plugin says when the X server goes away


@pytest.mark.parametrize("then_sigterm", [False, True], ids=["display-gone", "display-gone-then-sigterm"])
def test_the_window_ends_with_its_display_keeps_the_records_and_leaves_no_lane(xvfb_server, tmp_path, then_sigterm):
    """A logout, dropped X forwarding or a crashed X server ends the window's process as its close button would,
    and so does a SIGTERM sent after the display is gone (issue 56 #16: one waited on its two lanes for 20 minutes
    and more, deaf to `kill`)."""
    import psutil

    said = tmp_path / "stderr.txt"
    with open(said, "w") as stderr:
        proc = _window(tmp_path, xvfb_server.display, stderr)
    try:
        saved = _autosaved_records(tmp_path, proc, {"cpu", "cpu1"}, 10)
        lanes = [c for c in psutil.Process(proc.pid).children() if "resource_tracker" not in " ".join(c.cmdline())]
        assert len(lanes) == 2, [c.cmdline() for c in lanes]
        before = sum(record_counts(saved).values())
        xvfb_server.proc.kill()  # the display goes away at once, as a crashed X server's does
        xvfb_server.proc.wait(10)
        assert wait_for(lambda: X11_BROKE in said.read_text() or proc.poll() is not None, wall_limit(15), 0.1)
        if then_sigterm:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(wall_limit(15))
        except subprocess.TimeoutExpired:
            pytest.fail(f"the window outlived its display by {wall_limit(15):.0f} s at {load_words()}: "
                        f"{said.read_text()[-2000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # Qt quits with 1 when its display breaks; a SIGTERM that lands while the window closes is said as 128 + 15.
    assert proc.returncode in ((1, 143) if then_sigterm else (1,)), said.read_text()[-2000:]
    _gone, alive = psutil.wait_procs(lanes, timeout=5)
    assert not alive, f"lanes outlived the window: {[p.pid for p in alive]}"
    assert group_gone(proc.pid)
    meta = check_files(saved, {"cpu", "cpu1"})
    assert sum(record_counts(saved).values()) >= before  # nothing measured was lost
    # Closed as by its close button: the run was stopped and its sidecar written whole, not left "running".
    assert {lane["status"] for lane in meta["runs"][0]["lanes"].values()} <= {"cancelled", "completed"}


def _wait_for_file(path: Path, proc: subprocess.Popen, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {path.name} (window exit code {proc.poll()})")
        time.sleep(0.05)
    return json.loads(path.read_text())


def test_a_width_dragged_mid_run_goes_on_as_a_second_segment(xvfb_display, tmp_path):
    xdotool = shutil.which("xdotool")
    if xdotool is None:
        pytest.skip("xdotool is not installed (apt-get install xdotool)")
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": xvfb_display, "CROSSOVER_HOME": str(tmp_path / "home"),
           "KERAS_HOME": str(tmp_path / "keras")}
    with open(tmp_path / "stderr.txt", "w") as stderr:
        proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "drag_target.py"), str(tmp_path)], cwd=ROOT,
                                env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            drag = _wait_for_file(tmp_path / "drag.json", proc, 90)
            (x0, y), (x1, _) = drag["from"], drag["to"]
            # A drag through the X server, pausing on the way: no width passed over may be trained.
            steps = [str(x0 + (x1 - x0) * i // 4) for i in range(1, 5)]
            moves = [arg for x in steps for arg in ("mousemove", x, str(y), "sleep", "0.1")]
            subprocess.run([xdotool, "mousemove", str(x0), str(y), "mousedown", "1", "sleep", "0.1", *moves,
                            "mouseup", "1"], env=env, check=True, timeout=20)
            result = _wait_for_file(tmp_path / "result.json", proc, 60)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert not result["error"], result
    assert proc.returncode == 0, (tmp_path / "stderr.txt").read_text()[-2000:]
    assert result["pressed_at"] is not None and result["released_at"] is not None  # a drag, not a key press
    assert result["slider_width"] == 1024
    assert [s["label"] for s in result["segments"]] == ["16", "1024"]
    assert result["record_widths"] == [[1, [16]], [2, [1024]]]
    assert result["marks"] == ["16", "1024"]  # where the model changed, on the plot
    assert result["points_drawn"] > result["first_segment_records"]  # and the new width's batches
    assert result["segments"][1]["at"] - result["released_at"] < 10  # the lane went on with it at once
    image = QImage(str(tmp_path / "window.png"))
    assert not image.isNull() and distinct_colours(image) > 200
    artifacts = ROOT / "artifacts"
    if artifacts.is_dir() and os.access(artifacts, os.W_OK):
        shutil.copy(tmp_path / "window.png", artifacts / "window-drag-xvfb-test.png")
