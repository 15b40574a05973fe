"""`python main.py [--screenshot PATH] [--run | --ramp WIDTHS] [--after SECONDS]`: the window, or a picture of it."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from types import FrameType

import psutil
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from ..core.config import ConfigError, RunConfig
from ..core.cli.desktop_entry import APP_ID
from ..core.paths import PROG
from ..core.cli.stopping import STOP_SIGNALS, shield_resource_tracker
from .resources import icon

SIGNAL_POLL_MS = 200  # lets Python see Ctrl+C while Qt's event loop runs


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG, description=f"Crossover's window. For the command line: {PROG} devices|run|sweep|analyze|anatomy.")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="save a PNG of the window after --after seconds, then exit")
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--run", action="store_true",
                       help="start a run with the last configuration as soon as its lanes are known")
    start.add_argument("--ramp", metavar="WIDTHS",
                       help="start a ramp through these widths (16,256,2048) on the last configuration's "
                            "lanes, as the Ramp button does, as soon as they are known")
    parser.add_argument("--tab", choices=("compare", "sweep", "why"), default="compare",
                        help="the tab to show (with --run: run a comparison, or the sweep as last configured)")
    parser.add_argument("--size", default="1440x900", metavar="WxH",
                        help="the window's size for --screenshot (default 1440x900)")
    parser.add_argument("--after", type=float, default=3.0, metavar="SECONDS",
                        help="seconds before the screenshot (default 3)")
    args = parser.parse_args(argv)
    if args.after < 0:
        parser.error(f"--after {args.after}: choose 0 seconds or more")
    if args.ramp is not None:
        from ..core.study.sweep import parse_sweep_widths, ramp_plan

        try:
            ramp_plan(RunConfig(), parse_sweep_widths(args.ramp))  # refused now, not in the status bar later
        except ConfigError as exc:
            parser.error(f"--ramp {args.ramp}: {exc}")
    try:
        args.size = tuple(int(v) for v in args.size.lower().split("x"))
        if len(args.size) != 2 or min(args.size) < 200:
            raise ValueError
    except ValueError:
        parser.error(f"--size {args.size}: give the width and height in pixels, e.g. 1024x700")
    if args.screenshot:
        folder = os.path.dirname(os.path.abspath(args.screenshot))
        if not os.path.isdir(folder):
            parser.error(f"--screenshot {args.screenshot}: the folder {folder} does not exist")
    return args


def seconds_since_process_start() -> float:
    """Seconds since this process started, its interpreter's start and imports included. On Linux read against the
    boot clock: /proc/uptime less the process's start in clock ticks (10 ms steps). psutil's create_time adds the
    start to /proc/stat's boot time, which is whole seconds: the age it gave was up to 1 s long, by the same amount
    for every launch until the next boot (0.6 s here: "window shown 1.4 s" was 0.8 s)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat, open("/proc/uptime", encoding="ascii") as uptime:
            start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime; [0] is field 3
            return float(uptime.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time() - psutil.Process().create_time()


def save_screenshot(window: QWidget, path: str) -> bool:
    """Grab the window as it is drawn now and save it as PNG."""
    QApplication.processEvents()
    return window.grab().save(path, "PNG")


def no_display() -> bool:
    """On Linux and the BSDs, Qt needs X11 or Wayland unless a platform was chosen (offscreen, …)."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return False
    return not any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


OPENING_TEXT = ("Crossover is opening…\n\nThe window follows in a few seconds (its plots load first); then every "
                "lane starts its framework in a process of its own.")


def opening_card() -> QLabel:
    """What the screen shows while the window's modules load (pyqtgraph alone takes seconds on a busy machine): a
    small card, shown within a second of launch and closed when the window is up."""
    card = QLabel(OPENING_TEXT)
    card.setWindowTitle("Crossover")
    card.setObjectName("openingCard")
    card.setWordWrap(True)
    card.setAlignment(Qt.AlignmentFlag.AlignCenter)
    card.setMargin(24)
    card.setMinimumWidth(460)
    card.setWindowFlag(Qt.WindowType.SplashScreen)
    card.show()
    QApplication.processEvents()  # painted now, before the imports below take the thread
    return card


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if no_display():
        # Qt would abort the process with a list of platform plugins: say what to do instead.
        print("crossover: no display here (neither DISPLAY nor WAYLAND_DISPLAY is set). Run the window with "
              f"xvfb-run, or use the command line: {PROG} devices | run | sweep | analyze | anatomy "
              f"({PROG} --help).", file=sys.stderr)
        return 2
    existing = QApplication.instance()  # typed QCoreApplication: in the window's process it is a QApplication
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Crossover")
    app.setOrganizationName("Crossover")
    app.setDesktopFileName(APP_ID)  # Wayland and X11 docks match the window to its desktop entry and icon
    app.setWindowIcon(icon("crossover"))
    card = None if args.screenshot else opening_card()
    card_after = seconds_since_process_start()
    from pyqtgraph.util.garbage_collector import GarbageCollector  # the plots' library: seconds, after the card

    # Python's garbage is collected on this thread, on a timer, never by whichever thread happens to allocate:
    # a collection in a lane's or a job's thread that frees a widget runs Qt's destructor there, which can
    # deadlock with this thread on Qt's mutex and the GIL (seen in the test suite: the window froze for good).
    collector = GarbageCollector(interval=1.0)
    from .window.main_window import MainWindow

    # The window's Theme sets the palette and the style sheets (resources/*.qss) of the remembered scheme.
    window = MainWindow(offer_recovery=False if args.screenshot else None)
    if args.screenshot:
        window.resize(*args.size)  # a picture has the size asked for, whatever the last session's was
    if args.tab != "compare":
        window.tabs.setCurrentWidget(getattr(window, args.tab))
    outcome: dict = {"saved": True, "signal": None}
    # Stop signals are heard before the window is shown: a `kill` the moment it appears (a script that waited for
    # it) closed the process by the default action, and the window's size and state went unsaved.

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        # Ctrl-C, a closed terminal and `kill` close the window as its close button does: the run in
        # progress is stopped and saved, the lanes end, and the process exits with 128 + the signal.
        outcome["signal"] = outcome["signal"] or signum
        QTimer.singleShot(0, window.close)

    shield_resource_tracker()
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    poll = QTimer(window)
    poll.timeout.connect(lambda: None)
    poll.start(SIGNAL_POLL_MS)
    window.show()
    shown_after = seconds_since_process_start()
    if card is not None:
        card.close()
        if os.environ.get("CROSSOVER_SAY_START"):  # for benchmarks/first_steps.py: when each appeared
            print(f"crossover: opening card shown {card_after:.2f} s, window shown {shown_after:.2f} s after the "
                  "process started", file=sys.stderr, flush=True)
    if args.run or args.ramp is not None:
        QTimer.singleShot(0, lambda: window.desk.start_when_ready(args.ramp))
    if args.screenshot:
        print(f"crossover: window shown {shown_after:.2f} s after the process started", file=sys.stderr)

        def shoot() -> None:
            outcome["saved"] = save_screenshot(window, args.screenshot)
            print(f"crossover: {'saved' if outcome['saved'] else 'could not save'} {args.screenshot} "
                  f"({window.width()}x{window.height()})", file=sys.stderr)
            window.close()

        QTimer.singleShot(int(args.after * 1000), shoot)
    code = app.exec()
    if window.isVisible():
        # The event loop ended without a close: the display went away (a logout, dropped X forwarding, a crashed X
        # server: Qt's xcb plugin says "The X11 connection broke" and quits the loop with 1). Closed here as by its
        # close button, the run in progress is stopped and saved and the lanes end. Left open, the lanes' processes
        # kept the interpreter's exit waiting on them for good (multiprocessing joins its children at exit), and a
        # stop signal only queued a close for the event loop that no longer ran (issue 56 #16).
        window.close()
    collector.timer.stop()
    if outcome["signal"] is not None:
        return 128 + outcome["signal"]
    return code if outcome["saved"] else 1
