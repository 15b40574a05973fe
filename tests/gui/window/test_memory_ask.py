"""A model too big for this machine's memory on its CPU lanes: the window asks before it starts one, and says why
when the answer is no (issue 20: estimate a model's training memory before it starts, and ask in the window)."""
from __future__ import annotations

from crossover_lab.core.engine import devices


def test_a_model_too_big_for_the_memory_is_asked_about_before_it_starts(make_window, monkeypatch):
    window = make_window()
    monkeypatch.setattr(devices, "available_bytes", lambda: 1 << 20)  # 1 MiB free: the default model needs more
    asked, started = [], []
    window.desk.ask = lambda text: asked.append(text) or False
    monkeypatch.setattr(window.controller, "start_run", lambda *args, **kwargs: started.append(args))
    assert window.desk.start_run() is None and started == []
    assert "needs at least" in asked[0] and "GiB is free" in asked[0] and "Start anyway?" in asked[0]
    assert window.status.message().startswith("Not started: model 784-128-10 needs at least")
    window.desk.ask = lambda text: True  # yes: it starts, as asked
    window.desk.start_run()
    assert len(started) == 1
    monkeypatch.setattr(devices, "available_bytes", lambda: 1 << 40)
    asked.clear()
    window.desk.ask = lambda text: asked.append(text) or False
    window.desk.start_run()
    assert asked == [] and len(started) == 2  # it fits: nothing to ask


def test_start_right_after_typing_a_width_starts_the_width_typed(make_window, monkeypatch, qtbot):
    """F5 with the cursor still in Layer 1's box (no Enter): the run trains the number on the screen."""
    from PySide6.QtWidgets import QApplication

    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    started = []
    monkeypatch.setattr(window.controller, "start_run", lambda config, *args, **kwargs: started.append(config))
    spin = window.side.model_panel.widths.spins[0]
    spin.setFocus()
    QApplication.processEvents()
    spin.selectAll()
    qtbot.keyClicks(spin, "300")
    assert window.desk.config.model.widths == (128,)  # not taken yet
    window.desk.start_run()
    assert [c.model.widths for c in started] == [(300,)]


def test_f5_on_a_window_just_shown_starts_a_run(make_window, monkeypatch, qtbot):
    """F5, the window's key for Start, starts a run once the window is shown and active. (A lane's price box shown
    before it had a parent once opened a window of its own and took the keys: tests/gui/window/test_window_run.py's
    real window caught it, this offscreen one did not.)"""
    from PySide6.QtCore import Qt

    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3_000)
    started = []
    monkeypatch.setattr(window.controller, "start_run", lambda config, *args, **kwargs: started.append(config))
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert len(started) == 1, window.status.message()
