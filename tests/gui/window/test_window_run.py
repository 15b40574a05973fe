"""Real runs in the window: tiny models on the cpu and cpu1 lanes (TensorFlow in lane processes, never here).

One window and its lane pool serve the module, as they would serve a user: only the first run pays
the lanes' TensorFlow import. The last test closes the window mid-run.
"""
from __future__ import annotations

import json
import os
import sys
import time

import pytest
from gui_fixtures import lane_processes, no_gpu_options
from helpers import load_words, wait_for, wall_limit
from PySide6.QtCore import Qt

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.engine.devices import host_info
from crossover_lab.core.files.run_files import read_batches_csv
from crossover_lab.core.files import autosave
from crossover_lab.gui.compare.summary import ROWS

pytestmark = pytest.mark.lanes
TINY = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=1, data="synthetic", samples=2000))
LONG = RunConfig(ModelSpec((512, 512)), TrainSpec(batch_size=64, epochs=200, data="synthetic", samples=2000))
RUN_TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    from crossover_lab.gui.window.main_window import MainWindow

    home = tmp_path_factory.mktemp("crossover-home")
    saved = {k: os.environ.get(k) for k in ("CROSSOVER_HOME", "KERAS_HOME")}
    os.environ["CROSSOVER_HOME"] = str(home)
    os.environ["KERAS_HOME"] = str(home / "keras")
    w = MainWindow(discover_fn=no_gpu_options, prestart=True, offer_recovery=False)
    w.side.model_panel.set_config(TINY)
    w.side.lanes_panel.set_schedule(Schedule.SIDE_BY_SIDE)
    w.show()
    assert wait_for(lambda: (qapp.processEvents(), not w.controller.discovering)[1], 10)
    yield w
    w.close()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def run_and_wait(qtbot, window, config: RunConfig = TINY):
    window.side.model_panel.set_config(config)
    before = len(window.controller.runs)
    qtbot.keyClick(window, Qt.Key.Key_F5)  # Start, as the user would
    assert window.controller.running, window.status.message()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=RUN_TIMEOUT_MS)
    assert len(window.controller.runs) == before + 1
    return window.controller.runs[-1]


def test_real_run_draws_the_plot_fills_the_summary_and_the_map(qtbot, window):
    assert window.side.lanes_panel.selected_names() == ["cpu", "cpu1"]
    result = run_and_wait(qtbot, window)
    assert {name: lane.status for name, lane in result.lanes.items()} == {"cpu": "completed", "cpu1": "completed"}
    steps = 2000 // 64  # whole batches only (core/lane/feeding.py)
    assert window.compare.plot.points_drawn() == {"cpu": steps - 5, "cpu1": steps - 5}  # warm-up drawn apart
    legend = " ".join(label.text for _, label in window.compare.plot.legend.items)
    assert "cpu · CPU (" in legend and "cpu1 · CPU (" in legend and "1 thread" in legend
    table = window.compare.summary.table
    for col in range(2):
        assert table.item(1, col).text() == "completed"
        assert float(table.item(2, col).text()) > 0  # median ms per batch
        assert table.item(4, col).text() == "–"  # p99: 26 steady steps are far too few (core/analysis/tails.py)
        assert float(table.item(5, col).text().replace(",", "")) > 0  # samples/s
        data = table.item(ROWS.index("Data"), col)
        assert data.text() == "synthetic" and "synthetic MNIST-shaped data" in data.toolTip()
    verdict = window.compare.summary.verdict.said()
    assert "faster than" in verdict or "too close to call" in verdict, verdict  # a lead, or a tie said as one
    assert "fixed cost" in window.compare.summary.explanation.text()
    assert {p.lane for p in window.compare.map.points()} == {"cpu", "cpu1"}
    assert window.compare.history.run_ids() == [result.run_id]
    assert window.actions.start.isEnabled() and window.side.model_panel.isEnabled()
    assert os.path.exists(autosave.autosave_dir() / f"{result.run_id}.csv")
    assert "tensorflow" not in sys.modules and "keras" not in sys.modules and "jax" not in sys.modules


