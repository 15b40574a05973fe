"""Test set-up: offscreen Qt, private app folders, and a guard against leftover threads and processes."""
from __future__ import annotations

import os
import gc
import sys
import tempfile

# Before anything imports Qt or Keras: no real screen unless a test starts Xvfb itself, and no
# test reads or writes the user's settings, autosaves, logs or Keras cache.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_HOME = tempfile.mkdtemp(prefix="crossover-tests-")
os.environ["CROSSOVER_HOME"] = os.path.join(_HOME, "crossover")
os.environ["KERAS_HOME"] = os.path.join(_HOME, "keras")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_HOME, "config")
os.environ.setdefault("CROSSOVER_NO_RESTORE_PROMPT", "1")


import pytest  # noqa: E402

# The fixture modules, for every test (a test names the fixture it needs; nothing is imported for it), and the
# shared helpers' asserts rewritten as a test's own are, so a failing check_files() says what it compared.
pytest_plugins = ["gui_fixtures", "ssh_server"]
pytest.register_assert_rewrite("helpers")


def pytest_configure(config):
    """Every qtbot wait stretches with the load, as every other time bound of the suite does (helpers.wall_limit):
    a wait's timeout only keeps a broken test from hanging, and a fixed 5 s failed a theme test at load 7.9 on 2
    cores in a fresh clone's CI, with nothing wrong but the machine's other work."""
    from pytestqt.qtbot import QtBot

    import helpers

    wait_until, wait_signal = QtBot.waitUntil, QtBot.waitSignal

    def stretched(timeout: int) -> int:
        return timeout if timeout is None or timeout <= 0 else int(helpers.wall_limit(timeout / 1000) * 1000)

    def waitUntil(self, callback, *, timeout: int = 5000):  # noqa: N802 (pytest-qt's name)
        return wait_until(self, callback, timeout=stretched(timeout))

    def waitSignal(self, signal, *, timeout: int = 5000, **kwargs):  # noqa: N802
        return wait_signal(self, signal, timeout=stretched(timeout), **kwargs)

    QtBot.waitUntil, QtBot.waitSignal = waitUntil, waitSignal


# The tests of realness run in two processes, a file to a process at a time (--dist loadfile), each next file
# given to the process that comes free first. The longest files go first (longest-processing-time-first), so
# that none of them starts last while the other process has nothing left: before, the families file (over a
# minute) and the real-window file came 17th and 26th of 26. In order of `make test-lanes --durations`' sums.
LONG_FILES_FIRST = ("tests/core/files/test_nothing_lost.py", "tests/core/engine/remote/test_remote.py",
                    "tests/core/lane/test_anatomy_lanes.py", "tests/core/test_families.py",
                    "tests/gui/window/test_window_xvfb.py", "tests/gui/window/test_window_run.py",
                    "tests/core/engine/test_lanes.py", "tests/core/lane/test_compile_cache.py",
                    "tests/gui/test_app.py", "tests/core/test_saved_model.py", "tests/core/study/test_refine.py")


