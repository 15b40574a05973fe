"""A lane's status has one source, LaneResult.status, and every view of a run agrees with it."""
from __future__ import annotations

import json
import math

import pytest

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.files.run_files import export_runs, read_runs
from crossover_lab.core.records import BatchTiming, RunSettings, RunStarted, RunSummary
from crossover_lab.core.results import LaneResult, RunResult
from crossover_lab.core.files.sweeps.rows import SweepRow

CONFIG = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=8))


def records(lane: str, n: int) -> list[BatchTiming]:
    return [BatchTiming("r", lane, "CPU", 1, i, i, i * 0.01, 1.0, 8, i <= 5, 1.0) for i in range(1, n + 1)]


def summary(lane: str, status: str, reason: str = "") -> RunSummary:
    return RunSummary("r", lane, "CPU", status, reason=reason, n_batches=10, median_ms=1.0, p10_ms=0.9, p90_ms=1.1)


def lanes() -> dict[str, LaneResult]:
    started = {name: RunStarted("r", name, "CPU", RunSettings.from_json({"jit_compile": False})) for name in ("cpu", "cpu1", "cpu2", "cpu3", "gpu0")}
    return {
        "cpu": LaneResult("cpu", started["cpu"], records("cpu", 15), summary("cpu", "completed")),
        "cpu1": LaneResult("cpu1", started["cpu1"], records("cpu1", 7), summary("cpu1", "failed", "boom"), failure="boom"),
        "cpu2": LaneResult("cpu2", started["cpu2"], records("cpu2", 15), summary("cpu2", "cancelled")),
        "cpu3": LaneResult("cpu3", None, [], None, failure="stopped before its turn", stopped=True),
        "gpu0": LaneResult("gpu0", None, [], None, failure="the lane could not start: no backend"),
    }


EXPECTED = {"cpu": "completed", "cpu1": "failed", "cpu2": "cancelled", "cpu3": "cancelled", "gpu0": "failed"}


def test_the_rule():
    assert {name: lane.status for name, lane in lanes().items()} == EXPECTED
    assert LaneResult("x").status == "waiting"
    assert LaneResult("x", RunStarted("r", "x", "CPU")).status == "running"


def test_files_keep_the_status(tmp_path):
    result = RunResult("r", CONFIG, Schedule.SEQUENTIAL, "2026-01-01T00:00:00+00:00", lanes())
    csv_path, json_path = export_runs(tmp_path / "t.csv", [result], {})
    meta = json.loads(json_path.read_text())
    assert {name: lane["status"] for name, lane in meta["runs"][0]["lanes"].items()} == EXPECTED
    (back,) = read_runs(csv_path)
    assert {name: lane.status for name, lane in back.lanes.items()} == EXPECTED


def test_sweep_rows_take_the_status_from_the_lane():
    result = RunResult("r", CONFIG, Schedule.SEQUENTIAL, "", lanes())
    rows = {name: SweepRow.from_result(result, name) for name in result.lanes}
    assert {name: row.status for name, row in rows.items()} == EXPECTED
    assert math.isnan(rows["cpu3"].median_ms) and rows["cpu3"].reason == "stopped before its turn"


def test_the_window_shows_the_same_status(qtbot):
    from crossover_lab.gui.compare.history import run_status
    from crossover_lab.gui.live_run import LiveRun
    from crossover_lab.gui.compare.summary import ROWS, SummaryPanel

    result = RunResult("r", CONFIG, Schedule.SEQUENTIAL, "", lanes())
    assert run_status(result) == "2 of 5 lanes failed"
    live = LiveRun("r", CONFIG, [], Schedule.SEQUENTIAL, "")
    live.result.lanes.update(lanes())
    live.versions.update({name: 1 for name in result.lanes})
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.show_run(live)
    shown = {name: panel.table.item(ROWS.index("Status"), i).text() for i, name in enumerate(live.lanes)}
    assert shown == EXPECTED


@pytest.mark.parametrize("statuses, expected", [
    ({"cpu": "completed", "cpu2": "cancelled"}, "cancelled"),
    ({"cpu": "completed"}, "completed"),
    ({"cpu1": "failed"}, "failed"),
])
def test_the_history_names_the_worst_lane(statuses, expected):
    from crossover_lab.gui.compare.history import run_status

    all_lanes = lanes()
    result = RunResult("r", CONFIG, Schedule.SEQUENTIAL, "", {name: all_lanes[name] for name in statuses})
    assert run_status(result) == expected
