"""Fixtures for the GUI tests: a private CROSSOVER_HOME per test, canned device lists, a window factory.

tests/conftest.py registers this module (pytest_plugins): a test names `gui_home` or `make_window` as an argument
and imports nothing for it; the plain functions (no_gpu_options, lane_processes, …) are imported as usual.
(conftest.py also fails a test that leaves a QThread running, and the suite if a lane process outlives it.)
"""
from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import psutil  # noqa: E402
import pytest  # noqa: E402

from crossover_lab.core.machine import GPU_HINT
from crossover_lab.core.config import LaneSpec
from crossover_lab.core.engine.devices import LaneOption, cpu_options

NO_GPU_REASON = f"No GPU is visible to TensorFlow: {GPU_HINT['tensorflow']}"


def no_gpu_options(pool: object = None, stop: threading.Event | None = None) -> list[LaneOption]:
    """What discover() reports on a machine without a GPU (TensorFlow only), without starting a probe."""
    return cpu_options("tensorflow", True) + [LaneOption(LaneSpec("gpu"), "GPU", False, NO_GPU_REASON)]


def one_gpu_options(pool: object = None, stop: threading.Event | None = None) -> list[LaneOption]:
    """What discover() reports with one GPU (as on an H200 machine)."""
    return cpu_options("tensorflow", True) + [LaneOption(LaneSpec("gpu", 0), "GPU:0 (NVIDIA H200)", True)]


def held_discovery(found: threading.Event):
    """A discover_fn that answers no_gpu_options only once `found` is set (at most 30 s): lanes still probed."""
    def discover(pool: object = None, stop: threading.Event | None = None) -> list[LaneOption]:
        found.wait(30)
        return no_gpu_options()
    return discover


@pytest.fixture
def gui_home(tmp_path, monkeypatch) -> str:
    """A fresh CROSSOVER_HOME (settings, autosaves, lane logs) and KERAS_HOME for one test."""
    home = tmp_path / "crossover-home"
    home.mkdir()
    monkeypatch.setenv("CROSSOVER_HOME", str(home))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    return str(home)


# Pools whose lanes outlive a test on purpose (conftest.py's session_lanes): not a test's leftovers.
KEPT_POOLS: list = []


def lane_processes() -> list[psutil.Process]:
    """Lane processes (multiprocessing spawn children) of this process that are still alive, but for the lanes the
    session keeps for every test (conftest.py session_lanes)."""
    kept = {lane.pid for pool in KEPT_POOLS for lane in pool.lanes() if lane.pid is not None}
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE or child.pid in kept:
                continue
            cmdline = " ".join(child.cmdline())
        except psutil.NoSuchProcess:
            continue
        if "resource_tracker" not in cmdline:  # multiprocessing's own helper, not a lane
            alive.append(child)
    return alive


@pytest.fixture
def make_window(qtbot, gui_home):
    """MainWindow factory: canned discovery (no probe processes), no pre-start, no recovery offer by default."""
    from crossover_lab.gui.window.main_window import MainWindow

    def make(**kwargs: object) -> MainWindow:
        options = {"discover_fn": no_gpu_options, "prestart": False, "offer_recovery": False, **kwargs}
        window = MainWindow(**options)
        qtbot.addWidget(window)
        qtbot.waitUntil(lambda: not window.controller.discovering, timeout=10_000)
        return window

    return make


@pytest.fixture
def scripted(monkeypatch):
    """Scripted lanes (tests/scripted_lanes.py) for every pool made during the test, the CLI's and the window's
    included: `scripted.scripts["gpu0"] = gpu_like()` sets a lane's script before its first job; GPU lanes are
    probed as on a machine with a driver, and answer with the GPUs their script names."""
    from crossover_lab.core.engine import devices, pool
    from scripted_lanes import ScriptedMachine

    machine = ScriptedMachine()
    monkeypatch.setattr(pool, "default_channels", machine.channel)
    monkeypatch.setattr(devices, "nvidia_driver_present", lambda: True)
    yield machine
    machine.close()


@pytest.fixture
def scripted_pool(scripted):
    """A LanePool of scripted lanes (the `scripted` machine): cpu with a CPU's shape (a small fixed cost, a low
    throughput), cpu1 slower per step but faster per FLOP, so they cross at about 21 MFLOP per batch."""
    from crossover_lab.core.engine.pool import LanePool
    from scripted_lanes import cpu_like

    scripted.scripts.setdefault("cpu", cpu_like(fixed_ms=0.3, gflops=20, noise=0.02))
    scripted.scripts.setdefault("cpu1", cpu_like(fixed_ms=1.0, gflops=60, noise=0.02, seed=1))
    lanes = LanePool()
    yield lanes
    lanes.close()
