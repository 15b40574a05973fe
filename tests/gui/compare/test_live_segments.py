"""Segments in the window, from canned lane events: marks on the plot, provisional and firm points on the
map, the summary's model, finishing and failure states, and a past run shown again from the history."""
from __future__ import annotations

import dataclasses

import pytest
from helpers import point

from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.run_stats import summarize
from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.records import (BatchTiming, RunFailed, RunFinished, RunSettings, RunStarted, SegmentEnded,
                                        SegmentStarted)
from crossover_lab.gui.compare.tab import CompareTab
from crossover_lab.gui.compare.crossover_map import CrossoverMap
from crossover_lab.gui.live_run import LiveRun
from crossover_lab.gui.compare.live_plot import LivePlot
from crossover_lab.gui.compare.map_points import MapPoint, PointKind, apart, crossing_points, lines
from crossover_lab.gui.compare.summary import ROWS, SummaryPanel

BASE = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=64, epochs=100, data="synthetic", samples=6400))
RAMP = tuple(RunConfig(ModelSpec((w,)), BASE.train) for w in (16, 256, 1024))
WARMUP = 3


class Lane:
    """Writes one lane's events as a lane process would: segments of warm-up then steady batches."""

    def __init__(self, run_id: str, lane: str, t0: float = 1000.0) -> None:
        self.run_id, self.lane, self.step, self.t, self.t0 = run_id, lane, 0, 0.0, t0
        self.records: list[BatchTiming] = []

    def start(self) -> list:
        return [RunStarted(self.run_id, self.lane, f"{self.lane.upper()} (test)", RunSettings.from_json({"steps_per_epoch": 100}))]

    def segment(self, index: int, config: RunConfig, ms: float, steady: int, end: str | None = "completed") -> list:
        widths = config.model.widths
        events: list = [SegmentStarted(self.run_id, self.lane, index, widths, config.train.batch_size,
                                       config.flops_per_batch, self.step, self.t0 + self.t)]
        mine = []
        for i in range(WARMUP + steady):
            self.step += 1
            record = BatchTiming(self.run_id, self.lane, self.lane, 1, self.step, self.step, self.t,
                                 ms * (3 if i < WARMUP else 1), 64, i < WARMUP, 1.0,
                                 widths=widths, batch_size=64, segment=index)
            self.t += record.ms / 1000
            mine.append(record)
        self.records += mine
        events += mine
        if end is not None:
            events.append(SegmentEnded(self.run_id, self.lane, index, self._summary(mine, end, config),
                                       self.t0 + self.t))
        return events

    def finish(self, config: RunConfig) -> RunFinished:
        last = [r for r in self.records if r.segment == self.records[-1].segment]
        return RunFinished(self.run_id, self.lane, self._summary(last, "completed", config))

    def _summary(self, records: list[BatchTiming], status: str, config: RunConfig):
        return summarize(records, run_id=self.run_id, lane=self.lane, device=self.lane.upper(), status=status,
                         flops_per_batch=config.flops_per_batch, wall_s=1.0)


def ramp_run(schedule: Schedule = Schedule.INTERLEAVED) -> LiveRun:
    return LiveRun("r1", BASE, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], schedule, "2026-01-01T00:00:00+00:00",
                   RAMP)


def test_the_plot_marks_each_segment_with_its_widths_once_per_place(qtbot):
    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.x_axis.setCurrentIndex(plot.x_axis.findData("batch"))  # marks placed at batch numbers (elapsed is default)
    live = ramp_run(Schedule.SIDE_BY_SIDE)
    plot.show_run(live)
    assert plot.title.text().startswith("ramp 16 → 256 → 1024 (1 layer) · batch 64 · cpu vs cpu1 (side by side)")
    cpu, cpu1 = Lane("r1", "cpu"), Lane("r1", "cpu1")
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 2.0, 20)
               + cpu.segment(2, RAMP[1], 2.0, 20, end=None))
    plot.refresh()
    assert plot.marks.labels() == ["16", "256"]
    lines = plot.marks._lines
    shared = next(mark for mark in lines if mark.label == "16")
    assert shared.lanes == ("cpu", "cpu1")  # both lanes start there: one neutral line, not two
    assert next(mark for mark in lines if mark.label == "256").x == 23  # after 3 warm-up and 20 steady batches
    plot.x_axis.setCurrentIndex(plot.x_axis.findData("elapsed"))  # the marks move to the lanes' own clocks
    assert plot.marks.labels() == ["16", "256"]
    assert next(mark for mark in plot.marks._lines if mark.label == "256").x == pytest.approx(
        cpu.records[23].start_s, abs=1e-3)


