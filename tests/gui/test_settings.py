"""What the window remembers: configuration, lanes, schedule, toggles and geometry; autosaved runs offered back."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, two_lane_result

from crossover_lab.core.config import RunConfig, Schedule
from crossover_lab.core.presets import PRESETS, WINDOW_DEFAULT
from crossover_lab.core.files import autosave
from crossover_lab.gui.settings import AppSettings


def test_settings_persist_across_two_windows(make_window):
    first = make_window()
    first.side.model_panel.apply_preset("qa")
    first.side.model_panel.samples.setValue(3000)
    first.side.lanes_panel.boxes["cpu"].setChecked(False)
    first.side.lanes_panel.set_schedule(Schedule.SEQUENTIAL)
    first.compare.plot.log_y.setChecked(True)
    first.compare.plot.x_axis.setCurrentIndex(first.compare.plot.x_axis.findData("elapsed"))
    saved_config = first.side.model_panel.config()
    first.close()

    second = make_window()
    second.show()
    config = second.side.model_panel.config()
    assert config == saved_config
    assert config.model == PRESETS["qa"].config.model and config.train.samples == 3000
    assert second.side.lanes_panel.selected_names() == ["cpu1"]
    assert second.side.lanes_panel.schedule() == "sequential"
    assert second.compare.plot.log_y.isChecked() and second.compare.plot.x_axis.currentData() == "elapsed"


GEOMETRY_SCRIPT = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from crossover_lab.gui.window.main_window import MainWindow
from gui_fixtures import no_gpu_options
window = MainWindow(discover_fn=no_gpu_options, prestart=False, offer_recovery=False)
window.show()
app.processEvents()
if sys.argv[1] == "save":
    window.resize(1234, 777)
    window.main_split.setSizes([420, 814])
    window.compare.top_split.setSizes([500, 300])
app.processEvents()
print(window.width(), window.height(), window.main_split.sizes(), window.compare.top_split.sizes())
window.close()
"""


@pytest.mark.lanes  # the window as a process of its own, twice
def test_geometry_and_splitters_persist(gui_home, tmp_path):
    # The default offscreen screen (800x800) is smaller than the window: use a 1920x1200 virtual one.
    screen = tmp_path / "screen.json"
    screen.write_text(json.dumps({"screens": [{"name": "test", "x": 0, "y": 0, "width": 1920, "height": 1200,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    outputs = [subprocess.run([sys.executable, "-c", GEOMETRY_SCRIPT, step], env=env, cwd=ROOT, text=True,
                              capture_output=True, timeout=60) for step in ("save", "restore")]
    for out in outputs:
        assert out.returncode == 0, out.stderr
    saved, restored = (out.stdout.strip().splitlines()[-1] for out in outputs)
    width, height, side = saved.split(" ", 3)[:3]
    assert (width, height) == ("1234", "777") and 418 <= int(side.strip("[,")) <= 420  # less the handles
    assert restored == saved


def test_reset_to_defaults(make_window):
    window = make_window()
    window.side.model_panel.apply_preset("huge")
    window.side.lanes_panel.select(["cpu1"])
    window.side.lanes_panel.set_schedule(Schedule.SEQUENTIAL)
    form = window.sweep.sweep_form
    defaults = (form.widths.text(), form.layers.value(), form.steady.value())
    form.batches.setText("1,8,64,512")  # what a saved model's sweep along batch size leaves
    form.along.setCurrentIndex(form.along.findData("batch"))
    form.layers.setValue(6)
    window.actions.reset.trigger()
    assert window.side.model_panel.config() == WINDOW_DEFAULT  # the default MLP, half a minute a lane
    assert form.batches.text() == "" and not form.along_batch()  # issue 36: the form's batch sizes stayed
    assert (form.widths.text(), form.layers.value(), form.steady.value()) == defaults
    assert window.side.lanes_panel.selected_names() == ["cpu", "cpu1"]
    assert window.side.lanes_panel.schedule_box.currentData() == "auto"
    assert window.side.lanes_panel.schedule() == "interleaved"  # cpu and cpu1 share this machine's cores


def test_a_damaged_settings_file_reads_as_defaults(make_window, gui_home):
    settings = AppSettings()
    settings.set_text("run/config", "{not json")
    settings.set_text("run/lanes", "[[[")
    settings.sync()
    window = make_window()
    assert window.side.model_panel.config() == WINDOW_DEFAULT  # the default MLP, half a minute a lane
    assert window.side.lanes_panel.selected_names() == ["cpu", "cpu1"]


def test_autosaved_runs_are_offered_back_and_restored(make_window):
    saved = two_lane_result("20260101-120000-abcd", 64, 1.0, 2.0)
    autosave.save_run(saved, {"test": True})
    window = make_window(offer_recovery=True)
    assert window.recovery is not None and window.recovery.run_ids == [saved.run_id]
    assert window.recovery.isVisibleTo(window)
    assert window.compare.history.run_ids() == []  # nothing is loaded without asking
    window.recovery.restore.click()
    assert window.compare.history.run_ids() == [saved.run_id]
    assert {p.lane for p in window.compare.map.points()} == {"cpu", "gpu0"}
    restored = window.controller.run(saved.run_id)
    assert [r.row() for r in restored.lanes["cpu"].records] == [r.row() for r in saved.lanes["cpu"].records]
    assert restored.lanes["cpu"].summary.median_ms == pytest.approx(saved.lanes["cpu"].summary.median_ms)
    assert restored.config == saved.config
    window.delete_run(saved.run_id)
    assert autosave.saved_run_ids() == [] and window.compare.map.points() == []


def test_discarding_the_offer_deletes_the_files(make_window):
    autosave.save_run(two_lane_result("20260101-120000-dddd", 64, 1.0, 2.0), {})
    window = make_window(offer_recovery=True)
    window.recovery.discard.click()
    assert autosave.saved_run_ids() == []
    assert not window.recovery.isVisibleTo(window)


def test_a_run_interrupted_by_a_crash_reads_back_as_interrupted(make_window):
    partial = two_lane_result("20260101-130000-eeee", 64, 1.0, 2.0)
    for lane in partial.lanes.values():
        lane.summary = None  # as autosaved mid-run, before any lane had finished
    autosave.save_run(partial, {})
    restored = autosave.load_run(partial.run_id)
    assert all("interrupted" in lane.failure for lane in restored.lanes.values())
    assert len(restored.lanes["cpu"].records) == len(partial.lanes["cpu"].records)


def test_delete_run_asks_first_and_keeps_the_run_when_cancelled(make_window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    window = make_window()
    run = two_lane_result("20260101-140000-aaaa", 64, 2.0, 1.0)
    window.controller.add_runs([run])
    window.compare.history.add_run(run)
    asked = []

    def answer(choice: str):
        def exec_(box):
            asked.append(box.text())
            box.buttons()  # the box has been built
            chosen = next(b for b in box.buttons() if b.text().replace("&", "") == choice)
            chosen.click()
            return 0
        return exec_

    monkeypatch.setattr(QMessageBox, "exec", answer("Cancel"))
    window._on_history_delete_requested(run.run_id)
    assert window.controller.run(run.run_id) is not None and "Delete the run of" in asked[-1]
    monkeypatch.setattr(QMessageBox, "exec", answer("Delete"))
    window._on_history_delete_requested(run.run_id)
    assert window.controller.run(run.run_id) is None
