"""Tabs whose pages scroll, rather than squeeze or cut off, when the window is smaller than a page can be drawn in.

Each page sits in a QScrollArea that gives it all the room there is but never less than its
minimum size; below that, scroll bars appear. Callers still name the pages themselves
(`setCurrentWidget(window.sweep)`, `currentWidget() is window.sweep`), never what holds them.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QWidget


class _Holder(QWidget):
    """The scroll area's widget: the page, at the holder's size, and no layout of its own.

    A scroll area whose widget's layout has a height-for-width (any word-wrapped label) keeps that
    widget at its *preferred* height, so the Sweep tab scrolled at 700 px with room to spare; the
    holder reports the page's least size only.
    """

    def __init__(self, page: QWidget) -> None:
        super().__init__()
        self.page = page
        page.setParent(self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.page.minimumSizeHint().expandedTo(self.page.minimumSize())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.page.sizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        self.page.resize(event.size())


class PageTabs(QTabWidget):
    """A QTabWidget of scrolling pages; currentWidget, setCurrentWidget and indexOf speak of the pages."""

    def add_page(self, page: QWidget, title: str, tooltip: str, least: QSize | None = None) -> int:
        """Add `page` as a tab; it scrolls below `least` (default: the least its layout can be drawn in)."""
        if least is not None:
            page.setMinimumSize(least)
        area = QScrollArea()
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setWidgetResizable(True)
        area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes from the tab bar to the page's first control
        area.setWidget(_Holder(page))
        index = self.addTab(area, title)
        self.setTabToolTip(index, tooltip)
        return index

    def page(self, index: int) -> QWidget | None:
        area = self.widget(index)
        if isinstance(area, QScrollArea) and isinstance(holder := area.widget(), _Holder):
            return holder.page
        return area

    # Qt's name (N802). The stubs type QTabWidget.currentWidget() as never None; Qt returns None when there is no tab.
    def currentWidget(self) -> QWidget | None:  # noqa: N802  # pyright: ignore[reportIncompatibleMethodOverride]
        return self.page(self.currentIndex())

    def indexOf(self, page: QWidget) -> int:  # noqa: N802 (Qt's name)
        return next((i for i in range(self.count()) if self.page(i) is page), -1)

    def setCurrentWidget(self, page: QWidget) -> None:  # noqa: N802 (Qt's name)
        index = self.indexOf(page)
        if index >= 0:
            self.setCurrentIndex(index)
        else:
            super().setCurrentWidget(page)  # not a page: Qt's own warning says so
