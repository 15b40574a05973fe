"""At 1024×700 the window is usable: no button or label cut short, the left column never cut on the right,
pages scroll rather than squeeze, and the Sweep tab fits without scrolling sideways."""
from __future__ import annotations

import pytest
from helpers import H200_SWEEP_CSV as SWEEP_CSV, fake_lister
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QLabel, QPushButton, QScrollArea

from crossover_lab.core.config import LaneSpec
from crossover_lab.core.engine.devices import LaneOption

XEON = "CPU (Intel(R) Xeon(R) Platinum 8480+ Processor, 224 threads)"


def big_machine(pool: object = None, stop: object = None) -> list[LaneOption]:
    """A machine whose lanes have long device names (the H200 host's are longer than this laptop's)."""
    return [LaneOption(LaneSpec("cpu"), XEON, True), LaneOption(LaneSpec("cpu", threads=1), XEON, True),
            LaneOption(LaneSpec("gpu", 0), "GPU:0 (NVIDIA H200 NVL, 141 GB HBM3e)", True),
            LaneOption(LaneSpec("cpu", backend="jax"), XEON, True)]


def cut_short(window) -> list[str]:
    """Visible buttons and one-line labels whose text is wider than they are."""
    found = []
    for button in window.findChildren(QPushButton):
        if button.isVisible() and button.fontMetrics().horizontalAdvance(button.text()) > button.width():
            found.append(f"button {button.text()!r}: {button.width()} px")
    for label in window.findChildren(QLabel):
        text = label.text()
        if (label.isVisible() and text and not label.wordWrap() and "\n" not in text and "<" not in text
                and label.fontMetrics().horizontalAdvance(text) > label.contentsRect().width()):
            found.append(f"label {text!r}: {label.contentsRect().width()} px")
    return found


def page_area(window, page) -> QScrollArea:
    return window.tabs.widget(window.tabs.indexOf(page))


@pytest.fixture
def small(make_window, qtbot):
    window = make_window(discover_fn=big_machine)
    assert window.sweep.open_csv(str(SWEEP_CSV))
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1024, 700)  # not held wider by what it holds
    return window


@pytest.mark.parametrize("tab", ["compare", "sweep"])
def test_nothing_is_cut_short_at_1024_by_700(small, qtbot, tab):
    page = small.compare if tab == "compare" else small.sweep
    small.tabs.setCurrentWidget(page)
    qtbot.waitUntil(lambda: page.isVisible())
    qtbot.wait(50)
    assert cut_short(small) == []
    # The left column scrolls up and down only: it is never wider than the room it is shown in.
    side = small.side
    assert side.widget().width() <= side.viewport().width()
    assert side.widget().minimumSizeHint().width() <= side.viewport().width()
    # A page is never drawn smaller than it can be (it scrolls instead).
    assert page.width() >= page.minimumSizeHint().width() and page.height() >= page.minimumSizeHint().height()


def test_the_sweep_tab_fits_1024_by_700_without_scrolling(small, qtbot):
    small.tabs.setCurrentWidget(small.sweep)
    qtbot.waitUntil(lambda: small.sweep.isVisible())
    area = page_area(small, small.sweep)
    assert (area.horizontalScrollBar().maximum(), area.verticalScrollBar().maximum()) == (0, 0)
    plot = small.sweep.view.plot
    assert plot.width() >= 440 and plot.isVisible()
    right = plot.mapTo(small, plot.rect().topRight()).x()
    assert right < small.width()  # the plot ends inside the window, 8,192 and all
    for button in (small.sweep.view.open_button, small.sweep.view.export_csv_button, small.sweep.view.export_png_button):
        assert button.mapTo(small, button.rect().bottomRight()).y() < small.statusBar().y()


def width_labels(plot) -> list[str]:
    """The tick labels the sweep plot's width axis draws (pyqtgraph leaves out any that would stick out)."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        return [text for _rect, _flags, text in plot.getAxis("bottom").generateDrawSpecs(painter)[2]]
    finally:
        painter.end()


def test_the_sweep_plot_shows_every_width_at_1024_by_700(small, qtbot):
    small.tabs.setCurrentWidget(small.sweep)
    qtbot.waitUntil(lambda: small.sweep.view.plot.isVisible())
    qtbot.wait(50)
    assert width_labels(small.sweep.view.plot) == ["16", "32", "64", "128", "256", "512", "1,024", "2,048", "4,096",
                                              "8,192"]
    small.sweep.view.set_rows([])  # the empty plot, before a sweep: it used to stop at 1,024
    qtbot.wait(20)
    assert width_labels(small.sweep.view.plot) == ["16", "64", "256", "1,024", "4,096"]


def test_below_what_a_page_needs_it_scrolls_and_the_window_stops_at_its_least_size(small, qtbot):
    small.tabs.setCurrentWidget(small.compare)
    small.resize(600, 400)
    qtbot.waitUntil(lambda: small.width() == 900 and small.height() == 600)
    area = page_area(small, small.compare)
    qtbot.waitUntil(lambda: area.horizontalScrollBar().maximum() > 0)
    assert small.compare.width() >= small.compare.minimumSizeHint().width()  # scrolled, not squeezed
    assert small.minimumSizeHint().width() <= 900 and small.minimumSizeHint().height() <= 600


def test_a_long_device_name_is_cut_in_its_check_box_not_by_the_panel(small):
    box = small.side.lanes_panel.boxes["cpu"]
    # The box says the processor's short name; its tooltip the whole one.
    assert box.text() == "cpu  ·  CPU (Intel Xeon Platinum 8480+, 224 threads)" and XEON in box.toolTip()
    assert box.minimumSizeHint().width() < box.sizeHint().width()
    assert small.side.width() < 420  # the long name did not widen the column at 1024 px


def test_a_long_host_name_does_not_widen_or_cut_the_column(small, qtbot, monkeypatch):
    monkeypatch.setattr(small.side.lanes_panel.hosts, "_list_lanes", fake_lister)
    host = "me@gpunode017.averyveryverylongclustername.example.org:2222"  # no hyphen to wrap at
    assert small.side.lanes_panel.hosts.add_host(f"ssh://{host}")
    qtbot.waitUntil(lambda: f"ssh://{host}/jax:gpu0" in small.side.lanes_panel.boxes, timeout=5000)
    qtbot.wait(50)
    side = small.side
    assert side.widget().width() <= side.viewport().width() and side.width() < 420
    headers = [label for label in small.side.lanes_panel.findChildren(QLabel)
               if label.isVisible() and not label.wordWrap() and host in label.toolTip()]
    assert len(headers) == 2 and all(label.text().endswith("…") for label in headers)  # TensorFlow and JAX on it
    assert cut_short(small) == []
    small.side.lanes_panel.shutdown()


def test_help_has_the_guide_beside_about(small, monkeypatch):
    """Help > Guide opens the guide's window page (docs/guide/window.md) in the system's viewer."""
    from PySide6.QtGui import QDesktopServices

    from crossover_lab.core.paths import guide_path

    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    help_menu = next(m for m in small.menuBar().findChildren(type(small.menuBar().actions()[0].menu()))
                     if m.title() == "&Help")
    assert [a.text() for a in help_menu.actions()] == ["&Guide", "&About Crossover"]
    small.actions.guide.trigger()
    assert guide_path() is not None and opened == [str(guide_path())]
