"""The crossover map's predicted lanes: lanes of device profiles the user chose (a shipped profile by name, or a
profile file), predicted for the window's model at the map's widths and drawn dashed beside the measured lanes.

A predicted lane is never a point of the map: it enters no line, crossing, finding or verdict (those are
gui/compare/map_points.py's and core/files/findings.py's, of measured points only). Its 95% interval is a light
band; a stretch that touches an extrapolation (outside what the profile measured: no interval) is dotted.
"""
from __future__ import annotations
from ..widgets.plain_text import rich

import math
from dataclasses import dataclass
from typing import Callable, Iterable

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QInputDialog, QMenu, QToolButton, QWidget

from ...core.config import ConfigError, RunConfig
from ...core.json_data import JsonValue
from ...core.machine import HostInfo
from ...core.plain_text import ONE_LINE, printable
from ...core.files.predicted import AskedPrediction, PredictedLane, PredictedPoint, has_widths
from ...core.files.device_profile import DeviceProfile, find_profile, read_profile, shipped_profiles
from ...core.words.predicted import added_words, already_words, no_lane_words, predicted_label
from ..resources import icon
from ..widgets.file_dialogs import FileDialogs
from ..widgets.plots import plot_item

# The widths a predicted lane is drawn at with nothing measured of its model; beside measured widths, those of
# these within REACH times of them, so the dashed line runs a little past the measured ones either side.
LADDER = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
REACH = 4
BAND_ALPHA = 45  # of 255: the interval's band stays behind every measured line and point
# What reading a profile someone sent may raise: ConfigError with its sentence; an OSError or a ValueError that a
# reader below did not turn into one (such as the ValueError of a number of 5,000 digits) is said too.
UNREADABLE = (ConfigError, OSError, ValueError)


def unreadable_words(path: str, exc: Exception) -> str:
    """The sentence for a profile that could not be read: ConfigError's own, else what went wrong, naming the file."""
    if isinstance(exc, ConfigError):
        return str(exc)
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"cannot read the profile {printable(path, ONE_LINE)}: {why}"


@dataclass(frozen=True)
class PredictedCurve:
    """One predicted lane for the window's model, at each width drawn."""

    lane: PredictedLane
    points: tuple[PredictedPoint, ...]

    @property
    def label(self) -> str:
        return predicted_label(self.lane)

    @property
    def drawn(self) -> list[PredictedPoint]:
        return [p for p in self.points if not p.prediction.refused]

    @property
    def extrapolated(self) -> bool:
        return any(not p.prediction.has_interval for p in self.drawn)


def widths_for(measured: Iterable[int]) -> tuple[int, ...]:
    """The widths to predict at: the measured ones and the ladder's near them, or the ladder alone."""
    measured = sorted({w for w in measured if w > 0})
    if not measured:
        return LADDER
    near = [w for w in LADDER if measured[0] / REACH <= w <= measured[-1] * REACH]
    return tuple(sorted(set(measured) | set(near)))


class PredictedLanes(QObject):
    """The predicted lanes chosen, and the model they are predicted for (the window's)."""

    changed = Signal()  # a lane was added or removed, or the model changed: the map draws them again
    said = Signal(str, bool)  # a sentence for the status bar, and whether it is a problem

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lanes: list[PredictedLane] = []
        self.config: RunConfig | None = None
        # This machine's host info (the window's, asked once per process), for a profile of other versions to say
        # so; None: not said.
        self.host: Callable[[], JsonValue] | None = None

    def here(self) -> HostInfo | None:
        """This machine, as the profiles' versions are compared with it."""
        return HostInfo.from_json(self.host()) if self.host is not None else None

    @property
    def lanes(self) -> tuple[PredictedLane, ...]:
        return tuple(self._lanes)

    def add(self, profile: DeviceProfile, lane: str) -> str:
        """Draw `lane` of `profile`; "" when it is drawn, else why not (also said)."""
        found = profile.lane(lane)
        if found is None:
            return self._problem(no_lane_words(profile.name, lane, list(dict.fromkeys(x.lane for x in profile.lanes))))
        chosen = PredictedLane(profile, found.lane)  # by the profile's own name ("h200/jax:gpu0" is "jax:gpu0")
        if any(x.key == chosen.key for x in self._lanes):
            return self._problem(already_words(chosen))
        self._lanes.append(chosen)
        self.said.emit(added_words(chosen, self.here()), False)
        self.changed.emit()
        return ""

    def add_named(self, name_or_path: str, lane: str) -> str:
        """A shipped profile by its name (or a profile file by its path), and its lane."""
        try:
            profile = find_profile(name_or_path)
        except UNREADABLE as exc:
            return self._problem(unreadable_words(name_or_path, exc))
        return self.add(profile, lane)

    def remove(self, label: str) -> bool:
        """Remove the predicted lane of that label ("jax:gpu0, predicted from h200-2026-11-30")."""
        kept = [x for x in self._lanes if predicted_label(x) != label]
        if len(kept) == len(self._lanes):
            return False
        self._lanes = kept
        self.changed.emit()
        return True

    def clear(self) -> None:
        if self._lanes:
            self._lanes = []
            self.changed.emit()

    def set_model(self, config: RunConfig | None) -> None:
        """The window's model changed (None while a setting is invalid: the last valid one stays drawn)."""
        if config is not None and config != self.config:
            self.config = config
            if self._lanes:
                self.changed.emit()

    def curves(self, measured_widths: Iterable[int]) -> list[PredictedCurve]:
        """Each predicted lane for the window's model at the widths drawn ([] for a model without widths)."""
        if self.config is None or not has_widths(self.config):
            return []
        widths = widths_for(measured_widths)
        return [PredictedCurve(x, tuple(x.along(self.config, widths))) for x in self._lanes]

    def asked(self, measured_widths: Iterable[int]) -> list[AskedPrediction]:
        """What a report of the window lists: each predicted lane on the window's model, at the widths drawn."""
        if self.config is None:
            return []
        widths = widths_for(measured_widths) if has_widths(self.config) else ()
        return [AskedPrediction(x, self.config, widths) for x in self._lanes]

    def _problem(self, text: str) -> str:
        self.said.emit(text[:1].upper() + text[1:] + ("" if text.endswith(".") else "."), True)
        return text