def test_a_run_on_one_model_has_no_marks(qtbot):
    plot = LivePlot()
    qtbot.addWidget(plot)
    live = LiveRun("r2", BASE, [LaneSpec.parse("cpu")], Schedule.SIDE_BY_SIDE, "")
    plot.show_run(live)
    cpu = Lane("r2", "cpu")
    live.apply(cpu.start() + cpu.segment(1, BASE, 1.0, 30, end=None))
    plot.refresh()
    assert plot.marks.labels() == []


def test_the_map_shows_a_provisional_point_that_firms_up_when_the_run_ends(qtbot):
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    live = ramp_run()
    cmap.follow(live)
    cpu = Lane("r1", "cpu")
    live.apply(cpu.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu.segment(2, RAMP[1], 2.0, 5, end=None))
    kinds = {p.point.flops_per_batch: p.kind for (lane, _), pts in cmap.kept().items() if lane == "cpu" for p in pts}
    assert kinds == {RAMP[0].flops_per_batch: "completed"}  # 5 steady batches: not yet a point
    live.apply(cpu.segment(2, RAMP[1], 2.0, 0, end=None)[1:] + _more(cpu, 2, RAMP[1], 10))
    kinds = {p.point.flops_per_batch: p.kind for (lane, _), pts in cmap.kept().items() if lane == "cpu" for p in pts}
    assert kinds[RAMP[1].flops_per_batch] == "provisional"
    cmap._on_live_timer_timeout()
    assert "provisional" in cmap.key.text() and "provisional (still measuring)" in cmap.key.toolTip()
    live.apply([SegmentEnded("r1", "cpu", 2, cpu._summary([r for r in cpu.records if r.segment == 2], "completed",
                                                            RAMP[1]), 2000.0), cpu.finish(RAMP[1])])
    live.finish()
    assert cmap.add_run(live.result) == 2
    assert [p.kind for (lane, _), pts in cmap.kept().items() if lane == "cpu" for p in pts] == ["completed",
                                                                                               "completed"]
    assert "provisional" not in cmap.key.text()


def _more(lane: Lane, index: int, config: RunConfig, n: int) -> list[BatchTiming]:
    """n more steady batches of a segment in progress."""
    out = []
    for _ in range(n):
        lane.step += 1
        record = BatchTiming(lane.run_id, lane.lane, lane.lane, 1, lane.step, lane.step, lane.t, 2.0, 64, False, 1.0,
                             widths=config.model.widths, batch_size=64, segment=index)
        lane.t += 0.002
        lane.records.append(record)
        out.append(record)
    return out


def _map_point(lane: str, width: int, ms: float, kind: str, run_id: str = "r", batch: int = 128,
               layers: int = 1) -> MapPoint:
    return MapPoint(SweepPoint(lane, width, 1000.0 * width * width, ms, ms * 0.97, ms * 1.03, batch_size=batch,
                               n_batches=200), run_id, kind, widths=(width,) * layers)


def _feed(cmap: CrossoverMap, points: list[MapPoint]) -> None:
    """Points set on the map directly, as a run's add_run would give its findings their completed ones."""
    from crossover_lab.core.files.sweeps.rows import SweepRow
    cmap.findings.put(SweepRow(p.lane, "CPU", p.point.width, 0, int(p.point.flops_per_batch), p.point.batch_size,
                               p.point.median_ms, p.point.p10_ms, p.point.p90_ms, p.point.n_batches,
                               layers=len(p.widths), run_id=p.run_id, family=p.family, task=p.task)
                      for p in points if p.kind is PointKind.COMPLETED)


