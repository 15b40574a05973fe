"""Small layout helpers shared by panels that rebuild their rows."""
from __future__ import annotations

from PySide6.QtWidgets import QGroupBox, QLayout, QVBoxLayout, QWidget


def empty_layout(layout: QLayout) -> None:
    """Take every item out of `layout`, hiding and deleting its widgets.

    Hidden at once: deleteLater waits for the event loop, which a modal dialog can hold up, and the
    old rows must not show meanwhile.
    """
    while layout.count():
        item = layout.takeAt(0)
        assert item is not None  # there is an item at 0 while count() > 0
        widget = item.widget()
        if widget is not None:
            widget.hide()
            widget.deleteLater()


def group(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(6, 6, 6, 6)
    layout.addWidget(widget)
    return box
