"""pyqtgraph's PlotWidget, typed: the PlotItem inside it, for the calls pyqtgraph forwards to it at run time.

PlotWidget hands addItem, setRange, setXRange… on to its PlotItem (and that to its ViewBox) when it is
built, so a type checker sees only GraphicsView's methods of those names, which take no ignoreBounds=,
xRange= or padding=. Calling them on the item, or on its view box, is the same call, typed.
"""
from __future__ import annotations

import pyqtgraph as pg


def plot_item(plot: pg.PlotWidget) -> pg.PlotItem:
    """The PlotItem `plot` draws in (pyqtgraph types it Optional: it is None only once the widget is closed)."""
    item = plot.getPlotItem()
    assert item is not None, "the plot widget was closed"
    return item