def test_a_point_cut_short_or_contended_is_drawn_apart_and_never_replaces_a_completed_one():
    points = [_map_point("cpu", 100, 1.0, "completed"), _map_point("cpu", 100, 9.0, "cut short"),
              _map_point("cpu", 100, 5.0, "contended")]
    drawn = lines(points)
    assert [p.point.median_ms for p in drawn[("cpu", (1, 128, "mlp", "train"))]] == [1.0]
    assert sorted(p.kind for p in apart(points)) == ["contended", "cut short"]
    later = lines([_map_point("cpu", 100, 1.0, "completed"), _map_point("cpu", 100, 2.0, "completed")])
    assert [p.point.median_ms for p in later[("cpu", (1, 128, "mlp", "train"))]] == [2.0]  # the latest completed one


def test_the_map_joins_and_crosses_only_like_with_like(qtbot):
    """Points of two batch sizes make two lines per lane and are never crossed with each other; contended and
    cut-short points are drawn apart; the axis is in widths only when every point shares its shape."""
    widths = (16, 64, 256, 1024)
    cpu = [0.5, 1.0, 3.0, 10.0]
    cpu1 = [0.2, 0.4, 7.5, 25.0]  # cpu1 leads below ~128 units (2.5x), cpu above (2.5x): wide enough for one run
    batch32 = [_map_point("cpu", w, ms, "completed", "b32", batch=32) for w, ms in zip(widths, [3, 3, 3, 3])]
    points = ([_map_point("cpu", w, ms, "completed", "a") for w, ms in zip(widths, cpu)]
              + [_map_point("cpu1", w, ms, "completed", "a") for w, ms in zip(widths, cpu1)])
    drawn = lines(points + batch32)
    assert set(drawn) == {("cpu", (1, 128, "mlp", "train")), ("cpu1", (1, 128, "mlp", "train")), ("cpu", (1, 32, "mlp", "train"))}
    assert set(crossing_points(drawn)) == {(1, 128, "mlp", "train"), (1, 32, "mlp", "train")}
    # A CNN of the same depth and batch size is another kind of model: its own line, never crossed with the MLP's.
    from dataclasses import replace
    cnn = [replace(p, family="cnn") for p in points if p.lane == "cpu"]
    assert ("cpu", (1, 128, "cnn", "train")) in lines(points + cnn)
    assert (1, 128, "cnn", "train") in crossing_points(lines(points + cnn))
    # Predict calls of the same model are another curve too: a call's latency is never joined with a step's time.
    served = [replace(p, task="predict") for p in points if p.lane == "cpu"]
    assert ("cpu", (1, 128, "mlp", "predict")) in lines(points + served)
    assert len(lines(points + served)[("cpu", (1, 128, "mlp", "train"))]) == len(widths)
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    cmap._points = points + [_map_point("cpu1", 256, 1.0, "contended", "c"), _map_point("cpu", 256, 0.1, "cut short",
                                                                                         "d")]
    _feed(cmap, cmap._points)
    cmap._redraw()
    (c,) = cmap.crossovers()
    assert (c.faster_above, c.width_lo, c.width_hi) == ("cpu", 64, 256)  # neither apart point moved it
    assert cmap.plot.getAxis("bottom").labelText == "hidden width (1 layer, batch 128)"
    assert cmap.description.text().startswith("cpu is faster above about ") and "units" in cmap.description.text()
    # A removed run takes exactly its points: the crossing stays, the apart points go with their runs.
    cmap.remove_run("c")
    cmap.remove_run("d")
    assert cmap.crossovers() == [c] and apart(cmap.map_points()) == []
    # A second batch size: FLOPs on the axis, the batch-32 line neither joined nor crossed with batch 128.
    cmap._points += batch32
    _feed(cmap, batch32)
    cmap._redraw()
    assert cmap.plot.getAxis("bottom").labelText == "model size: FLOPs per batch"
    assert cmap.crossovers() == [c]
    assert "1 layer, batch 128: cpu is faster above about" in cmap.description.text()
    # The key names each kind of model's line style, the same on every lane: no line is a bare, unnamed style.
    key = cmap.key.text().replace("&nbsp;", " ")
    assert "━━ 1 layer, batch 32" in key and "╍╍ 1 layer, batch 128" in key, key
    cmap.remove_run("a")
    assert cmap.crossovers() == [] and {lane for lane, _ in cmap.kept()} == {"cpu"}