def test_more_model_sizes_add_map_points_and_then_cost_fits(qtbot, window):
    # Cost models are fitted through completed, uncontended points only: these lanes take turns.
    window.side.lanes_panel.set_schedule(Schedule.INTERLEAVED)
    run_and_wait(qtbot, window, RunConfig(ModelSpec((32,)), TINY.train))
    run_and_wait(qtbot, window, RunConfig(ModelSpec((512,)), TINY.train))
    sizes = {p.point.flops_per_batch for p in window.compare.map.map_points() if p.kind == "completed"}
    assert len(sizes) == 2
    assert window.findings.lane_fits(TINY) == {}  # through two sizes any line fits: no cost model claimed yet
    assert "Fitted over" not in window.compare.summary.explanation.text()
    run_and_wait(qtbot, window, RunConfig(ModelSpec((128,)), TINY.train))
    assert set(window.findings.lane_fits(TINY)) == {"cpu", "cpu1"}, [(p.lane, p.kind, p.widths)
                                                                      for p in window.compare.map.map_points()]
    assert "Fitted over the model sizes measured" in window.compare.summary.explanation.text()
    window.side.lanes_panel.set_schedule(Schedule.SIDE_BY_SIDE)


def test_export_writes_a_csv_that_round_trips(window, tmp_path):
    path = tmp_path / "timings.csv"
    assert window.exports.export_timings(str(path)) == ""
    records = read_batches_csv(path)
    expected = [r for run in window.controller.runs for lane in run.lanes.values() for r in lane.records]
    assert len(records) == len(expected) > 100
    assert [r.row() for r in records] == [r.row() for r in expected]  # equal at the CSV's precision
    meta = json.loads(path.with_suffix(".json").read_text())
    assert [r["run_id"] for r in meta["runs"]] == [r.run_id for r in window.controller.runs]
    assert meta["host"]["cpu_cores"] == host_info()["cpu_cores"]
    assert "prices" not in meta  # none typed yet
    window.side.lanes_panel.prices.set("cpu1", 0.25)  # a $/h beside cpu1 in the Lanes panel: recorded with the runs
    assert window.exports.export_timings(str(path)) == ""
    assert json.loads(path.with_suffix(".json").read_text())["prices"] == {"cpu1": 0.25}
    window.side.lanes_panel.prices.set("cpu1", 0)
    try:
        import pandas
    except ImportError:
        return
    frame = pandas.read_csv(path)
    assert len(frame) == len(records) and frame["ms"].sum() == pytest.approx(sum(r.ms for r in records), rel=1e-4)


def test_export_report_reports_what_the_current_tab_shows(window, tmp_path):
    """File > Export report: the run shown, the sweep, the anatomy; the sources beside the report, named in it."""
    from helpers import point
    from crossover_lab.core.files.sweeps.files import run_rows
    from crossover_lab.core.study.anatomy import anatomy_key

    window.tabs.setCurrentWidget(window.compare)
    assert window.compare.shown is not None  # the last run
    assert window.exports.export_report(str(tmp_path / "run.html"), window.report_sources) == ""
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert (tmp_path / "run-run.csv").is_file() and "run-run.csv" in html
    assert window.compare.shown.result.run_id in html
    window.tabs.setCurrentWidget(window.sweep)
    window.sweep.show_rows([])
    assert window.exports.export_report(str(tmp_path / "none.html"), window.report_sources).startswith(
        "no sweep to report")
    assert not (tmp_path / "none.html").exists()
    window.sweep.show_rows(run_rows(window.controller.runs[-1]))
    assert window.exports.export_report(str(tmp_path / "sweep.html"), window.report_sources) == ""
    assert "sweep-sweep.csv" in (tmp_path / "sweep.html").read_text(encoding="utf-8")
    window.tabs.setCurrentWidget(window.why)
    window.why.measured[anatomy_key(window.config)] = {"cpu": point("cpu", "CPU (test)")}
    assert window.exports.export_report(str(tmp_path / "why.html"), window.report_sources) == ""
    assert "why-anatomy.json" in (tmp_path / "why.html").read_text(encoding="utf-8")
    window.why.measured.clear()
    window.tabs.setCurrentWidget(window.compare)
    window.sweep.show_rows([])


