"""The window's actions, menus and toolbar: one place for every command, its shortcut and its tooltip."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence
from PySide6.QtWidgets import QMainWindow, QToolBar

from ..resources import icon
from ..theme.scheme import Theme

SCHEME_ACTIONS = {
    "system": ("&System", "Light or dark as the desktop is set, and follow it when it changes"),
    "light": ("&Light", "A light window and plots, whatever the desktop's setting"),
    "dark": ("&Dark", "A dark window and plots, whatever the desktop's setting (exported pictures stay light)"),
}


@dataclass(frozen=True)
class Actions:
    start: QAction
    ramp: QAction
    stop: QAction
    export_timings: QAction
    export_png: QAction
    export_svg: QAction
    export_report: QAction
    clear_compiled: QAction
    clear_map: QAction
    profile: QAction
    calibrate: QAction
    reset: QAction
    quit: QAction
    about: QAction
    guide: QAction
    schemes: dict[str, QAction]  # View: System, Light, Dark (one checked)
    presentation: QAction  # View > Presentation (F11): checkable, goes to the theme


def _action(window: QMainWindow, text: str, tip: str, shortcuts: tuple[str, ...] = (),
            icon_name: str = "") -> QAction:
    action = QAction(icon(icon_name) if icon_name else QIcon(), text, window)
    if shortcuts:
        action.setShortcuts([QKeySequence(s) for s in shortcuts])
        keys = " or ".join(QKeySequence(s).toString(QKeySequence.SequenceFormat.NativeText) for s in shortcuts)
        tip = f"{tip} ({keys})"
    action.setToolTip(tip)
    action.setStatusTip(tip)
    return action


def _scheme_actions(window: QMainWindow, theme: Theme) -> dict[str, QAction]:
    """The colour schemes, one checked; a choice goes straight to the theme, which applies and remembers it."""
    group = QActionGroup(window)
    actions = {}
    for name, (text, tip) in SCHEME_ACTIONS.items():
        action = actions[name] = _action(window, text, tip)
        action.setCheckable(True)
        action.setChecked(name == theme.choice)
        action.triggered.connect(lambda _checked=False, name=name: theme.choose(name))
        group.addAction(action)
    return actions


def build_actions(window: QMainWindow, theme: Theme) -> Actions:
    """Create the actions, put them in the menus and the toolbar; the window connects them, except the
    View menu's, which go to `theme`."""
    a = Actions(
        start=_action(window, "&Start", "Train the model on every chosen lane", ("F5", "Ctrl+R"), "start"),
        ramp=_action(window, "R&amp through widths", "One run that steps every lane through the ramp's widths, "
                     "so the lines cross as you watch", ("Ctrl+Shift+R",)),
        stop=_action(window, "St&op", "Stop every lane within about a second; what was measured is kept",
                     ("Esc",), "stop"),
        export_timings=_action(window, "&Export timings…", "Write the per-batch CSV and JSON sidecar "
                               "of every run since launch", ("Ctrl+E",), "export"),
        export_png=_action(window, "Export plot as &PNG…", "Save the live plot as a PNG image"),
        export_svg=_action(window, "Export plot as S&VG…", "Save the live plot as an SVG drawing"),
        export_report=_action(window, "Export &report…", "One HTML file to cite: the answer, the pictures with "
                              "their numbers, the settings and machines, for the run, sweep or anatomy the "
                              "current tab shows (its source files are written beside it)", ("Ctrl+Shift+E",)),
        clear_compiled=_action(window, "Clear compiled &cache", "Delete the programs JAX lanes compiled and kept "
                               "(the next run of each model compiles it again; figures are unaffected)"),
        clear_map=_action(window, "&Clear crossover map", "Remove every point from the crossover map",
                          icon_name="clear"),
        profile=_action(window, "Measure a device &profile…", "Measure this machine's lanes into a device profile "
                        "(six short sweeps, with a time estimate): a file to send, from which another machine's "
                        "window predicts this one's lanes", ("Ctrl+Shift+P",)),
        calibrate=_action(window, "&Calibrate the rule here…", "Sweep a lane against its twin (two equal lanes) "
                          "several times and keep this machine's measured false-lead rate: every answer quotes it"),
        reset=_action(window, "&Reset to defaults", "Default model, training settings, lanes and schedule"),
        quit=_action(window, "&Quit", "Stop any run and close Crossover", ("Ctrl+Q",)),
        about=_action(window, "&About Crossover", "Versions, devices and where files are kept", ("F1",)),
        guide=_action(window, "&Guide", "The guide's pages on the window, the command line, serving, the numbers "
                      "and the files (docs/guide/), in the system's viewer"),
        schemes=_scheme_actions(window, theme),
        presentation=_action(window, "&Presentation", "Large fonts, plot ticks and headline for a room; the History "
                             "and the toolbar hidden", ("F11", "Ctrl+=")),
    )
    a.presentation.setCheckable(True)
    a.presentation.setChecked(theme.presentation)
    a.presentation.toggled.connect(theme.present)
    menus = window.menuBar()
    file_menu = menus.addMenu("&File")
    for action in (a.export_timings, a.export_png, a.export_svg, a.export_report):
        file_menu.addAction(action)
    file_menu.addSeparator()
    file_menu.addAction(a.clear_compiled)
    file_menu.addAction(a.reset)
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    run_menu = menus.addMenu("&Run")
    for action in (a.start, a.ramp, a.stop, a.clear_map):
        run_menu.addAction(action)
    run_menu.addSeparator()
    run_menu.addAction(a.profile)
    run_menu.addAction(a.calibrate)
    view_menu = menus.addMenu("&View")
    view_menu.addAction(a.presentation)
    view_menu.addSection("Colour scheme")
    for action in a.schemes.values():
        view_menu.addAction(action)
    help_menu = menus.addMenu("&Help")
    help_menu.addAction(a.guide)
    help_menu.addAction(a.about)
    toolbar = QToolBar("Run", window)
    toolbar.setObjectName("runToolbar")
    toolbar.setMovable(False)
    toolbar.setIconSize(QSize(20, 20))
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in (a.start, a.stop, a.export_timings):
        toolbar.addAction(action)
    window.addToolBar(toolbar)
    return a
