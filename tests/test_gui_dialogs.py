"""Open and export dialogs start in the folder the user last chose a file in, in this window and the next."""
from __future__ import annotations

import os

from gui_fixtures import gui_home, make_window  # noqa: F401  (fixtures)
from PySide6.QtCore import QTimer


def answer_next_dialog(dialogs, path: str | None, seen: list[str]) -> None:
    """When the next dialog opens: note the folder it starts in, then choose `path` (None: cancel)."""
    def answer() -> None:
        dialog = dialogs.last_dialog
        seen.append(os.path.realpath(dialog.directory().absolutePath()))
        if path is None:
            dialog.reject()
        else:
            dialog.selectFile(path)
            dialog.accept()
    QTimer.singleShot(0, answer)


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
    window.model_panel._on_browse_clicked()  # … and the data file's, where that CSV was
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
