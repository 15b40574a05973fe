"""Every text the window shows is plain text, unless a widget asks for rich text and escapes what it inserts.

Qt renders a label's or a tooltip's text as HTML when it merely looks like HTML (Qt::mightBeRichText): a
profile someone sent, named `<b style="color:red">VERDICT…</b><img src=…>`, would draw a red verdict and load
a local image. An application-wide filter makes each label that did not choose a format plain text when it is
polished, and shows each tooltip (a widget's, an item's of a list or table, a plot item's) as the characters it
holds. A widget that wants rich text sets `Qt.TextFormat.RichText` itself and passes every inserted text
through `rich`.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QGraphicsView, QLabel, QToolTip, QWidget

WATCHED = frozenset((QEvent.Type.Polish, QEvent.Type.ToolTip))


def rich(text: str) -> str:
    """`text` as rich text that shows its characters: escaped, its line breaks kept."""
    return html.escape(text).replace("\n", "<br>")


def tip_html(text: str) -> str:
    """A tooltip's text as HTML that shows exactly those characters (and wraps a long line)."""
    return f"<qt>{rich(text)}</qt>"


def _tip_at(widget: QWidget, event: QHelpEvent) -> str:
    """The tooltip Qt would show for `event` on `widget`: an item's in a view's viewport, else the widget's."""
    parent = widget.parentWidget()
    if isinstance(parent, QAbstractItemView) and parent.viewport() is widget:
        data = parent.indexAt(event.pos()).data(Qt.ItemDataRole.ToolTipRole)
        return data if isinstance(data, str) else ""
    if isinstance(parent, QGraphicsView) and parent.viewport() is widget:
        item = parent.itemAt(event.pos())
        while item is not None and not item.toolTip():
            item = item.parentItem()
        return item.toolTip() if item is not None else ""
    return widget.toolTip()


class PlainTextGuard(QObject):
    """An application-wide event filter: labels plain unless they chose rich text; tooltips shown as plain text."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in WATCHED:  # every event of the application passes here: the cheapest test first
            return False
        if kind == QEvent.Type.Polish:
            if isinstance(watched, QLabel) and watched.textFormat() == Qt.TextFormat.AutoText:
                watched.setTextFormat(Qt.TextFormat.PlainText)
            return False
        if not isinstance(watched, QWidget) or not isinstance(event, QHelpEvent):
            return False
        tip = _tip_at(watched, event)
        if not tip:
            return False  # Qt goes on as usual (a parent's tooltip, or none)
        QToolTip.showText(event.globalPos(), tip_html(tip), watched, QRect(), watched.toolTipDuration())
        return True


def install(app: QApplication) -> PlainTextGuard:
    """Make every label and tooltip of `app`'s windows plain text (once per application)."""
    guard = app.findChild(PlainTextGuard)
    if guard is None:
        guard = PlainTextGuard(app)
        app.installEventFilter(guard)
    return guard
