"""Issue 35 #4: a lane stuck inspecting a user's model (a factory that never returns, a model file that never
ends) beats its heartbeat all the same. The watchdog bounds the inspection, and a stop reaches it: the command
ends with a sentence, at once, and leaves no lane."""
from __future__ import annotations

import os
import signal
import threading
import time

from helpers import cli_in_process

FACTORY = "import keras\n\n\ndef build(width):\n    return keras.Sequential([keras.layers.Dense(width)])\n"


def test_the_watchdog_ends_an_inspection_that_never_answers(capsys, scripted, tmp_path):
    from scripted_lanes import cpu_like

    scripted.scripts["cpu1"] = cpu_like(inspect_hangs=True)
    factory = tmp_path / "mine.py"
    factory.write_text(FACTORY)
    t0 = time.monotonic()
    out = cli_in_process(capsys, "run", "--model", f"{factory}:build", "--widths", "16", "--lanes", "cpu1",
                         "--data", "synthetic", "--watchdog-s", "1.5")
    assert time.monotonic() - t0 < 30
    assert out.returncode == 2, out.stderr
    assert "cpu1 could not inspect" in out.stderr and "1.5 s after it was ready" in out.stderr
    assert not scripted.alive()


def test_a_stop_reaches_a_lane_stuck_inspecting(capsys, scripted, tmp_path):
    from scripted_lanes import cpu_like

    scripted.scripts["cpu1"] = cpu_like(inspect_hangs=True)
    factory = tmp_path / "mine.py"
    factory.write_text(FACTORY)
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()  # Ctrl-C, once
    t0 = time.monotonic()
    out = cli_in_process(capsys, "run", "--model", f"{factory}:build", "--widths", "16", "--lanes", "cpu1",
                         "--data", "synthetic")
    assert time.monotonic() - t0 < 10
    assert out.returncode == 130, out.stderr
    assert "stopped while cpu1 inspected mine.py: nothing was measured" in out.stderr
    assert not scripted.alive()
