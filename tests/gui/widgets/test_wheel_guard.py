"""A wheel turned over a setting the user has not clicked scrolls the column and changes nothing; once focused, the
setting takes the wheel as usual."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication


def wheel(widget, steps: int = -1) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_past_the_model_panels_settings_without_changing_them(make_window, qtbot):
    window = make_window()
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    panel = window.side.model_panel
    before = panel.config()
    spins = [panel.batch, panel.samples]
    for spin in spins:
        assert spin.focusPolicy() == Qt.FocusPolicy.StrongFocus  # a wheel alone does not focus it
        wheel(spin)
        wheel(spin, +1)
        wheel(spin)
    assert panel.config() == before  # nothing the wheel passed over changed
    panel.batch.setFocus()
    qtbot.waitUntil(panel.batch.hasFocus)
    wheel(panel.batch, +1)
    assert panel.config().train.batch_size != before.train.batch_size  # focused, it takes the wheel