def test_the_status_bar_counts_a_sweeps_points_as_its_tab_does(qtbot, window, monkeypatch):
    """A sweep whose closest point was measured again keeps one pooled row for it in its results; the status bar's
    count is the tab's (its table, progress and last sentence): every measurement, that point's twice."""
    import dataclasses

    from helpers import two_lane_result
    from crossover_lab.core.files.sweeps.rows import SweepRow
    from crossover_lab.core.study.sweep import PointMeasured, SweepResult
    from crossover_lab.gui.sweep import tab

    def fake_sweeps(pool, lanes, specs, on_point, cancel):
        runs = [two_lane_result(f"r{w}", w, 1.0, 2.0, lanes=("cpu", "cpu1")) for w in (16, 256, 16)]
        rows = [[SweepRow.from_result(run, lane) for lane in ("cpu", "cpu1")] for run in runs]
        pooled = [dataclasses.replace(r, runs=2, between_runs=0.1) for r in rows[2]]
        for i, (run, got) in enumerate(zip(runs, rows[:2] + [pooled])):
            on_point(PointMeasured("base", tuple(got), run, 2 * (i + 1), 6, again=i == 2))
        return [SweepResult(specs[0], rows=pooled + rows[1], runs=runs)]

    monkeypatch.setattr(tab, "run_sweeps", fake_sweeps)
    window.sweep.sweep_form.widths.setText("16,256")
    window.sweep.start()
    qtbot.waitUntil(lambda: not window.sweep.running, timeout=30_000)
    assert "6 points measured" in window.sweep.sweep_form.progress_label.text()
    assert window.status.message() == "Sweep ended: 6 points measured."
    window.sweep.show_rows([])


def test_export_to_an_unwritable_place_says_why(window, tmp_path):
    problem = window.exports.export_timings(str(tmp_path / "no-such-folder" / "t.csv"))
    assert "cannot write" in problem
    run_id = window.controller.runs[0].run_id
    assert window.exports.export_run(run_id, str(tmp_path / "one.csv")) == ""
    assert {r.run_id for r in read_batches_csv(tmp_path / "one.csv")} == {run_id}


def test_plot_exports_as_png_and_svg(window, tmp_path):
    for name in ("plot.png", "plot.svg"):
        assert window.exports.export_plot(str(tmp_path / name)) == ""
        assert (tmp_path / name).stat().st_size > 1000
    assert (tmp_path / "plot.svg").read_text().lstrip().startswith("<?xml")


SPACED = """
import os, sys
os.environ["KERAS_BACKEND"] = "jax"
import keras
inp = keras.Input((8,), name="the input")
x = keras.layers.Dense(16, activation="relu", name="my dense")(inp)
keras.Model(inp, keras.layers.Dense(3, activation="softmax", name="the head")(x), name="my model").save(sys.argv[1])
"""


def test_a_saved_model_named_with_spaces_opens_and_trains_in_the_window(qtbot, window, tmp_path):
    """Issue 46 #1 in the window: a .keras file whose model is "my model" (a layer "my dense"), names TensorFlow's
    scopes refuse, is opened, counted by a lane and trained by both lanes; its own name is what the panel shows."""
    import subprocess

    path = tmp_path / "spaced.keras"
    made = subprocess.run([sys.executable, "-c", SPACED, str(path)], capture_output=True, text=True, timeout=240)
    assert made.returncode == 0, made.stderr[-2000:]
    panel = window.side.model_panel
    try:
        panel.model_file_chosen.emit(str(path))
        qtbot.waitUntil(lambda: not window.desk.model_file.running, timeout=240_000)
        saved = panel.config().model.saved
        assert saved is not None and saved.name == "my model" and saved.inspected, window.status.message()
        assert panel.cost.text().startswith("my model (spaced.keras)"), panel.cost.text()
        before = len(window.controller.runs)
        qtbot.keyClick(window, Qt.Key.Key_F5)  # Start, as the user would
        assert window.controller.running, window.status.message()
        qtbot.waitUntil(lambda: not window.controller.running, timeout=RUN_TIMEOUT_MS)
        assert len(window.controller.runs) == before + 1
        result = window.controller.runs[-1]
        assert {name: lane.status for name, lane in result.lanes.items()} == {"cpu": "completed", "cpu1": "completed"}, \
            {name: lane.failure for name, lane in result.lanes.items()}
        assert all(len(lane.records) > 0 for lane in result.lanes.values())
        assert not window.compare.summary.problems.isVisibleTo(window)
    finally:
        panel.set_config(TINY)


