"""View > Presentation (issue 55): for a room, the plots' tick labels at least 18 px tall, the fonts and the headline
large, the History and the toolbar hidden; remembered at the next launch, and undone by the same key."""
from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QToolBar

from crossover_lab.gui.theme.scheme import TICK_PX


def _tick_px(plot) -> int:
    axis = plot.getPlotItem().getAxis("bottom")
    font = axis.style["tickFont"]
    return QFontMetrics(font).height() if font is not None else 0


def test_presentation_makes_ticks_and_headline_readable_from_a_room_and_is_remembered(make_window, qtbot):
    window = make_window()
    window.resize(1600, 1000)
    window.show()
    assert [w for w in QApplication.topLevelWidgets() if w.isVisible()] == [window]
    assert all(f.isVisible() for f in window.side.lanes_panel.price_fields.values())
    plots = [window.compare.plot.plot, window.compare.map.plot]
    headline = window.compare.summary.verdict
    before = QFontMetrics(headline.font()).height()
    assert all(_tick_px(p) < 18 for p in plots)
    window.actions.presentation.trigger()
    qtbot.waitUntil(lambda: all(_tick_px(p) >= 18 for p in plots), timeout=3000)
    assert TICK_PX >= 18
    assert QFontMetrics(headline.font()).height() >= 1.5 * before
    assert not window.compare.history.parentWidget().isVisible()
    assert not any(bar.isVisible() for bar in window.findChildren(QToolBar))
    # The lanes' prices step aside: a lane's name and what it runs on stay whole in the panel ("cpu1 · CPU (…, 1
    # thread)" was cut to "cpu1 · CPU (AM…" at 1600×1000).
    lanes = window.side.lanes_panel
    qtbot.waitUntil(lambda: not any(f.isVisible() for f in lanes.price_fields.values()), timeout=3000)
    for name in ("cpu", "cpu1"):
        box = lanes.boxes[name]
        assert box.fontMetrics().horizontalAdvance(box.text()) + 30 <= box.width(), (name, box.text(), box.width())
    window.close()

    again = make_window()  # the next launch, same settings
    assert again.actions.presentation.isChecked() and again.theme.presentation
    again.show()
    assert not again.compare.history.parentWidget().isVisible()
    again.actions.presentation.trigger()  # F11 again: back to the desk view
    qtbot.waitUntil(lambda: _tick_px(again.compare.plot.plot) == 0, timeout=3000)
    assert again.compare.history.parentWidget().isVisible()
    qtbot.waitUntil(lambda: all(f.isVisible() for f in again.side.lanes_panel.price_fields.values()), timeout=3000)
    assert QFontMetrics(again.compare.summary.verdict.font()).height() == before
