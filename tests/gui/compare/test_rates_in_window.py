"""The window's "Predict at an arrival rate" task on scripted lanes: the Rate and Max batch rows, one lane after another
whatever the schedule chosen, each request's latency drawn, and the summary in the rate's own words."""
from __future__ import annotations

from PySide6.QtCore import Qt

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec


def test_a_rate_run_in_the_window_says_which_lane_held_the_rate(qtbot, make_window, scripted):
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=2.0, gflops=1e6, min_sleep_s=0.0002),
                            cpu1=cpu_like(fixed_ms=8.0, gflops=1e6, min_sleep_s=0.0002))
    window = make_window()
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    panel = window.side.model_panel
    panel.set_config(RunConfig(ModelSpec((64,)), TrainSpec(data="synthetic", samples=2048)))
    assert not panel._form.isRowVisible(panel.rate)
    panel.task.setCurrentIndex(panel.task.findData("rate"))
    assert panel._form.isRowVisible(panel.rate) and panel._form.isRowVisible(panel.max_batch)
    assert panel.batch.value() == 1  # a request is one sample unless asked otherwise
    panel.rate.setValue(200)
    config = panel.config()
    assert (config.train.task, config.train.arrival_rate, config.train.max_batch) == ("predict", 200.0, 1)
    window.side.lanes_panel.set_schedule(Schedule.INTERLEAVED)  # one lane after another all the same
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert window.controller.running, window.status.message()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=60_000)
    run = window.controller.runs[-1]
    live = window.controller.live
    assert run.schedule == "sequential" and run.config.train.arrival_rate == 200.0
    summary = window.compare.summary
    assert "at 200 requests/s cpu serves and cpu1 falls behind" in summary.verdict.said()
    detail = summary.detail.text()
    assert "cpu holds 200 requests/s" in detail and "cpu1 does not hold 200 requests/s" in detail
    plot = window.compare.plot
    assert "arrival to answer" in plot.plot.getAxis("left").labelText
    series = live.series["cpu1"].steady
    assert series.ms.values.max() > 100  # cpu1's queue grew: its requests' latencies climbed
    # the task comes back with the config (a saved window state, the history)
    panel.set_config(run.config)
    assert panel.task.currentData() == "rate" and panel.rate.value() == 200