def test_lanes_that_overlapped_on_shared_cores_give_contended_points_and_a_contended_verdict(qtbot):
    live = ramp_run(Schedule.SIDE_BY_SIDE)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=1000.0)  # the same clock: they overlapped
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 2.0, 20))
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    cmap.follow(live)
    assert {p.kind for p in apart(cmap.map_points())} == {"contended"} and cmap.kept() == {}
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    assert "contended: both trained at once on the same CPU cores" in summary.verdict.said()


def test_lanes_taking_turns_are_compared_on_the_model_both_have_trained(qtbot):
    live = ramp_run(Schedule.INTERLEAVED)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=2000.0)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 3.0, 20))
    cpu.t0 = 3000.0
    live.apply(cpu.segment(2, RAMP[1], 5.0, 20, end=None))  # cpu has moved on to 256; cpu1 waits its turn
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    assert "cpu is 3.0x faster than cpu1 on model 16" in summary.verdict.said()
    assert "contended" not in summary.verdict.said()
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}
    assert summary.table.item(ROWS.index("Model"), column["cpu"]).text() == "256 · batch 64 (2/3)"
    assert summary.table.item(ROWS.index("Status"), column["cpu1"]).text() == "waiting for its turn"


def test_lanes_taking_turns_say_they_are_starting_until_the_first_turn(qtbot):
    """Issue 55: the first turn waits until every lane has loaded its framework (core/engine/pool.py conduct), and
    the summary says so rather than "waiting for its turn" for seconds."""
    live = ramp_run(Schedule.INTERLEAVED)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}
    for lane in ("cpu", "cpu1"):
        assert summary.table.item(ROWS.index("Status"), column[lane]).text() == "waiting"
        assert summary.table.item(ROWS.index("Progress"), column[lane]).text() == (
            "starting: the turns begin once every lane has loaded its framework")



def test_while_the_lanes_start_each_column_says_what_its_lane_is_doing(qtbot):
    """Issue 55: Start pressed as the window opens waits for the lanes' imports (4-5 s on 2 cores): the headline says
    they are starting, and each column whether its lane still loads its framework or makes its data."""
    live = ramp_run(Schedule.INTERLEAVED)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    up = {"cpu": True, "cpu1": False}
    summary.lane_up = up.get
    summary.show_run(live)
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}

    def cell(row: str, lane: str) -> str:
        return summary.table.item(ROWS.index(row), column[lane]).text()

    assert summary.verdict.said().startswith("Starting the lanes: each loads TensorFlow")
    assert (cell("Status", "cpu1"), cell("Progress", "cpu1")) == ("starting", "loading TensorFlow…")
    assert (cell("Status", "cpu"), cell("Progress", "cpu")) == ("waiting", "TensorFlow loaded; making data…")
    up["cpu1"] = True
    summary.refresh()
    assert summary.verdict.said() == "Waiting for steady batches on both lanes…"
    assert cell("Progress", "cpu1") == "TensorFlow loaded; making data…"

def test_a_tie_in_a_ramp_names_its_model_too(qtbot):
    live = ramp_run(Schedule.INTERLEAVED)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=2000.0)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 1.01, 20))
    cpu.t0 = 3000.0
    live.apply(cpu.segment(2, RAMP[1], 5.0, 20, end=None))
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    text = summary.verdict.said()
    assert "cpu and cpu1 are too close to call on model 16 (medians 1% apart, inside the noise" in text
    assert "at most a 5% chance of any false lead at this width" in text  # what it rests on, as every verdict says