class PredictedButton(QToolButton):
    """"Predicted lanes": a menu of the shipped profiles' lanes, a profile file, and the lanes drawn to remove."""

    def __init__(self, lanes: PredictedLanes, dialogs: FileDialogs | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lanes, self.dialogs = lanes, dialogs
        self.setText("Predicted lanes")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolTip("Draw a lane of a device profile (a machine measured elsewhere) as a dashed line predicted "
                        "for this model, beside the measured lanes and apart from them; or remove one.")
        self.setMenu(QMenu(self))
        self.menu().aboutToShow.connect(self._on_menu_about_to_show)  # pyright: ignore[reportOptionalMemberAccess]

    @Slot()
    def _on_menu_about_to_show(self) -> None:
        menu = self.menu()
        assert menu is not None
        menu.clear()
        menu.addSection("Add a lane of a shipped profile")
        for profile in shipped_profiles():
            sub = menu.addMenu(profile.name)
            for name in dict.fromkeys(x.lane for x in profile.lanes):
                sub.addAction(name).triggered.connect(
                    lambda _checked=False, p=profile, n=name: self.lanes.add(p, n))
        if self.dialogs is not None:
            menu.addAction("From a profile file…").triggered.connect(self.ask_file)
        if self.lanes.lanes:
            menu.addSection("Remove")
            for lane in self.lanes.lanes:
                label = predicted_label(lane)
                menu.addAction(icon("clear"), label).triggered.connect(
                    lambda _checked=False, text=label: self.lanes.remove(text))
            menu.addAction("Remove every predicted lane").triggered.connect(self.lanes.clear)

    @Slot()
    def ask_file(self) -> None:
        """A profile file from a dialog (starting in the last folder chosen), then its lane where it has several."""
        assert self.dialogs is not None
        path = self.dialogs.open_path(self, "Add a predicted lane from a device profile",
                                      "Device profiles (*.json);;All files (*)")
        if not path:
            return
        try:  # a slot: whatever a damaged file raises is said in the status line, never left to escape it
            profile = read_profile(path)
        except UNREADABLE as exc:
            self.lanes._problem(unreadable_words(path, exc))
            return
        names = list(dict.fromkeys(x.lane for x in profile.lanes))
        lane, ok = (names[0], True) if len(names) == 1 else QInputDialog.getItem(
            self, "Predicted lane", f"Which lane of {profile.name}?", names, 0, False)
        if ok and lane:
            self.lanes.add(profile, lane)


def draw_curve(plot: pg.PlotWidget, curve: PredictedCurve, x_of: Callable[[PredictedPoint], float],
               color: QColor) -> None:
    """One predicted lane on a log-log plot: the band of its intervals, dashed between points with one, dotted
    where a stretch touches an extrapolation, a hollow diamond at each point with an interval."""
    pts = curve.drawn
    xs = [x_of(p) for p in pts]
    ys = [p.prediction.ms for p in pts]
    firm = [p.prediction.has_interval for p in pts]
    band = QColor(color)
    band.setAlpha(BAND_ALPHA)
    start = 0
    while start < len(pts):  # the band over each run of points with an interval
        end = start
        while end + 1 < len(pts) and firm[end + 1] and firm[start]:
            end += 1
        if firm[start] and end > start:
            lx = [math.log10(x) for x in xs[start:end + 1]]
            lo = pg.PlotCurveItem(lx, [math.log10(p.prediction.lo) for p in pts[start:end + 1]])
            hi = pg.PlotCurveItem(lx, [math.log10(p.prediction.hi) for p in pts[start:end + 1]])
            fill = pg.FillBetweenItem(lo, hi, brush=pg.mkBrush(band))
            fill.setZValue(-10)
            plot_item(plot).addItem(fill, ignoreBounds=True)
        start = end + 1
    dashed = pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine)
    dotted = pg.mkPen(color, width=1.5, style=Qt.PenStyle.DotLine)
    for i in range(len(pts) - 1):
        both = firm[i] and firm[i + 1]
        plot.addItem(pg.PlotDataItem(xs[i:i + 2], ys[i:i + 2], pen=dashed if both else dotted,
                                     name=rich(curve.label if both else f"{curve.label} (extrapolated)")))
    at = [i for i, f in enumerate(firm) if f]
    if at:
        plot.addItem(pg.PlotDataItem([xs[i] for i in at], [ys[i] for i in at], pen=None, symbol="d", symbolSize=7,
                                     symbolBrush=None, symbolPen=pg.mkPen(color, width=1.5), name=rich(curve.label)))
