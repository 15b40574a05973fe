"""Run > Calibrate the rule here (issue 57): the window runs the command line's `calibrate` as a process of its own, on
real lanes (cpu1 against its twin cpu1#2), shows each twin sweep's progress and outcome, and says the rate it kept,
which every answer then quotes. A stop keeps the sweeps that finished. Processes of their own: the `lanes` mark."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import wall_limit

from crossover_lab.gui.widgets.command_process import crossover_command

pytestmark = pytest.mark.lanes

QUICK = ["--widths", "16,256", "--steady-steps", "20", "--samples", "6400", "--data", "synthetic", "--no-recheck"]


def test_a_calibration_from_the_window_runs_twin_sweeps_on_real_lanes_and_keeps_the_rate(make_window, qtbot,
                                                                                        gui_home):
    window = make_window()
    dialog = window.open_calibrate_dialog()
    assert window.open_calibrate_dialog() is dialog  # one per window
    assert "not been measured" in dialog.state.text()  # a fresh home: nothing kept yet
    assert window.actions.calibrate.text().replace("&", "") == "Calibrate the rule here…"
    dialog._command = lambda args: crossover_command([*args, *QUICK])  # a short design: two widths, no recheck
    dialog.lane.setCurrentText("cpu1")
    dialog.sweeps.setValue(2)
    assert dialog.arguments() == ["calibrate", "--lanes", "cpu1", "--sweeps", "2"]
    seen: list[str] = []
    dialog.progress.valueChanged.connect(lambda _: seen.append(dialog.state.text()))
    dialog.start.click()
    assert dialog.running and not dialog.start.isEnabled() and dialog.stop.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=int(wall_limit(240) * 1000))
    log = dialog.log.toPlainText()
    assert dialog.exit_code == 0, log[-3000:]
    assert any(s.startswith("Twin sweep 2 of 2; about ") for s in seen), seen  # the time left, from sweep 1
    assert dialog.progress.value() == dialog.progress.maximum() == 2
    judged = [line for line in log.splitlines() if line.startswith("twin sweep ")]
    assert len(judged) == 2, log[-3000:]
    kept = json.loads((Path(gui_home) / "rule-here.json").read_text(encoding="utf-8"))
    assert kept["sweeps"] == 2 and kept["false_leads"] == sum("a false lead" in line for line in judged)
    state = dialog.state.text()
    assert "in 2 twin sweeps of cpu1" in state and "95%" in state, state
