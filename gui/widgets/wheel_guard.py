"""The mouse wheel scrolls the column, never changes a setting it passes over: spin boxes, combo boxes and sliders
take the wheel only when they have the keyboard focus (a click or Tab gives it them)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox,
                               QScrollBar, QWidget)

GUARDED = (QAbstractSpinBox, QComboBox, QAbstractSlider)
WATCHED = frozenset((QEvent.Type.Polish, QEvent.Type.Wheel))


class WheelGuard(QObject):
    """An application-wide event filter: a wheel turned over an unfocused setting scrolls what holds it instead
    (scrolling the Model panel to reach Ramp once turned a batch size of 128 into 129 and 'all' samples into
    15,000, silently)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() not in WATCHED:  # every event of the application passes here: the cheapest test first
            return False
        if not isinstance(watched, GUARDED) or isinstance(watched, QScrollBar):  # a scroll bar is for the wheel
            return False
        widget: QWidget = watched
        if event.type() == QEvent.Type.Polish and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a wheel alone does not focus it
        elif event.type() == QEvent.Type.Wheel and not widget.hasFocus():
            area = _scroll_area_of(widget)
            if area is not None:
                QApplication.sendEvent(area.viewport(), event)
            return True
        return False


def _scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def install(app: QApplication) -> WheelGuard:
    """Guard every setting of `app`'s windows (once per application: the guard is the app's child)."""
    guard = app.findChild(WheelGuard)
    if guard is None:
        guard = WheelGuard(app)
        app.installEventFilter(guard)
    return guard
