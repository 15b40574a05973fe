"""Light and dark: View's choice reaches the window and every plot at once, is remembered, follows the system,
and exported pictures stay light."""
from __future__ import annotations

import pytest
from helpers import H200_SWEEP_CSV as SWEEP_CSV
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel

from crossover_lab.gui.theme.lane_colours import lane_color
from crossover_lab.gui.resources import ResourceMissing, icon
from crossover_lab.gui.theme.scheme import DARK, LIGHT, contrast

LANES = ("cpu", "cpu1", "gpu0", "gpu1", "gpu2", "jax:cpu", "jax:gpu0", "torch:cpu1", "cpu2", "cpu4", "cpu8",
         "jax:cpu4", "gpu3")


@pytest.fixture(autouse=True)
def _platform_scheme_after_each_test():
    """The palette and style sheet belong to the application: leave them as the platform has them."""
    yield
    app = QApplication.instance()
    if app is not None:
        app.setPalette(QPalette())
        app.setStyleSheet("")


def plots(window) -> list:
    return [window.compare.plot.plot, window.compare.map.plot, window.sweep.view.plot]


def grounds(window) -> set[str]:
    return {plot.backgroundBrush().color().name() for plot in plots(window)}


def window_colour() -> str:
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).name()


def test_choosing_dark_turns_the_window_and_every_plot_dark_and_it_survives_a_restart(make_window, qtbot):
    window = make_window()
    assert [a.text() for a in window.menuBar().actions()] == ["&File", "&Run", "&View", "&Help"]
    assert window.theme.choice == "system" and window.actions.schemes["system"].isChecked()
    assert grounds(window) == {LIGHT.background}  # offscreen Qt reports no scheme: the platform's light palette
    window.actions.schemes["dark"].trigger()
    assert window.theme.dark and QColor(window_colour()).lightness() < 128
    assert "#e8eef5" in QApplication.instance().styleSheet()  # resources/style-dark.qss is in force
    qtbot.waitUntil(lambda: grounds(window) == {DARK.background})
    axis = window.compare.map.plot.getAxis("left")
    assert axis.textPen().color().name() == DARK.text and window.compare.plot.legend.opts["labelTextColor"].name() == DARK.text
    window.close()

    restarted = make_window()  # the same settings file: the next launch
    assert restarted.theme.choice == "dark" and restarted.actions.schemes["dark"].isChecked()
    assert grounds(restarted) == {DARK.background}  # built dark: no light flash first
    restarted.actions.schemes["light"].trigger()
    qtbot.waitUntil(lambda: grounds(restarted) == {LIGHT.background})
    assert not restarted.theme.dark and "#e8eef5" not in QApplication.instance().styleSheet()


def test_system_follows_the_desktop_when_it_changes_and_a_chosen_scheme_does_not(make_window, qtbot):
    window = make_window()
    hints = QGuiApplication.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # as the platform does when the desktop turns dark
    qtbot.waitUntil(lambda: window.theme.dark and grounds(window) == {DARK.background})
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    qtbot.waitUntil(lambda: not window.theme.dark and grounds(window) == {LIGHT.background})
    window.theme.choose("light")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.wait(50)
    assert not window.theme.dark and grounds(window) == {LIGHT.background}