def test_a_lane_failure_shows_its_reason_and_the_other_lane_finishes(qtbot, window):
    if host_info()["gpus"]:
        pytest.skip("this machine has a GPU: the gpu0 lane would not fail")
    window.side.model_panel.set_config(TINY)
    window.controller.start_run(TINY, [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")], Schedule.SIDE_BY_SIDE)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=RUN_TIMEOUT_MS)
    result = window.controller.runs[-1]
    assert result.lanes["cpu"].status == "completed" and len(result.lanes["cpu"].records) > 0
    assert result.lanes["gpu0"].status == "failed"
    assert "No GPU is visible" in result.lanes["gpu0"].failure
    assert "gpu0 failed: No GPU is visible" in window.compare.summary.problems.text()
    assert window.compare.summary.problems.isVisibleTo(window)
    assert "gpu0" in window.status.message()
    assert window.actions.start.isEnabled()  # the window keeps working


@pytest.mark.parametrize("schedule", [Schedule.SIDE_BY_SIDE, Schedule.SEQUENTIAL, Schedule.INTERLEAVED])
def test_stop_ends_every_lane_within_about_a_second(qtbot, window, schedule):
    window.side.model_panel.set_config(LONG)
    window.side.lanes_panel.set_schedule(schedule)
    live = window.start_run()
    assert live.result.schedule is schedule
    # The lanes are locked while running; the model is not (a change goes to the running lanes).
    assert window.side.model_panel.isEnabled() and not window.side.lanes_panel.isEnabled()
    # The Sweep tab's actions wait for the lanes too (Rank knobs did nothing when pressed meanwhile).
    assert not any(b.isEnabled() for b in (window.sweep.sweep_form.run_button, window.sweep.sweep_form.refine_button,
                                           window.sweep.sweep_form.ladder_button))
    lanes = list(live.series.values()) if schedule is Schedule.SIDE_BY_SIDE else [live.series["cpu"]]
    qtbot.waitUntil(lambda: all(len(lane.steady) >= 3 for lane in lanes), timeout=RUN_TIMEOUT_MS)
    started = time.monotonic()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)
    took = time.monotonic() - started
    window.side.lanes_panel.set_schedule(None)
    # About a second (the lanes' cancel grace is 1 s, then a kill), with room for a busy machine.
    limit = wall_limit(3.0)
    assert took < limit, f"stop took {took:.2f} s (limit {limit:.1f} s at {load_words()})"
    result = window.controller.runs[-1]
    assert {lane.status for lane in result.lanes.values()} == {"cancelled"}
    assert len(result.lanes["cpu"].records) >= 8  # what was measured is kept
    if schedule is not Schedule.SIDE_BY_SIDE:
        assert result.lanes["cpu1"].records == []  # never started: the stop came first
    assert window.compare.history.table.item(0, 3).text() == "cancelled"
    assert window.side.model_panel.isEnabled() and window.actions.start.isEnabled()


def test_closing_mid_run_leaves_no_thread_and_no_lane_process(qtbot, window):
    window.side.model_panel.set_config(LONG)
    live = window.start_run()
    qtbot.waitUntil(lambda: all(len(lane.steady) >= 3 for lane in live.series.values()), timeout=RUN_TIMEOUT_MS)
    assert len(lane_processes()) >= 2
    window.close()
    assert window.close_seconds < wall_limit(3.0), f"close took {window.close_seconds:.2f} s at {load_words()}"
    assert window.controller.threads() == []
    assert wait_for(lambda: not lane_processes(), 2.0), [p.cmdline() for p in lane_processes()]
    saved = autosave.load_run(live.run_id)  # what was measured before the close was saved
    assert sum(len(lane.records) for lane in saved.lanes.values()) >= 6