def pytest_collection_modifyitems(config, items):
    """A test that asks for the SSH server (tests/ssh_server.py) talks to another machine's lanes: a test of
    realness, as the `lanes` mark says, wherever it stands. The longest files first (LONG_FILES_FIRST); the
    order within a file, and of every other file, is kept."""
    for item in items:
        if "server" in getattr(item, "fixturenames", ()) or "ssh_env" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.lanes)
    rank = {path: i for i, path in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(autouse=True)
def _real_lanes_only_where_marked(request, monkeypatch):
    """A test without the `lanes` mark tests logic: it may not start a lane process (nor the app's CLI as a
    process, tests/helpers.py cli), so the fast set stays fast and says which test broke that."""
    import helpers

    allowed = request.node.get_closest_marker("lanes") is not None or \
        request.node.get_closest_marker("xvfb") is not None
    monkeypatch.setitem(helpers.REAL_LANES, "allowed", allowed)
    if not allowed:
        from crossover_lab.core.engine import local_channel

        def refuse(self, *args, **kwargs):
            helpers.refuse_unless_lanes("a real lane process")

        monkeypatch.setattr(local_channel.LocalChannel, "__init__", refuse)


@pytest.fixture(autouse=True)
def _own_noise_file(tmp_path_factory, monkeypatch):
    """Each test its own run-noise file (core/files/noise.py): a sweep one test ran never bounds another's run."""
    from crossover_lab.core.files import noise

    path = tmp_path_factory.mktemp("noise") / noise.NOISE_FILE
    monkeypatch.setattr(noise, "noise_path", lambda: path)
    yield path


# Garbage is collected in the main thread only, between tests, as the app collects it on its GUI thread
# (gui/app.py): a collection that another thread happened to start (a scripted lane's, a job's) freed a previous
# test's widgets there, and Qt's destructor in that thread and the main thread's deadlocked on Qt's mutex and the GIL.
gc.disable()


# What survived a test's collection is frozen (gc.freeze): the next test's collection and QThread search look only at
# what was made since, not at every module, widget class and array imported so far (0.25 s a test, a quarter of the
# fast set's CPU, when each scanned all of it). Every FULL_COLLECT_EVERY tests the frozen objects are let go again and
# collected with the rest, so garbage that outlived its own test is still freed, in the main thread.
FULL_COLLECT_EVERY = 40
_tests_since_full = [0]


@pytest.fixture(autouse=True)
def _no_qthread_left_behind(request):
    """Fail any test that leaves a QThread running (napari's habit); collect the test's garbage here."""
    yield
    _delete_closed_widgets()
    _tests_since_full[0] += 1
    if _tests_since_full[0] >= FULL_COLLECT_EVERY:
        _tests_since_full[0] = 0
        gc.unfreeze()
    gc.collect()
    try:
        _fail_on_running_qthreads(request)
    finally:
        gc.freeze()


def _delete_closed_widgets() -> None:
    """pytest-qt closes a test's widgets and asks Qt to delete them later, which only an event loop does: without this,
    every window of every earlier test stayed alive in the process (4,000 widgets after 20 tests), and each next
    window's style sheet and each change of scheme polished them all again."""
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is None:
        return
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if "pyqtgraph" not in sys.modules:
        return
    # pyqtgraph's plot menus have no Qt parent: they outlive their plot (with their submenus and combo boxes, 100
    # widgets a window) unless deleted once the plot they belong to is gone.
    import shiboken6
    from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu
    from PySide6.QtWidgets import QApplication

    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, ViewBoxMenu):
            view = widget.view()
            if view is None or not shiboken6.isValid(view):
                widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _fail_on_running_qthreads(request) -> None:
    if "PySide6.QtCore" not in sys.modules:
        return
    from PySide6.QtCore import QThread

    running = [o for o in gc.get_objects() if isinstance(o, QThread) and _is_running(o)]
    if running:
        for thread in running:
            thread.quit()
            thread.wait(3000)
        pytest.fail(f"{request.node.name} left {len(running)} QThread(s) running")


def _is_running(thread) -> bool:
    try:
        return thread.isRunning()
    except RuntimeError:  # the C++ object is already gone
        return False


@pytest.fixture(scope="session")
def session_lanes():
    """Real lanes kept for every test of this process (an xdist worker's): a framework is imported once per lane
    and worker, not once per test file; `close()` leaves them running, the session's end closes them."""
    from crossover_lab.core.engine.pool import LanePool

    class KeptPool(LanePool):
        def close(self, timeout: float = 2.0) -> None:
            """A command run in-process closes its pool at its end: these lanes stay for the next test."""

        def close_for_good(self) -> None:
            LanePool.close(self)

    from gui_fixtures import KEPT_POOLS

    lanes = KeptPool()
    KEPT_POOLS.append(lanes)
    yield lanes
    KEPT_POOLS.remove(lanes)
    lanes.close_for_good()


@pytest.fixture(scope="module")
def pool(session_lanes):
    """Real lanes for a test module: the session's (started once per process)."""
    return session_lanes


@pytest.fixture
def cli_lanes(session_lanes, monkeypatch):
    """The CLI's commands, run in-process (helpers.cli_in_process), on the session's real lanes instead of a pool
    of their own: a command pays no framework import where another test already started its lanes."""
    from crossover_lab.core.cli import anatomy, main, run, sweep

    for module in (anatomy, main, run, sweep):
        monkeypatch.setattr(module, "LanePool", lambda *args, **kwargs: session_lanes)
    return session_lanes


@pytest.fixture
def qsettings_tmp(tmp_path, monkeypatch):
    """QSettings written under a fresh folder for this test."""
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    return tmp_path / "settings"


def pytest_sessionfinish(session, exitstatus):
    """No lane process may outlive the suite."""
    try:
        import psutil
    except ImportError:
        return
    # multiprocessing's resource tracker is Python's own helper, not a lane.
    children = [c for c in psutil.Process().children(recursive=True)
                if "resource_tracker" not in " ".join(c.cmdline())]
    if children:
        for child in children:
            child.kill()
        print(f"\nERROR: {len(children)} child process(es) were left running after the tests", file=sys.stderr)
        session.exitstatus = 1