def test_exported_pictures_stay_light_in_the_dark_scheme_and_the_dialogs_say_so(make_window, qtbot, tmp_path,
                                                                               monkeypatch):
    window = make_window()
    window.theme.choose("dark")
    qtbot.waitUntil(lambda: grounds(window) == {DARK.background})
    assert window.sweep.open_csv(str(SWEEP_CSV))
    window.sweep.view.plot.resize(600, 400)
    for path, export in ((tmp_path / "live.png", lambda p: window.exports.export_plot(str(p)) == ""),
                         (tmp_path / "sweep.png", lambda p: window.sweep.view.plot.export_png(str(p)))):
        assert export(path)
        image = QImage(str(path))
        assert image.pixelColor(image.width() - 3, image.height() // 2).name() == LIGHT.background
    assert grounds(window) == {DARK.background}  # the window is dark again after the export
    titles = []
    monkeypatch.setattr(window.exports.dialogs, "save_path", lambda parent, title, *a: titles.append(title) or "")
    window.exports.ask_export_plot("png")
    window.exports.ask_export_plot("svg")
    assert titles and all("drawn light" in t for t in titles)


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_lane_colours_stand_out_on_the_plot_and_stay_apart(qapp, colors):
    for lane in LANES:
        assert contrast(lane_color(lane, colors.dark), colors.background) >= 3.0, lane
    # Lanes that share a plot differ from each other, not only from the ground: every two of this machine's
    # lanes are of hues at least 20 degrees apart, or clearly lighter or darker than each other.
    local = ["cpu", "cpu1", "gpu0", "jax:cpu", "jax:cpu1", "jax:gpu0", "torch:cpu", "torch:cpu1", "torch:gpu0"]
    for i, a in enumerate(local):
        for b in local[i + 1:]:
            ca, cb = lane_color(a, colors.dark), lane_color(b, colors.dark)
            hue = abs(ca.hslHueF() - cb.hslHueF()) * 360
            assert min(hue, 360 - hue) >= 20 or contrast(ca, cb) >= 1.5, (a, b, ca.name(), cb.name())
    # The pairs a machine's crossover is about are of clearly different hues: CPU and GPU, TensorFlow and JAX.
    for a, b in (("cpu", "gpu0"), ("jax:cpu", "jax:gpu0"), ("cpu", "jax:cpu"), ("torch:cpu", "torch:gpu0")):
        hue = abs(lane_color(a, colors.dark).hslHueF() - lane_color(b, colors.dark).hslHueF()) * 360
        assert min(hue, 360 - hue) >= 45, (a, b, hue)
    assert contrast(colors.text, colors.background) >= 7 and contrast(colors.error, colors.background) >= 4.5


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_the_style_sheet_colours_reads_in_both_schemes(make_window, scheme):
    window = make_window()
    window.theme.choose(scheme)
    window.say("Something went wrong.", error=True)
    labels = [label for label in window.findChildren(QLabel) if label.objectName()] + [window.statusBar()]
    assert len(labels) > 5
    for label in labels:
        label.ensurePolished()
        fg = label.palette().color(label.foregroundRole())
        bg = label.palette().color(label.backgroundRole())
        assert contrast(fg, bg) >= 4.5, f"{label.objectName() or 'status bar'}: {fg.name()} on {bg.name()}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_unticked_box_shows_its_edge_in_both_schemes(make_window, scheme):
    """Fusion drew a dark scheme's unticked box darker than the window around it: a box nobody could see."""
    from PySide6.QtWidgets import QCheckBox
    window = make_window()
    window.theme.choose(scheme)
    box = next(b for b in window.findChildren(QCheckBox) if b.isVisibleTo(window))
    ticked = box.isChecked()
    try:
        for state in (False, True):
            box.setChecked(state)
            image = box.grab().toImage()
            ground = window.palette().color(QPalette.ColorRole.Window)
            edge = max((contrast(image.pixelColor(x, y), ground) for x in range(min(18, image.width()))
                        for y in range(image.height())), default=1.0)
            assert edge >= 1.5, (scheme, state, ground.name())
    finally:
        box.setChecked(ticked)


def test_icons_are_scalable_and_sharp_at_twice_the_scale(qapp):
    for name in ("crossover", "start", "stop", "export", "clear", "delete"):
        icon_ = icon(name)
        assert not icon_.isNull() and icon_.availableSizes() == []  # the SVG engine: drawn at any size, not scaled up
        pixmap = icon_.pixmap(QSize(20, 20), 2.0)
        assert (pixmap.width(), pixmap.height(), pixmap.devicePixelRatio()) == (40, 40, 2.0)


def test_a_missing_resource_warns_and_the_tests_make_it_an_error(qapp):
    with pytest.warns(ResourceMissing, match="no-such-icon.svg"):
        assert icon("no-such-icon").isNull()
    with pytest.raises(ResourceMissing):  # pyproject.toml's filterwarnings: a missing resource fails a test
        icon("no-such-icon")


def test_a_restyled_plot_redraws_the_legend_entries_it_already_has(qtbot):
    import pyqtgraph as pg

    from crossover_lab.gui.theme.scheme import style_plot

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.addLegend()
    plot.plot([1, 2], [3, 4], name="cpu · CPU")
    style_plot(plot, DARK)
    (_sample, label), = plot.getPlotItem().legend.items
    assert DARK.text in label.item.toHtml() and plot.backgroundBrush().color().name() == DARK.background
