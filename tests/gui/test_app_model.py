"""The window's one state (issue 55, gui/app_model.py): Qt-free, told once per batch of changes, and every view of a
window renders it: the run desk, the live switch, the map and the Sweep tab read the configuration and the lanes
from it, and a point put in the findings by one view reaches the others."""
from __future__ import annotations

import ast
from pathlib import Path

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.sweeps.rows import SweepRow
from crossover_lab.gui.app_model import AppModel, Change

SOURCE = Path(__file__).resolve().parents[2] / "gui" / "app_model.py"


def test_the_app_model_imports_no_qt():
    tree = ast.parse(SOURCE.read_text())
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert names and not [n for n in names if "PySide" in n or "pyqtgraph" in n], names


def test_a_setting_is_told_at_once_and_points_put_together_are_told_once_later():
    waiting: list = []
    app = AppModel(defer=waiting.append)
    told, config_told = [], []
    app.subscribe(told.append)
    app.subscribe(config_told.append, Change.CONFIG)
    app.set_config(RunConfig(ModelSpec((64,)), TrainSpec()))
    app.set_config(RunConfig(ModelSpec((64,)), TrainSpec()))  # the same: no change
    app.set_lanes([])  # the same as before: no change
    assert told == [frozenset({Change.CONFIG})] and config_told == told and not waiting
    app.set_config(None, "width 1: type a whole number")
    assert app.config is None and app.problem.startswith("width 1") and len(config_told) == 2
    for run_id in ("r1", "r2"):
        app.findings.put(_rows(run_id))
    assert len(told) == 2 and len(waiting) == 1  # the findings: told once the event loop runs, once
    waiting.pop()()
    assert told[-1] == frozenset({Change.FINDINGS}) and len(config_told) == 2


def _rows(run_id: str) -> list[SweepRow]:
    return [SweepRow(lane, "CPU", 64, 0, 64_000, 128, ms, ms * 0.97, ms * 1.03, 100, layers=1, run_id=run_id)
            for lane, ms in (("cpu", 1.0), ("cpu1", 2.0))]


def test_a_point_put_in_the_findings_or_dropped_tells_the_subscribers_once():
    app = AppModel()
    told = []
    app.subscribe(told.append, Change.FINDINGS)
    rows = _rows("r1")
    assert app.findings.put(rows) and told == [frozenset({Change.FINDINGS})]
    assert not app.findings.put(rows) and len(told) == 1  # the same points again: nothing changed, nobody told
    assert not app.findings.drop(["another run"]) and len(told) == 1
    assert app.findings.drop(["r1"]) and len(told) == 2


def test_the_window_reads_its_config_and_lanes_from_one_state(make_window, qtbot):
    window = make_window()
    panel = window.side.model_panel
    panel.widths.spins[0].setValue(300)
    qtbot.waitUntil(lambda: window.app.config is not None and window.app.config.model.widths[0] == 300)
    assert window.desk.config is window.app.config and window.config is window.app.config
    qtbot.waitUntil(lambda: window.compare.map.predicted.config is window.app.config)
    assert list(window.app.lanes) == window.side.lanes_panel.selected_specs()
    panel.widths.spins[0].lineEdit().setText("")  # an invalid width: no config, and the problem said
    panel.widths.spins[0].interpretText()
    if window.app.config is None:
        assert window.app.problem
