"""The Why tab and the two clocks in the summary, with the lanes' measuring stood in for."""
from __future__ import annotations

from dataclasses import replace

import pytest

from helpers import CONFIG, SPECS, finished, lane_events, point

from crossover_lab.core.records import RunSettings
from crossover_lab.core.study.anatomy import AnatomyOutcome
from crossover_lab.gui.why import tab as why_view
from crossover_lab.core.config import Schedule
from crossover_lab.gui.live_run import LiveRun
from crossover_lab.gui.compare.summary import ROWS, SummaryPanel
from crossover_lab.gui.why.tab import WhyView


def test_why_measures_draws_the_parts_and_hands_the_summary_both_clocks(qtbot, monkeypatch):
    asked = []

    def fake(pool, lanes, configs, *, cancel, on_outcome, **kwargs):
        asked.append(([lane.name for lane in lanes], configs))
        out = [AnatomyOutcome("gpu0", configs[0], point("gpu0", fit_pipelined=0.5)),
               AnatomyOutcome("cpu", configs[0], point("cpu", "CPU (test)", fit=3.1, fit_pipelined=0.4,
                                                       device_loop=0.7))]
        for outcome in out:
            on_outcome(outcome)
        return out

    monkeypatch.setattr(why_view, "measure_anatomies", fake)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    view = WhyView(lambda: None, lambda: SPECS, lambda: CONFIG, lambda: False, summary.set_anatomy)
    qtbot.addWidget(view)
    live = LiveRun("r1", CONFIG.replace(epochs=3), SPECS, Schedule.SIDE_BY_SIDE, "2026-01-01T00:00:00+00:00")
    summary.show_run(live)
    cpu, gpu = lane_events("r1", "cpu", "CPU (test)", 3.1), lane_events("r1", "gpu0", "GPU:0 (test)", 1.0)
    live.apply(cpu + gpu + [finished("r1", "cpu", "CPU (test)", cpu)])
    summary.refresh()
    row = ROWS.index("Pipelined ms/step")
    assert [summary.table.item(row, c).text() for c in range(2)] == ["–, press Why", "–, press Why"]
    # The verdict alone in the headline; the clock it uses is said in the detail line (issue 19, demo polish).
    assert "by the synced clock" not in summary.verdict.said().lower()
    assert "by the synced clock" in summary.detail.text().lower()
    assert "not measured for this model (press Why)" in summary.detail.text()

    view.start()
    qtbot.waitUntil(lambda: not view.running, timeout=5000)
    assert asked == [(["cpu", "gpu0"], [CONFIG])]
    assert [p.lane for p in view.bars.points] == ["gpu0", "cpu"]
    text = view.words.text()
    assert "On gpu0, 1.37 ms per step: 0.05 ms is the GPU working" in text
    assert "With an on-device loop this model would take 0.05 ms per step on gpu0 against 0.7 ms on cpu." in text
    # The run trains the measured model (more epochs do not change a step): both clocks show, and they disagree.
    assert [summary.table.item(row, c).text() for c in range(2)] == ["0.4", "0.5"]
    verdict = summary.verdict.said()
    assert "gpu0 is 3.1x faster than cpu on this model" in verdict
    assert "the pipelined clock disagrees: cpu is faster when steps are not waited for" in verdict
    # Another model: the anatomy no longer applies.
    summary.show_run(LiveRun("r2", CONFIG.replace(batch_size=32), SPECS, Schedule.SIDE_BY_SIDE, ""))
    assert summary.table.item(row, 0).text() == "–, press Why"


