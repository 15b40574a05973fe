"""The lanes panel: every lane shown, unavailable ones disabled with why, the default comparison, contention."""
from __future__ import annotations

import pytest
from gui_fixtures import lane_processes, no_gpu_options, one_gpu_options
from helpers import load_words, wait_for, wall_limit

from crossover_lab.core.engine.devices import host_info
from crossover_lab.gui.panels.lanes import LanesPanel, default_selection
from crossover_lab.core.config import Schedule
from crossover_lab.core.words.run import contention_note
from crossover_lab.core.engine.devices import unprobed_options as known_options


@pytest.fixture
def panel(qtbot):
    widget = LanesPanel()
    qtbot.addWidget(widget)
    return widget


def test_without_a_gpu_gpu_lanes_are_disabled_with_an_explanation(panel):
    panel.set_options(no_gpu_options())
    gpu = panel.boxes["gpu0"]
    assert not gpu.isEnabled() and not gpu.isChecked()
    assert "gpu extra" in gpu.toolTip() and "pip install -e '.[gpu]'" in gpu.toolTip()
    assert "NVIDIA driver" in gpu.toolTip()
    assert panel.boxes["cpu"].isEnabled() and panel.boxes["cpu1"].isEnabled()


def test_without_a_gpu_the_default_is_all_cores_against_one_thread(panel):
    panel.set_options(no_gpu_options())
    assert panel.selected_names() == ["cpu", "cpu1"]
    assert default_selection(no_gpu_options()) == ["cpu", "cpu1"]


def test_with_a_gpu_the_default_is_cpu_against_the_first_gpu(panel):
    panel.set_options(one_gpu_options())
    assert panel.selected_names() == ["cpu", "gpu0"]
    assert "NVIDIA H200" in panel.boxes["gpu0"].text()


def test_backends_that_are_not_installed_show_the_install_command(panel):
    options = known_options()
    panel.set_options(options, searching=True)
    assert panel.searching.isVisibleTo(panel)
    missing = [o for o in options if not o.available and "not installed" in o.reason]
    for option in missing:
        box = panel.boxes[option.name]
        assert not box.isEnabled() and "pip install" in box.toolTip()
    names = {o.name for o in options}
    assert {"cpu", "cpu1", "gpu0", "jax:cpu", "jax:gpu0", "torch:cpu"} <= names  # every backend is listed


def test_side_by_side_cpu_lanes_warn_about_contention(panel):
    panel.set_options(no_gpu_options())
    panel.set_schedule(Schedule.SIDE_BY_SIDE)
    assert panel.note.isVisibleTo(panel) and "contention" in panel.note.text()
    panel.set_schedule(Schedule.SEQUENTIAL)
    assert not panel.note.isVisibleTo(panel)
    specs = [o.spec for o in one_gpu_options() if o.name in ("cpu1", "gpu0")]
    # A GPU lane beside a one-thread lane: no contention for the figures, but its host thread shares a core.
    note = contention_note(specs, Schedule.SIDE_BY_SIDE)
    assert "contention" not in note and "host thread shares" in note
    panel.set_schedule(None)  # cpu and cpu1 share cores: they take turns
    assert panel.schedule() == "interleaved" and "take turns" in panel.note.text()


def test_a_restored_gpu_lane_is_chosen_once_discovery_finds_it(panel):
    panel.set_options(known_options(), searching=True)
    panel.select(["cpu", "gpu0"])
    assert panel.selected_names() == ["cpu"]
    assert panel.pending() == ["gpu0"]
    panel.set_options(one_gpu_options())
    assert panel.selected_names() == ["cpu", "gpu0"] and panel.pending() == []


def test_unchecking_every_lane_leaves_start_disabled(make_window):
    window = make_window()
    for box in window.side.lanes_panel.boxes.values():
        box.setChecked(False)
    assert window.side.lanes_panel.selected_names() == []
    assert not window.actions.start.isEnabled()
    assert window.start_run() is None
    assert "at least one lane" in window.status.message()


@pytest.mark.lanes
def test_closing_during_discovery_stops_the_probes(qtbot, gui_home, monkeypatch):
    import crossover_lab.core.engine.devices
    from crossover_lab.gui.window.main_window import MainWindow

    # Without a driver discovery asks no backend; pretend there is one so the probes really start.
    monkeypatch.setattr(crossover_lab.core.engine.devices, "nvidia_driver_present", lambda: True)

    window = MainWindow(prestart=False, offer_recovery=False)  # real discovery: a probe process per backend
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: len(lane_processes()) >= 1, timeout=10_000)
    qtbot.wait(500)  # the probe is importing its framework now
    window.close()
    assert window.close_seconds < wall_limit(3.0), f"close took {window.close_seconds:.2f} s at {load_words()}"
    assert window.controller.threads() == []
    assert wait_for(lambda: not lane_processes(), 2.0), [p.cmdline() for p in lane_processes()]


@pytest.mark.lanes
def test_real_discovery_fills_the_lanes_panel(qtbot, gui_home):
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False)
    qtbot.addWidget(window)
    assert window.side.lanes_panel.searching.isVisibleTo(window)  # shown at once, filled in later
    qtbot.waitUntil(lambda: not window.controller.discovering, timeout=120_000)
    assert not window.side.lanes_panel.searching.isVisibleTo(window)
    options = {o.name: o for o in window.controller.options}
    assert options["cpu"].available and options["cpu1"].available
    for option in options.values():
        box = window.side.lanes_panel.boxes[option.name]
        assert box.isEnabled() == option.available
        if not option.available:
            assert option.reason and option.reason in box.toolTip()
    if not host_info()["gpus"]:
        assert not options["gpu0"].available and "gpu" in options["gpu0"].reason
        assert window.side.lanes_panel.selected_names() == ["cpu", "cpu1"]
    window.close()
    assert wait_for(lambda: not lane_processes(), 5.0), [p.cmdline() for p in lane_processes()]
