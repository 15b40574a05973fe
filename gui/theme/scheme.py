"""Light and dark: the scheme chosen in View (System, Light, Dark), applied to the application, and the
colours every plot draws with, which follow the application's palette.

The application palette is the one source: Theme sets it (the platform's, or ours where the platform
cannot switch), and each plot's PlotTheme reads it whenever it changes.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from .palettes import explicit_palette, is_dark_palette
from ..resources import style_sheet
from ..settings import AppSettings

SCHEMES = ("system", "light", "dark")
SCHEME_KEY = "view/scheme"
PRESENTATION_KEY = "view/presentation"
# View > Presentation: what a room reads from the back. Fonts grow by this much, plot ticks and axis titles are at
# least TICK_PX tall (9 px at 1600×1000 before), and the headline is set large.
PRESENTATION_SCALE = 1.6
TICK_PX = 20
LEGEND_SIZE, LEGEND_PRESENTING = "9pt", "15pt"  # a plot's legend entries (pyqtgraph's default, and for a room)
PRESENTATION_SHEET = """
QLabel#verdictLabel { font-size: 30px; }
QLabel#hintLabel { font-size: 20px; }
"""
_presenting = [False]  # the application's one state, set by Theme.apply: read by every plot's style
_base_font: list[QFont] = []  # the application's font as it started (a later window's Theme must not take a scaled one)


def presenting() -> bool:
    """Whether the window is in its presentation view (View > Presentation)."""
    return _presenting[0]


@dataclass(frozen=True)
class SchemeColors:
    """What plots (and status lines) draw with under one scheme."""

    dark: bool
    background: str  # the plot's ground
    text: str  # tick numbers, axis labels, titles, legend and text on the plot
    axis: str  # axis lines, ticks and the grid (drawn with the grid's alpha)
    muted: str  # secondary markers: the warm-up key
    neutral: str  # crossover lines
    label_fill: tuple[int, int, int, int]  # behind the legend and text items, so lines under them do not show
    point_outline: str  # the ring around a point: the ground's colour, so overlapping points stay apart
    error: str  # a status line that reports a problem


LIGHT = SchemeColors(False, "#ffffff", "#222222", "#888888", "#666666", "#555555", (255, 255, 255, 210),
                     "#ffffff", "#b00020")
DARK = SchemeColors(True, "#1e1f22", "#e4e4e4", "#9a9a9a", "#a8a8a8", "#b4b4b4", (30, 31, 34, 215),
                    "#1e1f22", "#ff6b6b")


def app_is_dark() -> bool:
    """Whether the application draws dark now (False before there is an application)."""
    return QGuiApplication.instance() is not None and is_dark_palette(QGuiApplication.palette())


def scheme_colors(dark: bool | None = None) -> SchemeColors:
    """The colours of the dark or light scheme; None: of the scheme in force."""
    return DARK if (app_is_dark() if dark is None else dark) else LIGHT


def status_style(error: bool) -> str:
    """A style sheet for a status line: the scheme's error colour, or the palette's own text."""
    return f"color: {scheme_colors().error};" if error else ""


def _luminance(color: QColor) -> float:
    def linear(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * linear(color.red()) + 0.7152 * linear(color.green()) + 0.0722 * linear(color.blue())


def contrast(a: QColor | str, b: QColor | str) -> float:
    """The WCAG contrast ratio of two colours: 1 (the same) to 21 (black on white)."""
    high, low = sorted((_luminance(QColor(a)), _luminance(QColor(b))), reverse=True)
    return (high + 0.05) / (low + 0.05)


def readable(color: QColor, background: str, ratio: float = 3.0) -> QColor:
    """`color`, lightened on a dark ground or darkened on a light one until it stands out at `ratio`:1
    (WCAG's minimum for lines and symbols); unchanged where it already does."""
    ground = QColor(background)
    out = QColor(color)
    for _ in range(24):
        if contrast(out, ground) >= ratio:
            break
        out = out.lighter(112) if ground.lightness() < 128 else out.darker(112)
    return out


def style_plot(plot: pg.PlotWidget, colors: SchemeColors) -> None:
    """Ground, axes, grid, title and legend of one pyqtgraph plot; its lines and text items are the owner's."""
    plot.setBackground(colors.background)
    item = plot.getPlotItem()
    assert item is not None  # pyqtgraph types it Optional: it is None only once the plot widget is closed
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(colors.axis)
        axis.setTextPen(colors.text)
    if item.legend is not None:
        # A room's size while presenting; back to the default after, but a slide's own size (SweepPlot) is kept.
        now = item.legend.opts.get("labelTextSize")
        size = LEGEND_PRESENTING if presenting() else LEGEND_SIZE if now == LEGEND_PRESENTING else now
        item.legend.setLabelTextColor(colors.text)  # for entries added later: those there keep their colour…
        item.legend.setLabelTextSize(size)
        for _sample, label in item.legend.items:
            label.setText(label.text, color=colors.text, size=size)  # …until drawn again
        item.legend.setBrush(pg.mkBrush(*colors.label_fill))
    if item.titleLabel.text:
        item.titleLabel.setText(item.titleLabel.text, color=colors.text)
    big = presenting()
    tick = QFont()
    tick.setPixelSize(TICK_PX)
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setTickFont(tick if big else None)
        style = {"font-size": f"{TICK_PX}px"} if big else {}
        if axis.labelStyle != style:
            axis.labelStyle = style
            if axis.labelText:
                axis.setLabel(axis.labelText, axis.labelUnits or None)


# A new scheme changes the palette; the presentation view changes the application's font.
RESTYLE_EVENTS = frozenset((QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange, QEvent.Type.FontChange,
                            QEvent.Type.ApplicationFontChange))


class PlotTheme(QObject):
    """Keeps one plot in the application's scheme: styles it now, and again (with `restyle(colors)` for
    the owner's lines and text items) whenever the palette changes. `colors` is what to draw with."""

    def __init__(self, plot: pg.PlotWidget, restyle: Callable[[SchemeColors], None]) -> None:
        super().__init__(plot)
        self._plot, self._restyle = plot, restyle
        self._pending = False
        self.colors, self._presenting = scheme_colors(), presenting()
        style_plot(plot, self.colors)
        plot.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        # Theme may set two palettes in a row (the platform's, then ours): restyle once, when it settles.
        if event.type() in RESTYLE_EVENTS and not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self._on_palette_settled)
        return False

    @Slot()
    def _on_palette_settled(self) -> None:
        self._pending = False
        if scheme_colors() != self.colors or presenting() != self._presenting:
            self.apply(scheme_colors())

    def apply(self, colors: SchemeColors) -> None:
        self.colors, self._presenting = colors, presenting()
        style_plot(self._plot, colors)
        self._restyle(colors)

    @contextlib.contextmanager
    def light_for_export(self) -> Iterator[None]:
        """Draw the plot light meanwhile: exported pictures go on slides and paper, whatever the window's scheme."""
        shown = self.colors
        if shown.dark:
            self.apply(LIGHT)
        try:
            yield
        finally:
            if shown.dark:
                self.apply(scheme_colors())


