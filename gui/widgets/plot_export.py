"""A plot saved as a picture: PNG at a size fit for a slide, or SVG."""
from __future__ import annotations

import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

MIN_PNG_WIDTH = 1200  # pixels: a slide's worth, whatever the window's size


def export_plot(plot: pg.PlotWidget, path: str, title: str) -> None:
    """Save `plot` as PNG, or as SVG when the path ends in .svg (`title` names the SVG document)."""
    item = plot.getPlotItem()
    if path.lower().endswith(".svg"):
        try:
            pyqtgraph.exporters.SVGExporter(item).export(path)
        except (ValueError, AttributeError):
            # pyqtgraph 0.14's SVG exporter cannot parse the paths Qt 6.11 writes (and trips over
            # clip-to-view items); Qt's own SVG generator draws the same view.
            _export_svg_with_qt(plot, path, title)
    else:
        exporter = pyqtgraph.exporters.ImageExporter(item)
        exporter.parameters()["width"] = max(MIN_PNG_WIDTH, int(plot.width()))
        exporter.export(path)


def _export_svg_with_qt(plot: pg.PlotWidget, path: str, title: str) -> None:
    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(plot.size())
    generator.setViewBox(plot.rect())
    generator.setTitle(title)
    painter = QPainter(generator)
    try:
        plot.render(painter)
    finally:
        painter.end()


def save_offscreen(widget: QWidget, path: str) -> None:
    """Save a widget drawn offscreen for a file (never shown) as PNG, then close it; OSError if it cannot be written."""
    saved = widget.grab().save(path, "PNG")
    widget.close()
    widget.deleteLater()
    if not saved:
        raise OSError(f"cannot write {path}")
