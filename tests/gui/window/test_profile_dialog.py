"""Run > Measure a device profile (issue 47): the window runs the command line's `profile` as a process of its own,
says its expected length and the time left per sweep from the lines it prints, stops it as Ctrl-C does (the sweeps
measured make the profile) and offers the written profile's lanes to the crossover map.

Here the command is a stand-in that prints the command's lines (core/cli/profile.py) and writes a profile (a copy of
a shipped one) or none: what the real command measures is tests/core/cli/test_profile_cli.py's. A process of its own,
hence the `lanes` mark."""
from __future__ import annotations

import sys
import textwrap
import time

import pytest

from crossover_lab.core.files.device_profile import find_profile

pytestmark = pytest.mark.lanes

SHIPPED = "h200-2026-11-30"


def stand_in(tmp_path, *, stop_after: int | None = None, write: bool = True, code: int = 0):
    """A command that says a plan of 3 sweeps, each sweep's line, and `wrote FILE` (a shipped profile copied to
    -o); with `stop_after`, it waits at that sweep until SIGINT, then says it stopped and writes (exit 130)."""
    source = find_profile(SHIPPED).path
    script = tmp_path / "fake_profile.py"
    script.write_text(textwrap.dedent(f"""
        import shutil, signal, sys, time
        out = sys.argv[sys.argv.index("-o") + 1]
        stopped = []
        signal.signal(signal.SIGINT, lambda *a: stopped.append(1))
        print("profile: 3 sweeps (mlp-2, mlp-1, cnn) on cpu, 20 points each lane; expected length: about 9 min; "
              "each sweep's files in x-sweeps/", flush=True)
        for i, name in enumerate(("mlp-2", "mlp-1", "cnn"), 1):
            print(f"profile: sweep {{i}} of 3, {{name}} (4 points), about {{9 - 3 * (i - 1)}} min left", flush=True)
            if {stop_after!r} == i:
                while not stopped:
                    time.sleep(0.02)
                print("profile: stopped with 1 of 3 sweeps measured; the profile is made of what they measured",
                      flush=True)
                break
        if {write!r}:
            shutil.copy({str(source)!r}, out)
            print(f"wrote {{out}}", flush=True)
        else:
            print("error: the lanes failed", flush=True)
        sys.exit(130 if stopped else {code!r})
    """), encoding="utf-8")
    return lambda args: [sys.executable, str(script), *args]


def _dialog(make_window, tmp_path, **kwargs):
    from crossover_lab.gui.window.profile_dialog import ProfileDialog

    window = make_window()
    dialog = window.open_profile_dialog()
    dialog._command = stand_in(tmp_path, **kwargs)
    dialog.path.setText(str(tmp_path / "here.json"))
    assert isinstance(dialog, ProfileDialog) and window.open_profile_dialog() is dialog  # one per window
    return window, dialog


def test_a_profile_measured_from_the_window_says_its_length_and_progress_then_its_lanes_go_on_the_map(
        make_window, qtbot, tmp_path):
    window, dialog = _dialog(make_window, tmp_path)
    assert dialog.lanes.text() == "cpu,cpu1" and dialog.arguments()[:3] == ["profile", "--lanes", "cpu,cpu1"]
    assert dialog.progress.maximum() == 6 and dialog.progress.value() == 0  # the plan's sweeps, before it starts
    dialog.quick.setChecked(True)
    assert dialog.progress.maximum() == 3 and dialog.arguments()[-1] == "--quick"
    dialog.quick.setChecked(False)
    seen: list[str] = []
    dialog.progress.valueChanged.connect(lambda v: seen.append(dialog.state.text()))
    dialog.start.click()
    assert not dialog.start.isEnabled() and dialog.stop.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=20_000)
    assert dialog.exit_code == 0 and dialog.profile is not None
    assert any("Sweep 2 of 3: mlp-1; about 6 min left (expected length: about 9 min)." in s for s in seen), seen
    assert dialog.progress.value() == dialog.progress.maximum() == 3
    assert f"Profile {SHIPPED} written to {tmp_path / 'here.json'}" in dialog.state.text()
    assert dialog.add.isEnabled() and "wrote" in dialog.log.toPlainText()
    dialog.add.click()
    lanes = list(dict.fromkeys(x.lane for x in find_profile(SHIPPED).lanes))
    assert [x.lane for x in window.compare.map.predicted.lanes] == lanes  # every lane of the profile
    assert window.tabs.currentWidget() is window.compare


def test_stop_ends_it_as_ctrl_c_does_and_keeps_the_profile_of_what_was_measured(make_window, qtbot, tmp_path):
    window, dialog = _dialog(make_window, tmp_path, stop_after=1)
    dialog.start.click()
    qtbot.waitUntil(lambda: "Sweep 1 of 3" in dialog.state.text(), timeout=20_000)
    started = time.monotonic()
    dialog.stop.click()
    assert "Stopping" in dialog.state.text() and not dialog.stop.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=20_000)
    assert time.monotonic() - started < 5  # the stand-in stops at once: the dialog waits on nothing of its own
    assert dialog.exit_code == 130 and dialog.profile is not None
    assert dialog.state.text().startswith("Stopped. Profile") and dialog.add.isEnabled()


def test_a_command_that_writes_nothing_says_why_and_closing_while_it_runs_stops_it(make_window, qtbot, tmp_path):
    window, dialog = _dialog(make_window, tmp_path, write=False, code=1)
    dialog.start.click()
    qtbot.waitUntil(lambda: not dialog.running, timeout=20_000)
    assert dialog.state.text() == "No profile was written: the lanes failed" and not dialog.add.isEnabled()

    dialog._command = stand_in(tmp_path, stop_after=2)
    dialog.start.click()
    qtbot.waitUntil(lambda: "Sweep 2 of 3" in dialog.state.text(), timeout=20_000)
    dialog.close()  # stops it; the dialog stays until the command has ended, the window live meanwhile
    assert dialog.isVisible() and dialog.running
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=20_000)
    assert dialog.exit_code == 130 and (tmp_path / "here.json").is_file()


def test_bad_settings_are_a_sentence_and_start_nothing(make_window, tmp_path):
    window, dialog = _dialog(make_window, tmp_path)
    dialog.lanes.setText(" ")
    dialog.start.click()
    assert dialog.state.text() == "Name at least one lane." and not dialog.running
    dialog.lanes.setText("cpu")
    dialog.path.setText(str(tmp_path / "here.txt"))
    dialog.start.click()
    assert dialog.state.text() == "Choose a .json file for the profile." and not dialog.running