class Theme(QObject):
    """The scheme chosen in View (System, Light, Dark): applied to the application at once, remembered in the
    settings, and followed when the system's scheme changes (Qt ≥ 6.5 reports it; "system" follows it)."""

    def __init__(self, settings: AppSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        saved = settings.text(SCHEME_KEY, "system")
        self.choice = saved if saved in SCHEMES else "system"
        hints = QGuiApplication.styleHints()
        self._system = hints.colorScheme()
        hints.colorSchemeChanged.connect(self._on_style_hints_color_scheme_changed)
        self._following = True
        self.presentation = settings.text(PRESENTATION_KEY, "off") == "on"
        self.apply()

    @property
    def dark(self) -> bool:
        """Whether the window draws dark now."""
        return app_is_dark()

    def choose(self, choice: str) -> None:
        """Use this scheme from now on, and at the next launch."""
        if choice not in SCHEMES:
            raise ValueError(f"colour scheme {choice!r}: choose one of {', '.join(SCHEMES)}")
        self.choice = choice
        self._settings.set_text(SCHEME_KEY, choice)
        if choice == "system":
            hints = QGuiApplication.styleHints()
            if hasattr(hints, "unsetColorScheme"):
                hints.unsetColorScheme()
            self._system = hints.colorScheme()  # it may have changed while the user's choice overrode it
        self.apply()

    def present(self, on: bool) -> None:
        """The presentation view on or off, from now on and at the next launch: fonts, plot ticks and the headline
        large enough to read from the back of a room."""
        self.presentation = on
        self._settings.set_text(PRESENTATION_KEY, "on" if on else "off")
        self.apply()

    def wanted_dark(self) -> bool | None:
        """Dark (True) or light (False) to enforce; None: the platform did not say, take its palette as it is."""
        if self.choice != "system":
            return self.choice == "dark"
        if self._system == Qt.ColorScheme.Unknown:
            return None
        return self._system == Qt.ColorScheme.Dark

    def apply(self) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)  # typed QCoreApplication; a window's Theme runs in a QApplication
        hints = app.styleHints()
        if hasattr(hints, "setColorScheme"):  # Qt ≥ 6.8: native light and dark where the platform has them
            if self.choice == "system":
                hints.unsetColorScheme()
            else:
                hints.setColorScheme(Qt.ColorScheme.Dark if self.choice == "dark" else Qt.ColorScheme.Light)
        app.setPalette(QPalette())  # the platform's palette (nothing set explicitly), which follows the system
        dark, stand_in = is_dark_palette(app.palette()), None
        wanted = self.wanted_dark()
        if wanted is not None and dark != wanted:
            # The platform cannot switch (X11 without a desktop portal, Qt < 6.8, …): our palette stands in.
            dark, stand_in = wanted, explicit_palette(wanted)
        if dark and app.style().name().lower() == "windowsvista":
            app.setStyle("Fusion")  # the Windows Vista style draws light controls whatever the palette says
        if stand_in is not None:
            app.setPalette(stand_in)
        if not _base_font:  # the application's own font, before any presentation view scaled it
            _base_font.append(QFont(app.font()))
        base = _base_font[0]
        _presenting[0] = self.presentation
        font = QFont(base)
        if self.presentation:
            size = base.pointSizeF()
            if size > 0:
                font.setPointSizeF(size * PRESENTATION_SCALE)
            else:
                font.setPixelSize(round(base.pixelSize() * PRESENTATION_SCALE))
        if app.font() != font:
            app.setFont(font)  # every widget, and (ApplicationFontChange) every plot's ticks: PlotTheme
        sheet = style_sheet(dark) + (PRESENTATION_SHEET if self.presentation else "")
        if app.styleSheet() != sheet:  # the same sheet again re-polishes every widget for nothing (0.6 s a window)
            app.setStyleSheet(sheet)

    def detach(self) -> None:
        """Stop following the system (the window closed): the next window's Theme takes over."""
        if self._following:
            QGuiApplication.styleHints().colorSchemeChanged.disconnect(self._on_style_hints_color_scheme_changed)
            self._following = False

    @Slot(Qt.ColorScheme)
    def _on_style_hints_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.choice != "system":
            return  # our own setColorScheme, or a system change that the user's choice overrides
        self._system = scheme
        # After the event that changed it: the platform may still be updating its palette.
        QTimer.singleShot(0, self, self.apply)