def test_a_lane_whose_last_batch_is_in_says_finishing(qtbot):
    live = LiveRun("r3", BASE, [LaneSpec.parse("cpu")], Schedule.SIDE_BY_SIDE, "")
    cpu = Lane("r3", "cpu")
    live.apply(cpu.start() + cpu.segment(1, BASE, 1.0, 20))  # its only segment ended; no RunFinished yet
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    assert summary.table.item(ROWS.index("Status"), 0).text() == "finishing…"
    assert summary.table.item(ROWS.index("Progress"), 0).text() == "all 23 batches measured"


def test_when_every_lane_fails_the_summary_says_why_not_waiting(qtbot):
    live = LiveRun("r4", BASE, [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")], Schedule.SIDE_BY_SIDE, "")
    live.apply([RunFailed("r4", "cpu", "out of memory"), RunFailed("r4", "gpu0", "No GPU is visible")])
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    text = summary.verdict.said()
    assert text.startswith("Every lane failed") and "out of memory" in text and "No GPU is visible" in text
    assert summary.table.item(ROWS.index("Device"), 0).text() == "—"
    assert summary.table.item(ROWS.index("Progress"), 1).text() == "failed before its first batch"


def test_a_history_row_shows_that_runs_plot_and_summary_again(qtbot):
    tab = CompareTab()
    qtbot.addWidget(tab)
    runs = []
    for run_id, ms in (("a", 1.0), ("b", 4.0)):
        live = LiveRun(run_id, BASE, [LaneSpec.parse("cpu")], Schedule.SIDE_BY_SIDE, "2026-01-01T00:00:00+00:00")
        tab.show_run(live)
        cpu = Lane(run_id, "cpu")
        live.apply(cpu.start() + cpu.segment(1, BASE, ms, 30) + [cpu.finish(BASE)])
        runs.append(live.finish())
        tab.run_ended(live.result)
    assert tab.history.run_ids() == ["b", "a"]
    tab.history.table.selectRow(1)  # run a
    assert tab.plot._live.run_id == "a" and tab.plot.points_drawn() == {"cpu": 30}
    column = 0
    assert tab.summary.table.item(ROWS.index("Median ms/batch, synced"), column).text() == "1"
    tab.history.table.selectRow(0)
    assert tab.summary.table.item(ROWS.index("Median ms/batch, synced"), column).text() == "4"
    assert dataclasses.asdict(runs[0].lanes["cpu"].records[0]) == dataclasses.asdict(
        tab.history._runs["a"].lanes["cpu"].records[0])  # the history's run is untouched by showing it
    assert len(runs[0].lanes["cpu"].records) == 33


@pytest.mark.parametrize("widths,title", [((16, 256), "ramp 16 → 256"), ((32, 32), "ramp 32 → 32")])
def test_ramp_titles_name_the_widths(qtbot, widths, title):
    plan = tuple(RunConfig(ModelSpec((w, w)), BASE.train) for w in widths)
    live = LiveRun("r5", plan[0], [LaneSpec.parse("cpu")], Schedule.SIDE_BY_SIDE, "", plan)
    from crossover_lab.gui.compare.live_plot import run_title
    assert run_title(live) == f"{title} (2 layers) · batch 64 · cpu"


def test_a_ramp_through_batch_sizes_is_titled_by_its_model_and_batch_sizes(qtbot):
    plan = tuple(RunConfig(ModelSpec((64,)), dataclasses.replace(BASE.train, batch_size=b)) for b in (1, 8, 512))
    live = LiveRun("r6", plan[0], [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], Schedule.INTERLEAVED, "", plan)
    from crossover_lab.gui.compare.live_plot import run_title
    assert run_title(live).startswith("784-64-10 · ramp batch 1 → 8 → 512 · cpu vs cpu1")


def test_a_ramp_says_where_the_lanes_cross_once_both_are_measured_either_side(qtbot):
    live = ramp_run(Schedule.INTERLEAVED)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=5000.0)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    # cpu wins at 16, cpu1 at 256 and 1024: a crossing between 16 and 256.
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 2.0, 20))
    summary.refresh()
    assert not summary.detail.isVisibleTo(summary) or "faster above" not in summary.detail.text()
    live.apply(cpu.segment(2, RAMP[1], 8.0, 20) + cpu1.segment(2, RAMP[1], 4.0, 20))
    summary.refresh()
    # A ramp's headline is its crossing, the one answer of the box; the model trained last is said below it as what
    # was measured on it (issue 55: two judgements in one box could contradict each other).
    assert summary.verdict.said().startswith("cpu1 is faster above about") and "cpu below" in summary.verdict.said()
    assert summary.detail.text().startswith("Now on ") and "cpu 8 ms, cpu1 4 ms a batch (medians so far" in \
        summary.detail.text()
    assert "faster" not in summary.detail.text() and "chance" not in summary.detail.text(), summary.detail.text()


