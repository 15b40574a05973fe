"""Open and export dialogs start in the folder the user last chose a file in, in this window and the next."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import answer_next_dialog


def test_every_dialog_starts_where_the_last_file_was_chosen(make_window, tmp_path):
    window = make_window()
    slides, sweeps = tmp_path / "slides", tmp_path / "sweeps"
    slides.mkdir()
    sweeps.mkdir()
    (sweeps / "old.csv").write_text("not a sweep\n")
    seen: list[str] = []
    answer_next_dialog(window.dialogs, str(slides / "plot.png"), seen)
    window.exports.ask_export_plot("png")
    assert (slides / "plot.png").exists()
    answer_next_dialog(window.dialogs, str(sweeps / "old.csv"), seen)
    window.sweep.view._on_open_clicked()  # the Sweep tab's Open CSV… starts where the plot went
    answer_next_dialog(window.dialogs, None, seen)
    window.side.model_panel._on_browse_clicked()  # … and the data file's, where that CSV was
    answer_next_dialog(window.dialogs, None, seen)
    window.exports.ask_export_run("some-run")  # a cancelled dialog moves nothing
    assert seen[1:] == [str(slides.resolve()), str(sweeps.resolve()), str(sweeps.resolve())]


def test_the_last_folder_is_there_at_the_next_launch_and_a_vanished_one_is_not(make_window, tmp_path):
    first = make_window()
    folder = tmp_path / "exports"
    folder.mkdir()
    seen: list[str] = []
    answer_next_dialog(first.dialogs, str(folder / "timings.png"), seen)
    first.exports.ask_export_plot("png")
    first.close()
    second = make_window()
    assert second.dialogs.folder() == str(folder)
    answer_next_dialog(second.dialogs, None, seen)
    second.exports.ask_export_plot("svg")
    assert seen[-1] == str(folder.resolve())
    (folder / "timings.png").unlink()
    folder.rmdir()
    assert second.dialogs.folder() == os.path.expanduser("~")
    assert second.dialogs.folder(str(tmp_path)) == str(tmp_path)  # or the dialog's own default (autosaves)


PROC_DIALOG = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from crossover_lab.gui.widgets.file_dialogs import FileDialogs
from crossover_lab.gui.settings import AppSettings
app = QApplication([])
dialogs = FileDialogs(AppSettings(sys.argv[1]))
QTimer.singleShot(1500, lambda: dialogs.last_dialog.reject())  # runs only if the window's thread is free
print("chosen", repr(dialogs.open_path(None, "Open", "All files (*)", default_folder="/proc")))
"""


@pytest.mark.skipif(not os.path.exists("/proc/kmsg"), reason="needs Linux's /proc")
def test_an_open_dialog_in_proc_lists_it_without_hanging(tmp_path):
    # Qt's own icon provider reads each file's first bytes for its type: in /proc a read can block for good,
    # and the dialog (and the window) froze. In a child process, so a hang is a failure, not a stuck suite.
    out = subprocess.run([sys.executable, "-c", PROC_DIALOG, str(tmp_path / "s.ini")], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0 and "chosen ''" in out.stdout, out.stderr[-2000:]
