"""Keyboard and screen readers: Tab reaches every control in reading order, the width sliders move with the
arrow keys and Page Up/Down, and every control and plot has a name a screen reader can say."""
from __future__ import annotations

import os
import subprocess
import sys

import pyqtgraph as pg
import pytest
from helpers import CLI_TIMEOUT_S
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QApplication, QComboBox, QLabel, QPushButton,
                               QTabBar, QWidget)

from crossover_lab.gui.widgets.width_slider import ROUND_WIDTHS


def tab_stops(window, first: QWidget) -> list[QWidget]:
    """The widgets Tab visits from `first` (real Tab key presses) until it comes round again."""
    first.setFocus(Qt.FocusReason.TabFocusReason)
    QApplication.processEvents()
    stops = []
    for _ in range(200):
        widget = QApplication.focusWidget()
        if widget in stops:
            break
        stops.append(widget)
        QTest.keyClick(widget, Qt.Key.Key_Tab)
    return stops


def reachable(window) -> list[QWidget]:
    """Every control a keyboard user should reach: shown, enabled, taking focus with Tab."""
    return [w for w in window.findChildren(QWidget)
            if w.isVisible() and w.isEnabled() and w.focusPolicy() & Qt.FocusPolicy.TabFocus
            and w.focusProxy() is None and not w.isWindow()
            and not (isinstance(w, QAbstractButton) and w.autoExclusive() and not w.isChecked())]


def spoken_name(widget: QWidget) -> str:
    """What a screen reader announces as the widget's name. Qt names a combo box on Linux by its current
    value (the label comes through a relation), so a combo box needs a name of its own."""
    if widget.accessibleName() or isinstance(widget, QComboBox):
        return widget.accessibleName()
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Name) if interface is not None else ""


@pytest.fixture
def shown_window(make_window, qtbot):
    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    return window


@pytest.mark.parametrize("tab", ["compare", "sweep"])
def test_tab_reaches_every_control_in_reading_order(shown_window, tab):
    window = shown_window
    window.tabs.setCurrentWidget(window.compare if tab == "compare" else window.sweep)
    stops = tab_stops(window, window.side.model_panel.preset)
    missing = [f"{type(w).__name__} {spoken_name(w)!r}" for w in reachable(window) if w not in stops]
    assert not missing, f"Tab never reaches {missing}"
    m, lanes = window.side.model_panel, window.side.lanes_panel
    order = [m.preset, m.layers, m.widths.sliders[0], m.widths.spins[0], m.activation, m.batch, m.data,
             m.samples, *lanes.boxes.values(), lanes.schedule_box, window.side.start_button,
             window.side.ramp_axis, window.side.ramp_widths, window.side.ramp_button, window.tabs.findChild(QTabBar)]
    if tab == "compare":
        order += [window.compare.plot.x_axis, window.compare.plot.plot, window.compare.map.plot, window.compare.summary.table, window.compare.history.table]
    else:
        form, view = window.sweep.sweep_form, window.sweep.view
        order += [form.preset, form.widths, form.run_button, view.plot, view.table, view.open_button]
    positions = [stops.index(w) for w in order if w.isEnabled()]
    assert positions == sorted(positions), [type(stops[p]).__name__ for p in positions]


def test_width_sliders_move_with_arrow_keys_and_page_keys(shown_window):
    window = shown_window
    slider, spin = window.side.model_panel.widths.sliders[0], window.side.model_panel.widths.spins[0]
    slider.setFocus()
    start = ROUND_WIDTHS.index(spin.value())
    for key, expected in ((Qt.Key.Key_Right, start + 1), (Qt.Key.Key_Left, start), (Qt.Key.Key_Up, start + 1),
                          (Qt.Key.Key_Down, start), (Qt.Key.Key_PageUp, start + 3), (Qt.Key.Key_PageDown, start),
                          (Qt.Key.Key_End, len(ROUND_WIDTHS) - 1), (Qt.Key.Key_Home, 0)):
        QTest.keyClick(slider, key)
        assert spin.value() == ROUND_WIDTHS[expected], QTest.keyToAscii(key)
        assert window.config.model.widths == (ROUND_WIDTHS[expected],)  # the run uses what the slider shows


@pytest.mark.parametrize("tab", ["compare", "sweep"])
def test_every_control_and_plot_has_a_name(shown_window, tab):
    window = shown_window
    window.tabs.setCurrentWidget(window.compare if tab == "compare" else window.sweep)
    unnamed = [type(w).__name__ for w in reachable(window) if not spoken_name(w).strip()]
    assert not unnamed, f"no accessible name: {unnamed}"
    for plot in window.findChildren(pg.PlotWidget):
        assert plot.accessibleName(), "a plot without a name"
    for view in reachable(window):
        if isinstance(view, QAbstractItemView):
            assert view.accessibleName() and not view.tabKeyNavigation(), type(view).__name__


def needed_width(widget: QWidget) -> int:
    """The width its text needs. A push button's size hint is at least 80 px by the style's taste, so
    for those: the text, the icon and the frame's margins."""
    if isinstance(widget, QPushButton):
        icon = widget.iconSize().width() + 4 if not widget.icon().isNull() else 0
        return widget.fontMetrics().horizontalAdvance(widget.text().replace("&", "")) + icon + 8
    return widget.minimumSizeHint().width()


def test_no_button_or_label_is_cut_short_at_the_default_size(shown_window):
    window = shown_window
    for tab in (window.compare, window.sweep, window.why):
        window.tabs.setCurrentWidget(tab)
        QApplication.processEvents()
        clipped = [f"{type(w).__name__} {w.text()!r}: {w.width()} < {needed_width(w)}"
                   for w in window.findChildren(QAbstractButton) + window.findChildren(QLabel)
                   if w.isVisible() and w.text() and not (isinstance(w, QLabel) and w.wordWrap())
                   and w.width() < needed_width(w)]
        assert not clipped, clipped


@pytest.mark.lanes
def test_nothing_is_cut_short_at_twice_the_scale_either():
    # High DPI: Qt reads the scale when the application starts, so the check runs again in a process of its own.
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{__file__}::"
                          "test_no_button_or_label_is_cut_short_at_the_default_size"], capture_output=True, text=True,
                         timeout=CLI_TIMEOUT_S, cwd=os.path.dirname(__file__),
                         env={**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout[-3000:]


def test_file_clear_compiled_cache_empties_the_folder_and_says_how_much(make_window, gui_home):
    from pathlib import Path
    folder = Path(gui_home) / "compiled"
    (folder / "jit_train_step").mkdir(parents=True)
    (folder / "jit_train_step" / "program").write_bytes(b"x" * 2_000_000)
    window = make_window()
    assert window.actions.clear_compiled in window.menuBar().actions()[0].menu().actions()
    window.actions.clear_compiled.trigger()
    assert folder.is_dir() and not any(folder.iterdir())
    assert "Cleared the compiled cache: 1 file(s), 2.0 MB" in window.status.message()
