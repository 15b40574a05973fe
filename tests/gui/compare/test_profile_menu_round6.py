"""Issue 56, items 6 and 14, in the window: a damaged profile file chosen from the crossover map's "Predicted lanes"
menu is a sentence in the status line, never an exception out of the slot; the profile dialog takes only the
profile's own `wrote PROFILE.json` line for the profile written, and says plainly when none was."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import answer_next_dialog

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.device_profile import find_profile
from crossover_lab.gui.compare import predicted
from crossover_lab.gui.window.profile_dialog import no_profile_words, written_profile

SHIPPED = "cpu-2026-12-03"


# ---------------------------------------------------------------- item 6: "From a profile file…"


def _window(make_window):
    window = make_window()
    window.side.model_panel.set_config(RunConfig(ModelSpec((128, 128)), TrainSpec(batch_size=128)))
    return window


def test_a_profile_file_with_a_number_of_5000_digits_is_said_in_the_status_line(make_window, tmp_path):
    """Python refuses to make an int of more than 4,300 digits with a bare ValueError, which read_profile let through
    and the slot did not catch: nothing was said, and the exception left the slot."""
    window = _window(make_window)
    data = json.loads(Path(find_profile(SHIPPED).path).read_text(encoding="utf-8"))
    data["lanes"][0]["noise_repeats"] = "DIGITS"
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(data).replace('"DIGITS"', "1" * 5000), encoding="utf-8")
    answer_next_dialog(window.dialogs, str(damaged), [])
    window.compare.map.predicted_button.ask_file()
    message = window.status.message()
    assert str(damaged) in message and "holds a number thousands of digits long" in message, message
    assert window.compare.map.predicted.lanes == ()


@pytest.mark.parametrize("error, words", [
    (OSError(5, "Input/output error"), "Input/output error"),
    (ValueError("a value no reader turned into a sentence"), "a value no reader turned into a sentence"),
], ids=["OSError", "ValueError"])
def test_whatever_reading_a_chosen_profile_raises_is_a_sentence_never_an_exception_from_the_slot(
        make_window, tmp_path, monkeypatch, error, words):
    window = _window(make_window)
    chosen = tmp_path / "lab.json"
    chosen.write_text("{}", encoding="utf-8")

    def fails(path):
        raise error

    monkeypatch.setattr(predicted, "read_profile", fails)
    answer_next_dialog(window.dialogs, str(chosen), [])
    window.compare.map.predicted_button.ask_file()  # before: the exception reached the test, as it left the slot
    assert window.status.message() == f"Cannot read the profile {chosen}: {words}.", window.status.message()

    monkeypatch.setattr(predicted, "find_profile", fails)
    assert window.compare.map.predicted.add_named("lab", "cpu") == f"cannot read the profile lab: {words}"
    assert window.compare.map.predicted.lanes == ()


# ---------------------------------------------------------------- item 14: the profile dialog's reading of the log


def test_only_the_profiles_own_wrote_line_names_the_profile_written(tmp_path):
    target = tmp_path / "here.json"
    folder = tmp_path / "here-sweeps"
    sweep_wrote = f"wrote {folder}/mlp-2.csv, {folder}/mlp-2-batches.csv, {folder}/mlp-2.json"
    assert written_profile(sweep_wrote, str(target)) is None  # a sweep's files: matched before, as a profile
    assert written_profile(f"wrote {folder}/mlp-2.json", str(target)) is None
    assert written_profile(f"wrote {target}", str(target)) == target
    assert written_profile("profile: sweep 1 of 3, mlp-2 (4 points), about 9 min left", str(target)) is None
    target.write_text("{}", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert written_profile(f"wrote {target}", str(link)) == target  # -o through a link: the same file


def test_the_words_for_no_profile_say_plainly_that_none_was_written():
    assert no_profile_words("profile: nothing was measured, so no profile was written", True) == \
        "Stopped before any sweep was measured: no profile was written."
    assert no_profile_words("profile: no profile was written (no line: too few points); the sweeps' files stay in "
                            "x-sweeps/", True) == \
        "Stopped: no profile was written (no line: too few points); the sweeps' files stay in x-sweeps/"
    assert no_profile_words("", True) == "Stopped: no profile was written."
    assert no_profile_words("error: the lanes failed", False) == "No profile was written: the lanes failed"


def test_a_stop_that_wrote_no_profile_says_so_not_that_a_sweeps_files_do_not_read_back(make_window, tmp_path):
    """After a stop, the dialog said "The command wrote …mlp-2.csv, … but it does not read back": it had taken the
    sweep's `wrote` line for the profile's."""
    window = make_window()
    dialog = window.open_profile_dialog()
    target = tmp_path / "here.json"
    dialog.path.setText(str(target))
    folder = tmp_path / "here-sweeps"
    folder.mkdir()
    (folder / "mlp-2.json").write_text("{}", encoding="utf-8")  # a sweep's sidecar: there, and no profile
    for line in ("profile: 3 sweeps (mlp-2, mlp-1, cnn) on cpu, 20 points each lane; expected length: about 9 min; "
                 f"each sweep's files in {folder}/",
                 "profile: sweep 1 of 3, mlp-2 (4 points), about 9 min left",
                 f"wrote {folder}/mlp-2.csv, {folder}/mlp-2-batches.csv, {folder}/mlp-2.json",
                 "profile: stopped with 1 of 3 sweeps measured; the profile is made of what they measured, where it "
                 "makes a line",
                 f"profile: no profile was written (no line); the sweeps' files stay in {folder}/"):
        dialog._read_line(line)
    dialog._on_ended(130)
    state = dialog.state.text()
    assert "does not read back" not in state and "mlp-2.csv" not in state, state
    assert state == f"Stopped: no profile was written (no line); the sweeps' files stay in {folder}/"
    assert dialog.profile is None and not dialog.add.isEnabled()

    # The same lines, then the profile's own: that one is the profile written, and it reads back.
    shutil.copy(find_profile(SHIPPED).path, target)
    for line in (f"wrote {folder}/mlp-2.csv, {folder}/mlp-2-batches.csv, {folder}/mlp-2.json", f"wrote {target}"):
        dialog._read_line(line)
    dialog._on_ended(130)
    assert dialog.state.text().startswith(f"Stopped. Profile {SHIPPED} written to {target}"), dialog.state.text()
    assert dialog.profile is not None and dialog.add.isEnabled()