def test_a_ramp_without_a_crossing_says_so_as_a_sentence(qtbot):
    live = ramp_run(Schedule.INTERLEAVED)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=5000.0)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 2.0, 20)
               + cpu.segment(2, RAMP[1], 4.0, 20) + cpu1.segment(2, RAMP[1], 8.0, 20))
    summary.refresh()
    claim, bracket = summary.verdict.said().split(" (one run per width; ", 1)
    assert claim == "cpu is faster from 16 to 256 units (2x)"
    assert bracket.startswith("at most a 5% chance of any false lead over these 2 widths") and bracket.endswith(").")


def test_the_pipelined_clock_shows_for_the_model_a_lane_trains_now_not_the_ramps_first(qtbot):
    live = ramp_run(Schedule.INTERLEAVED)
    cpu, cpu1 = Lane("r1", "cpu", t0=1000.0), Lane("r1", "cpu1", t0=2000.0)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, RAMP[0], 1.0, 20) + cpu1.segment(1, RAMP[0], 3.0, 20))
    cpu.t0 = 3000.0
    live.apply(cpu.segment(2, RAMP[1], 5.0, 20, end=None))  # cpu trains the second model; cpu1 waits its turn
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    summary.set_anatomy(RAMP[1], {"cpu": point("cpu", "CPU (test)", fit_pipelined=4.5),
                                  "cpu1": point("cpu1", "CPU (test)", fit_pipelined=2.5)})
    column = {summary.table.horizontalHeaderItem(c).text(): c for c in range(summary.table.columnCount())}
    row = ROWS.index("Pipelined ms/step")
    assert summary.table.item(row, column["cpu"]).text() == "4.5"  # measured for the model cpu trains now
    assert summary.table.item(row, column["cpu1"]).text() == "–, press Why"  # cpu1 still trains the first


def test_a_ramp_through_batch_sizes_is_named_by_its_batch_sizes_in_the_marks_history_verdict_and_map(qtbot):
    from crossover_lab.gui.compare.history import model_words

    batches = tuple(RunConfig(ModelSpec((64,)), dataclasses.replace(BASE.train, batch_size=b)) for b in (8, 512))
    live = LiveRun("r7", batches[0], [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], Schedule.INTERLEAVED,
                   "2026-01-01T00:00:00+00:00", batches)
    cpu, cpu1 = Lane("r7", "cpu", t0=1000.0), Lane("r7", "cpu1", t0=5000.0)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, batches[0], 1.0, 20) + cpu1.segment(1, batches[0], 2.0, 20)
               + cpu.segment(2, batches[1], 8.0, 20) + cpu1.segment(2, batches[1], 4.0, 20))
    plot = LivePlot()
    qtbot.addWidget(plot)
    plot.x_axis.setCurrentIndex(plot.x_axis.findData("batch"))  # one mark a change where both lanes change at a step
    plot.show_run(live)
    plot.refresh()
    assert plot.marks.labels() == ["batch 8", "batch 512"]  # not "64", "64"
    assert model_words(live.result) == "ramp batch 8 → 512 · 784-64-10"
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    summary.refresh()
    assert "Now on 784-64-10 at batch 512: cpu 8 ms, cpu1 4 ms a batch" in summary.detail.text()
    assert "samples per batch" in summary.verdict.said()  # the ramp's headline: along batch size
    from crossover_lab.gui.compare.map_points import run_points

    shown = run_points(live.result)  # the map's sentence for these points (no second map widget in this test)
    assert "one model at several batch sizes" in CrossoverMap._describe(shown, [], lines(shown))