def test_why_refuses_while_a_run_holds_the_lanes(qtbot, monkeypatch):
    monkeypatch.setattr(why_view, "measure_anatomies", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    view = WhyView(lambda: None, lambda: SPECS, lambda: CONFIG, lambda: True)
    qtbot.addWidget(view)
    view.start()
    assert not view.running and "Wait until the run or sweep in progress has ended" in view.status.text()


def test_the_anatomy_picture_is_drawn_from_json(qtbot, tmp_path):
    import json

    from crossover_lab.core.cli import anatomy as cli_anatomy
    from crossover_lab.core.config import RunConfig
    from crossover_lab.gui.why.bars import main

    data = cli_anatomy.as_json([AnatomyOutcome("gpu0", RunConfig(), point()),
                                AnatomyOutcome("cpu", RunConfig(), point("cpu", "CPU (x)", device_loop=None))])
    src, png = tmp_path / "a.json", tmp_path / "a.png"
    src.write_text(json.dumps(data))
    assert main([str(src), str(png), "--title", "test"]) == 0
    assert png.stat().st_size > 10_000


def test_the_why_tab_explains_a_tick_beyond_its_bar_and_a_busy_lane(qtbot):
    from dataclasses import replace
    view = WhyView(lambda: None, lambda: SPECS, lambda: CONFIG, lambda: False)
    qtbot.addWidget(view)
    inverted = point("cpu", "CPU (test)", fit=1.0, fit_pipelined=1.5, step_loop=0.4)  # the tick 0.5 ms past the bar
    view.show_points([replace(inverted, settings=RunSettings(others_cpu=0.4, load_avg=2.6)), point("gpu0")])
    text = view.words.text()
    assert "Note (cpu): fit_pipelined took 0.5 ms longer than fit, beyond their spread" in text
    assert "Note (cpu): other work used 40% of cpu's cores while it was measured (load 2.6)" in text
    assert "Note (gpu0)" not in text


def test_the_why_tab_speaks_of_calls_for_the_predict_task(qtbot):
    from crossover_lab.core.analysis.anatomy import AnatomyPoint
    from helpers import rung

    view = WhyView(lambda: None, lambda: SPECS, lambda: CONFIG, lambda: False, lambda *_: None)
    qtbot.addWidget(view)
    assert "synced clock" in view.clocks.text() and "step's time" in view.words.text()
    view.set_task("predict")
    assert "per-call clock" in view.clocks.text() and "pipelined clock" not in view.clocks.text()
    assert "call's time" in view.words.text() and "predict_on_batch" in view.measure_button.toolTip()
    times = {"predict_on_batch": 1.0, "call_synced": 0.6, "call_resident": 0.5, "call_pipelined": 0.3,
             "device_loop": 0.1}
    call = AnatomyPoint("cpu", "CPU (test)", "jax", (64,), 1, 10**6, {k: rung(v, 0.01) for k, v in times.items()},
                        window_steps=8, task="predict")
    view.show_points([call])
    assert view.bars.getAxis("bottom").labelText == "ms per call (predict)"
    assert view.words.text().startswith("On cpu, 1 ms per call:")
    assert "x the time of fit" not in view.words.text()  # no pipelined clock's cost for a call


@pytest.mark.parametrize("size", [(1000, 420), (620, 360)])
def test_the_key_never_covers_a_bar_or_a_tick(qtbot, size):
    """Issue 36: the key sat in the corner over cpu1's bar end and its pipelined tick. It runs in columns above the
    bars, in room kept for it, at a slide's width and at 1024×700's."""
    import pyqtgraph as pg
    from helpers import point
    from crossover_lab.gui.why.bars import WhyBars

    bars = WhyBars()
    qtbot.addWidget(bars)
    bars.resize(*size)
    bars.show()
    # As the issue saw it: the top lane's bar is the longest, its pipelined tick at the right end, under the key.
    bars.set_points([point("cpu", "CPU (x)", fit=4.0, fit_pipelined=3.9), point("gpu0", "GPU", fit=2.0),
                     point("cpu1", "CPU (y)", fit=9.1, fit_pipelined=9.0)])
    qtbot.wait(50)
    key = bars.legend.sceneBoundingRect()
    drawn = [item for item in bars.getPlotItem().items if isinstance(item, (pg.BarGraphItem, pg.PlotDataItem))]
    assert drawn and key.width() > 0
    for item in drawn:
        assert not key.intersects(item.sceneBoundingRect()), (size, item)
    assert key.right() <= bars.getPlotItem().getViewBox().sceneBoundingRect().right() + 1  # nothing cut off


def test_why_says_its_fit_beside_what_the_window_runs_of_this_model_measured(qtbot, monkeypatch):
    """The Why tab's fit and a Compare run time the same thing with the same clock: where a run of the model was
    measured on a lane, the tab says both figures, and where they are apart, the load each met (issue 36: 9.1 ms
    a step here against the Compare run's 4 ms, unexplained)."""
    from crossover_lab.core.files.findings import Findings
    from crossover_lab.core.files.sweeps.rows import SweepRow

    def fake(pool, lanes, configs, *, cancel, on_outcome, **kwargs):
        out = [AnatomyOutcome("gpu0", configs[0], point("gpu0", fit=1.4)),
               AnatomyOutcome("cpu", configs[0], replace(point("cpu", "CPU (test)", fit=9.1),
                                                          settings=RunSettings(others_cpu=0.46)))]
        for outcome in out:
            on_outcome(outcome)
        return out

    monkeypatch.setattr(why_view, "measure_anatomies", fake)
    model = CONFIG.model
    findings = Findings([
        SweepRow(lane, "dev", model.widths[0], 0, 10**7, CONFIG.train.batch_size, ms, ms, ms, 462,
                 layers=len(model.widths), run_id="r1", others_cpu=0.05)
        for lane, ms in (("gpu0", 1.37), ("cpu", 4.0))])
    view = WhyView(lambda: None, lambda: SPECS, lambda: CONFIG, lambda: False, measured=findings.measured)
    qtbot.addWidget(view)
    view.start()
    qtbot.waitUntil(lambda: not view.running, timeout=5000)
    text = view.words.text()
    assert "gpu0: fit here 1.4 ms a step, as its run of this model measured (1.37 ms, median of 462 steady steps)" \
        in text, text
    assert ("cpu: fit here 9.1 ms a step, 2.27x slower than its run of this model measured (4 ms, median of 462 "
            "steady steps)") in text, text
    assert "other work used 46% of cpu's cores during this study and 5% during the run" in text, text
    # Another model than the run's: nothing to set beside it.
    assert findings.measured(CONFIG.replace(batch_size=CONFIG.train.batch_size * 2), "cpu") is None
