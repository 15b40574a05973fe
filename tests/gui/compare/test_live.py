"""Live drawing from canned lane events: the queue, the timer, the plot's autoscale, the summary and the map."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from helpers import CONFIG, SPECS, finished, lane_events, two_lane_result

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.gui.controller import RunController
from crossover_lab.gui.compare.crossover_map import CrossoverMap
from crossover_lab.gui.compare.map_points import run_points
from crossover_lab.gui.live_run import MEDIAN_WINDOW, LiveRun, _rolling_median
from crossover_lab.gui.compare.live_plot import LivePlot
from crossover_lab.gui.compare.summary import ROWS, SummaryPanel


@pytest.fixture
def live() -> LiveRun:
    return LiveRun("r1", CONFIG, SPECS, Schedule.SIDE_BY_SIDE, "2026-01-01T00:00:00+00:00")


def test_live_run_folds_events_into_arrays(live):
    assert live.apply(lane_events("r1", "cpu", "CPU (test)", 2.0)) == ["cpu"]
    series = live.series["cpu"]
    assert (len(series.warmup), len(series.steady), len(series.median)) == (5, 95, 95)
    assert live.lanes["cpu"].status == "running" and live.device("cpu") == "CPU (test)"
    assert live.total_steps("cpu") == 100 and live.steps_done("cpu") == 100
    assert live.summary("cpu").median_ms == pytest.approx(2.0, rel=0.06)
    assert not live.apply(lane_events("other-run", "cpu", "CPU", 1.0))  # another run's events are ignored
    assert live.lanes["gpu0"].status == "waiting"


def test_rolling_median_is_the_trailing_median():
    rng = np.random.default_rng(1)
    ms = rng.exponential(2.0, 300)
    got = np.concatenate([_rolling_median(ms[:n], start) for start, n in ((0, 7), (7, 150), (150, 300))])
    want = [np.median(ms[max(0, i - MEDIAN_WINDOW + 1):i + 1]) for i in range(300)]
    np.testing.assert_allclose(got, want)


def test_plot_draws_each_lane_and_keeps_warmup_out_of_the_autoscale(qtbot, live):
    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 500)
    plot.show()
    plot.show_run(live)
    live.apply(lane_events("r1", "cpu", "CPU (test)", 2.0) + lane_events("r1", "gpu0", "GPU:0 (test)", 0.5))
    plot.refresh()
    assert plot.points_drawn() == {"cpu": 95, "gpu0": 95}
    items = plot._items["cpu"]
    assert len(items.warmup.yData) == 5 and max(items.warmup.yData) == 300.0
    view = plot.plot.getViewBox()
    # The steady state of the slower lane (~2 ms) is in view, not squashed under the 300 ms first batch.
    qtbot.waitUntil(lambda: 2.0 < view.viewRange()[1][1] < 10, timeout=2000)
    labels = [label.text for _, label in plot.legend.items]
    assert any("cpu · CPU (test)" in t for t in labels) and any("gpu0 · GPU:0 (test)" in t for t in labels)
    plot.x_axis.setCurrentIndex(plot.x_axis.findData("elapsed"))
    np.testing.assert_allclose(items.steady.xData, live.series["cpu"].steady.elapsed.values)
    plot.log_y.setChecked(True)
    assert plot.plot.getPlotItem().ctrl.logYCheck.isChecked()


def test_summary_says_which_lane_is_faster_and_why(qtbot, live):
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    assert "Waiting" in summary.verdict.said()
    cpu = lane_events("r1", "cpu", "CPU (test)", 3.1)
    gpu = lane_events("r1", "gpu0", "GPU:0 (test)", 1.0)
    live.apply(cpu + gpu)
    summary.refresh()
    assert "gpu0 is 3.1x faster than cpu on this model" in summary.verdict.said()
    assert "fixed cost" in summary.explanation.text()
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}
    assert summary.table.item(2, column["cpu"]).text() == "3.1"  # median ms per batch
    assert summary.table.item(0, column["gpu0"]).text() == "GPU:0 (test)"
    assert "epoch 1/1" in summary.table.item(ROWS.index("Progress"), column["cpu"]).text()
    assert summary.table.item(ROWS.index("Progress"), column["cpu"]).text().endswith("s left")
    live.apply([finished("r1", "cpu", "CPU (test)", cpu)])
    summary.refresh()
    assert summary.table.item(1, column["cpu"]).text() == "completed"


def test_summary_says_what_a_million_samples_cost_on_a_priced_lane(qtbot, live):
    from crossover_lab.core.analysis.costs import dollars_per_million
    from crossover_lab.core.words.numbers import fmt_dollars

    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.prices = lambda: {"gpu0": 3.5}
    summary.show_run(live)
    live.apply(lane_events("r1", "cpu", "CPU (test)", 3.1) + lane_events("r1", "gpu0", "GPU:0 (test)", 1.0))
    summary.refresh()
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}
    row = ROWS.index("$ per M samples")
    median = live.summary("gpu0").median_ms
    assert summary.table.item(row, column["gpu0"]).text() == fmt_dollars(dollars_per_million(median, 64, 3.5))
    assert summary.table.item(row, column["cpu"]).text() == "–, no $/h"


def test_map_adds_a_point_per_lane_and_marks_the_crossover(qtbot):
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    assert cmap.add_run(two_lane_result("a", 32, 0.5, 1.0)) == 2
    assert cmap.crossovers() == []
    cmap.add_run(two_lane_result("b", 1024, 2.0, 1.2))
    cmap.add_run(two_lane_result("c", 4096, 8.0, 2.0))
    crossovers = cmap.crossovers()
    assert len(crossovers) == 1 and crossovers[0].faster_above == "gpu0"
    lo, hi = (RunConfig(ModelSpec((w,)), TrainSpec(batch_size=64)).flops_per_batch for w in (32, 1024))
    assert lo < crossovers[0].flops_per_batch < hi
    assert "gpu0 is faster above about" in cmap.description.text()
    assert set(cmap.findings.lane_fits(RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64)))) == {"cpu", "gpu0"}
    cmap.remove_run("b")
    assert len(cmap.points()) == 4
    cmap.clear()
    assert cmap.points() == [] and cmap.crossovers() == []


def test_cancelled_run_adds_points_only_with_enough_steady_batches():
    result = two_lane_result("x", 64, 1.0, 2.0)
    for lane in result.lanes.values():
        lane.summary = type(lane.summary)(**{**lane.summary.as_dict(), "status": "cancelled", "n_batches": 5})
    assert run_points(result) == []


def test_controller_draws_from_the_queue_on_a_timer_not_per_batch(qtbot, gui_home):
    controller = RunController()
    live = controller.live = LiveRun("r1", CONFIG, SPECS, Schedule.SIDE_BY_SIDE, "")
    emitted = []
    controller.live_changed.connect(lambda: emitted.append(len(live.lanes["cpu"].records)))
    runner = controller._runner
    for event in lane_events("r1", "cpu", "CPU", 1.0, n=5000):
        runner._queue.put(event)  # as a lane thread would, 5000 batches at once
    runner._timer.start()
    qtbot.waitUntil(lambda: bool(emitted) and emitted[-1] == 5000, timeout=2000)
    qtbot.wait(200)
    runner._timer.stop()
    assert len(emitted) == 1  # one redraw for everything that was waiting: latest wins
    controller.shutdown()


def test_two_crossings_close_together_label_without_covering_each_other(qtbot):
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    cmap.resize(420, 280)  # a small map, where the old placement put one label on the other
    cmap.show()
    # cpu wins at 256, gpu0 at 512, cpu again at 1024: two crossings less than half a decade apart, each lead 3x
    # (four widths measured once each: a lead the one rule calls needs to be wide).
    for run_id, width, cpu_ms, gpu_ms in (("a", 128, 1.0, 3.0), ("b", 256, 2.0, 6.0), ("c", 512, 9.0, 3.0),
                                          ("d", 1024, 8.0, 24.0)):
        cmap.add_run(two_lane_result(run_id, width, cpu_ms, gpu_ms))
    assert len(cmap.crossovers()) == 2
    qtbot.wait(50)  # laid out at its size
    labels = [item for item in cmap.plot.getPlotItem().items if isinstance(item, pg.TextItem)]
    assert len(labels) >= 2
    rects = [label.mapRectToScene(label.boundingRect()) for label in labels]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)


def test_the_x_range_follows_the_data_not_the_planned_run():
    from crossover_lab.gui.compare.plot_scale import StableRange
    r = StableRange()
    assert r.update_x(40, total=18_750) and r.x == (0.0, 50.0)  # 40 batches of a 10-epoch plan: not 0–18,750
    assert not r.update_x(45, total=18_750)  # inside the range: the axis stays put
    assert r.update_x(60, total=18_750) and r.x == (0.0, 100.0)  # grows in round steps
    assert r.update_x(18_000, total=18_750) and r.x == (0.0, 18_750.0)  # never past the plan
    assert not r.update_x(18_750, total=18_750)
    assert r.update_x(3) and r.x == (0.0, 5.0)  # a new run, 4× shorter: the axis comes back to it


def test_the_legend_takes_two_columns_only_where_every_entry_fits_whole(qtbot, live):
    """A device's long name ("CPU (Intel(R) Xeon(R) Processor, 2 threads)") was cut at the right edge of a
    two-column legend: the entries' widths decide the columns, not the window's width alone."""
    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.show()
    plot.show_run(live)
    long = "CPU (Intel(R) Xeon(R) Processor, 2 threads) " * 2
    live.apply(lane_events("r1", "cpu", long, 2.0) + lane_events("r1", "gpu0", long, 0.5))
    plot.refresh()
    plot.resize(900, 500)
    qtbot.waitUntil(lambda: plot.legend.columnCount == 1, timeout=2000)
    live_short = LiveRun("r2", CONFIG, SPECS, Schedule.SIDE_BY_SIDE, "2026-01-01T00:00:00+00:00")
    plot.show_run(live_short)
    live_short.apply(lane_events("r2", "cpu", "CPU", 2.0) + lane_events("r2", "gpu0", "GPU:0", 0.5))
    plot.refresh()
    qtbot.waitUntil(lambda: plot.legend.columnCount == 2, timeout=2000)


def test_a_bigger_model_dragged_in_stays_in_view_from_its_first_batches():
    """Thousands of small-model batches at about 5 ms, then 12 at about 70 ms after a drag: the y range grows to
    show them (the 99th percentile of everything would have kept them above the plot)."""
    from crossover_lab.gui.compare.plot_scale import StableRange
    r = StableRange()
    small = np.full(6000, 5.0)
    assert r.update_y([small], log=False) and r.y is not None and r.y[1] < 10
    dragged = np.concatenate([small, np.full(12, 70.0)])
    assert r.update_y([dragged, small], log=False) and r.y is not None and r.y[1] >= 70


def test_the_history_says_a_predict_run_is_one(gui_home):
    """A predict run's row in the history names its task and its verdict speaks in latency."""
    import dataclasses

    from helpers import two_lane_result
    from crossover_lab.gui.compare.history import model_words, run_summary_text

    run = two_lane_result("r", 128, 2.0, 1.0)
    assert model_words(run) == "784-128-10 · batch 64"
    served = dataclasses.replace(run, config=run.config.replace(task="predict"))
    assert model_words(served) == "784-128-10 · batch 64 · predict"
    assert "gpu0 answers 2.0x faster than cpu" in run_summary_text(served)