def test_a_predict_run_never_borrows_a_training_fit():
    """Issue 36: a predict run's summary explained a 1.5 ms call with the training fit ("6.24 ms fixed"): the fits
    the summary is given (the window's findings', core/files/findings.py lane_fits) are of the shown run's own kind
    of model only, and of lanes measured at three sizes or more."""
    from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.files.findings import Findings
    from crossover_lab.core.files.sweeps.rows import SweepRow

    def rows(task: str, widths: tuple[int, ...]) -> list[SweepRow]:
        return [SweepRow("cpu", "CPU", w, 0, RunConfig(ModelSpec((w,)), TrainSpec(batch_size=128)).flops_per_batch,
                         128, 6.0 + w / 100, 6.0, 7.0, 100, layers=1, run_id=f"{task}{w}", task=task) for w in widths]

    findings = Findings(rows("train", (64, 256, 1024)) + rows("predict", (64, 256)))  # two sizes: no fit of its own
    train = RunConfig(ModelSpec((64,)), TrainSpec(batch_size=128))
    assert set(findings.lane_fits(train)) == {"cpu"}
    assert findings.lane_fits(train.replace(task="predict")) == {}
    assert findings.lane_fits(train.replace(batch_size=64)) == {}  # another batch size: another kind


DRAG = tuple(RunConfig(ModelSpec((w,)), BASE.train) for w in (128, 1024))


def test_a_dragged_width_held_for_ten_steady_batches_is_a_point_that_the_star_and_answer_follow(qtbot):
    """Issue 55: a drag 128 → 1,024 with both widths held makes a completed point at both widths for both lanes
    (switched after 10 steady batches or more), the findings judge them, and the map's words name the change of
    the faster lane."""
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    live = LiveRun("d1", BASE, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], Schedule.INTERLEAVED,
                   "2026-01-01T00:00:00+00:00")
    cmap.follow(live)
    cpu, cpu1 = Lane("d1", "cpu"), Lane("d1", "cpu1", t0=2000.0)  # taking turns: never on the cores together
    events = cpu.start() + cpu1.start()
    # cpu1 faster at 128 (1.0 against 2.0 ms), cpu faster at 1,024 (4.0 against 16.0 ms); 128 switched by the drag.
    events += cpu.segment(1, DRAG[0], 2.0, 40, end="switched") + cpu1.segment(1, DRAG[0], 1.0, 40, end="switched")
    events += cpu.segment(2, DRAG[1], 4.0, 40) + cpu1.segment(2, DRAG[1], 16.0, 40)
    live.apply(events + [cpu.finish(DRAG[1]), cpu1.finish(DRAG[1])])
    live.finish()
    cmap.add_run(live.result)
    kinds = sorted((lane, p.point.width, str(p.kind)) for (lane, _), pts in cmap.kept().items() for p in pts)
    assert kinds == [("cpu", 128, "completed"), ("cpu", 1024, "completed"), ("cpu1", 128, "completed"),
                     ("cpu1", 1024, "completed")], kinds
    answers = cmap.findings.answers()
    assert answers and sorted(p.width for p in answers[0].points) == [128, 128, 1024, 1024]
    assert "No two lanes have completed points" not in cmap.description.text()
    assert "faster" in cmap.description.text(), cmap.description.text()


def test_a_width_passed_through_in_fewer_than_ten_batches_is_no_point(qtbot):
    cmap = CrossoverMap()
    qtbot.addWidget(cmap)
    live = LiveRun("d2", BASE, [LaneSpec.parse("cpu")], Schedule.INTERLEAVED, "2026-01-01T00:00:00+00:00")
    cmap.follow(live)
    cpu = Lane("d2", "cpu")
    live.apply(cpu.start() + cpu.segment(1, DRAG[0], 2.0, 6, end="switched") + cpu.segment(2, DRAG[1], 4.0, 40)
               + [cpu.finish(DRAG[1])])
    live.finish()
    cmap.add_run(live.result)
    assert sorted((p.point.width, str(p.kind)) for p in cmap.map_points()) == [(1024, "completed")]


