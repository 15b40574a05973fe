"""The status bar: an error goes once its cause is put right, other errors stay, and a long message is cut to fit."""
from __future__ import annotations

from PySide6.QtCore import Qt

from crossover_lab.gui.theme.scheme import scheme_colors


def type_into(qtbot, spin, text: str) -> None:
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def shown_red(window) -> bool:
    window.status.ensurePolished()
    return window.status.palette().color(window.status.foregroundRole()).name() == scheme_colors().error


def test_a_clamped_width_is_said_in_red_until_the_next_edit(make_window, qtbot):
    window = make_window()
    window.show()
    spin = window.side.model_panel.widths.spins[0]
    type_into(qtbot, spin, "99999")
    qtbot.waitUntil(lambda: "outside 1-16,384" in window.status.message())
    qtbot.wait(50)  # the clamped value's own change has gone through: the sentence must still be there
    assert window.status.is_error() and "outside 1-16,384" in window.status.message() and shown_red(window)
    type_into(qtbot, spin, "512")
    assert window.config.model.widths == (512,)
    assert window.status.message() == "" and not window.status.is_error() and not shown_red(window)


def test_an_invalid_model_is_red_until_it_is_valid_again(make_window, qtbot):
    window = make_window()
    window.side.model_panel.data.setCurrentText("nonsense")
    assert window.config is None
    assert window.status.is_error() and "data source 'nonsense'" in window.status.message().lower()
    window.side.model_panel.batch.setValue(64)  # still invalid: the sentence stays
    assert window.status.is_error()
    window.side.model_panel.data.setCurrentText("synthetic")
    assert window.config is not None and window.status.message() == "" and not shown_red(window)


def test_putting_the_model_right_leaves_other_errors_alone(make_window):
    window = make_window()
    window.side.model_panel.data.setCurrentText("nonsense")
    window.say("Autosave failed: the disk is full", error=True)
    window.side.model_panel.data.setCurrentText("synthetic")
    assert window.status.message() == "Autosave failed: the disk is full" and window.status.is_error()


def test_choosing_a_lane_clears_the_no_lane_error(make_window):
    window = make_window()
    for box in window.side.lanes_panel.boxes.values():
        box.setChecked(False)
    window.start_run()
    assert "at least one lane" in window.status.message() and window.status.is_error()
    window.side.lanes_panel.boxes["cpu"].setChecked(True)
    assert window.status.message() == ""


def test_a_long_message_is_cut_before_the_machine_label_and_whole_in_the_tooltip(make_window, qtbot):
    window = make_window()
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    long = "The run failed: " + " ".join(f"lane{i} could not start because of reason number {i}" for i in range(20))
    window.say(long, error=True)
    qtbot.wait(20)
    shown = window.status.text()
    assert shown.endswith("…") and len(shown) < len(long)
    assert window.status.message() == long and window.status.toolTip() == long
    assert window.status.fontMetrics().horizontalAdvance(shown) <= window.status.contentsRect().width()
    label_left = window.host_label.mapTo(window, window.host_label.rect().topLeft()).x()
    status_right = window.status.mapTo(window, window.status.rect().topRight()).x()
    assert window.host_label.isVisible() and status_right < label_left
    assert window.host_label.width() >= window.host_label.fontMetrics().horizontalAdvance(window.host_label.text())
    window.resize(1600, 1000)  # more room: more of the sentence, still whole in the tooltip
    qtbot.waitUntil(lambda: len(window.status.text()) > len(shown))


def test_a_message_that_is_not_an_error_goes_by_itself(make_window, qtbot, monkeypatch):
    from crossover_lab.gui.widgets import status_line

    monkeypatch.setattr(status_line, "STATUS_MS", 50)
    window = make_window()
    window.say("Saved the plot.")
    assert window.status.message() == "Saved the plot."
    qtbot.waitUntil(lambda: window.status.message() == "", timeout=2000)