def test_the_headline_is_one_sentence_and_a_short_line_of_how_sure_with_the_whole_a_hover_away(qtbot):
    """Issue 55: what a room reads is the answer alone; the statistics are a line below in short, and whole in the
    tooltip."""
    from crossover_lab.gui.compare.headline import Headline

    whole = ("cpu is faster above about 260 units (≈52.4 MFLOP per batch; 128–1,024 within the noise), cpu1 below "
             "(one run per width; at most a 5% chance of any false lead over these 2 widths, 3.5% measured (rule "
             "calibration, 2026-12-06)).")
    h = Headline()
    qtbot.addWidget(h)
    h.setText(whole)
    assert h.text() == "cpu is faster above about 260 units, cpu1 below."
    assert h.sure.text().startswith("How sure: at most a 5% chance of any false lead over these 2 widths")
    assert "degrees" not in h.sure.text() and "calibration" not in h.sure.text()
    assert h.said() == whole and h.shown.toolTip() == whole
    h.setText("Waiting for steady batches on both lanes…")
    assert h.text() == h.said() and h.sure.isHidden()


def test_a_lead_while_the_lanes_measure_is_provisional_and_quotes_no_error_rate(qtbot):
    """Issue 55: a lead from the batches so far is said as provisional with what it rests on; the rule's error rate
    is quoted only once the run has ended (a 3.8x from 9 batches 'at most a 5% chance' jumped to 1.4x)."""
    live = LiveRun("p1", BASE, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], Schedule.SEQUENTIAL,
                   "2026-01-01T00:00:00+00:00")
    cpu, cpu1 = Lane("p1", "cpu", t0=1000.0), Lane("p1", "cpu1", t0=5000.0)
    summary = SummaryPanel()
    qtbot.addWidget(summary)
    summary.show_run(live)
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, BASE, 1.0, 12, end=None)
               + cpu1.segment(1, BASE, 3.0, 9, end=None))
    summary.refresh()
    said = summary.verdict.said()
    assert said.startswith("So far cpu is 3.0x faster than cpu1") and "provisional: 12 steady batches and 9" in said
    assert "chance" not in said and "provisional" in summary.verdict.sure.text()
    live.apply([cpu.finish(BASE), cpu1.finish(BASE)])
    live.finish()
    summary.refresh()
    assert "So far" not in summary.verdict.said() and "chance of any false lead" in summary.verdict.said()


def test_one_change_is_one_mark_and_close_labels_take_different_rows():
    """Issue 55: lanes taking turns switch seconds apart, and one change of width made a mark per lane ("4000"
    twice beside "128"); consecutive marks of one model are one, and labels of close marks never share a row."""
    from crossover_lab.gui.compare.segment_marks import LABEL_ROWS, label_rows

    rows = label_rows([0.0, 0.5, 1.0, 1.5, 20.0], span=30.0)
    assert rows[:3] == [0, 1, 2] and rows[4] == 0  # three close ones apart; a far one back on the top row
    assert len(set(rows[:3])) == len(LABEL_ROWS)
    assert label_rows([0.0, 10.0, 20.0], span=30.0) == [0, 0, 0]  # far apart: one row


def test_a_drag_back_and_forth_is_one_mark_a_change_on_the_elapsed_axis(qtbot):
    plot = LivePlot()
    qtbot.addWidget(plot)
    live = LiveRun("m1", BASE, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], Schedule.INTERLEAVED,
                   "2026-01-01T00:00:00+00:00")
    plot.show_run(live)
    cpu, cpu1 = Lane("m1", "cpu", t0=1000.0), Lane("m1", "cpu1", t0=1000.0)
    cpu1.t = 0.005  # cpu1 starts, and switches, a little after cpu, as lanes taking turns do
    live.apply(cpu.start() + cpu1.start() + cpu.segment(1, DRAG[0], 1.0, 20, end="switched")
               + cpu1.segment(1, DRAG[0], 1.0, 20, end="switched") + cpu.segment(2, DRAG[1], 4.0, 20, end=None)
               + cpu1.segment(2, DRAG[1], 4.0, 20, end=None))
    plot.refresh()
    assert plot.marks.labels() == ["128", "1024"]
