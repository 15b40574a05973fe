"""A model factory's run, ramp and sweep from the window: every width they time is built and counted by a lane (a
stand-in here, monkeypatched) off the GUI thread before the engine gets it, so each is timed with its own figures;
a width that cannot be built is a sentence and nothing starts."""
from __future__ import annotations

import hashlib

import pytest

from crossover_lab.core.config import ConfigError, FactoryModel, FactoryWidth, SavedModel


def figures(factory: FactoryModel, width: int) -> SavedModel:
    return SavedModel(factory.path, factory.sha256, factory.size_bytes, f"dense_{width}", (784,), 10,
                      37 * width + 4, 72 * width, "", 2)


@pytest.fixture
def factory_window(make_window, monkeypatch, tmp_path):
    """A window whose Model panel holds build(width) of a file (opened at width 64 and counted), the widths the
    stand-in lane was asked for, and what the run controller was asked to start."""
    from crossover_lab.gui.sweep import tab
    from crossover_lab.gui.window import model_file

    asked: list[tuple[int, ...]] = []

    def inspect(pool, lane, factory, widths, cancel=None):
        todo = tuple(w for w in dict.fromkeys(widths) if factory.at(w) is None)
        asked.append(todo)
        if 13 in todo:
            raise ConfigError("build(13) raised ValueError: no model of width 13")
        return factory.with_built([FactoryWidth(w, figures(factory, w)) for w in todo])

    monkeypatch.setattr(model_file, "inspect_factory", inspect)
    monkeypatch.setattr(tab, "inspect_factory", inspect)
    window = make_window()
    started: list[tuple] = []
    window.controller.start_run = lambda config, specs, schedule, plan=(): started.append((config, plan))
    path = tmp_path / "my_models.py"
    path.write_text("def build(width):\n    pass\n")
    window.side.model_panel.widths.set_widths((64,))
    window.side.model_panel.model_file_chosen.emit(str(path))
    opener = window.desk.model_file
    return window, opener, asked, started


def test_a_run_of_a_width_not_counted_yet_builds_it_first_then_starts_with_its_figures(factory_window, qtbot):
    window, opener, asked, started = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    assert asked == [(64,)]
    window.side.model_panel.widths.spins[0].setValue(200)  # typed, then Start at once: before the panel's build came
    assert window.desk.start_run() is None and started == []
    assert not window.side.start_button.isEnabled()  # while the lane builds, nothing else starts
    assert window.status.message() == "cpu builds and counts build(200) (my_models.py) before it is timed…"
    qtbot.waitUntil(lambda: len(started) == 1, timeout=5000)
    config, plan = started[0]
    assert plan == () and config.model.widths == (200,) and config.model.figures is not None
    assert config.flops_per_batch == 3 * 72 * 200 * config.train.batch_size and asked == [(64,), (200,)]
    qtbot.wait(400)  # the panel's own ask for 200 comes after: it was counted already
    assert asked == [(64,), (200,)] and window.side.start_button.isEnabled()


def test_a_ramp_through_widths_and_one_through_batch_sizes_time_only_counted_widths(factory_window, qtbot):
    window, opener, asked, started = factory_window
    side = window.side
    side.ramp_widths.setText("16,64,256")
    window.desk.start_ramp()
    qtbot.waitUntil(lambda: len(started) == 1, timeout=5000)
    _, plan = started[0]
    assert [c.model.widths for c in plan] == [(16,), (64,), (256,)]
    assert [c.flops_per_batch for c in plan] == [3 * 72 * w * c.train.batch_size for w, c in zip((16, 64, 256), plan)]
    assert sorted(w for a in asked for w in a) == [16, 64, 256]  # 64 once, though the panel and the ramp want it
    side.set_ramp_along("batch")
    side.ramp_widths.setText("8,512")
    window.desk.start_ramp()
    qtbot.waitUntil(lambda: len(started) == 2, timeout=5000)
    _, plan = started[1]
    assert [(c.model.widths, c.train.batch_size, c.flops_per_batch) for c in plan] == \
        [((64,), 8, 3 * 72 * 64 * 8), ((64,), 512, 3 * 72 * 64 * 512)]


def test_a_width_that_cannot_be_built_is_a_sentence_and_nothing_starts(factory_window, qtbot):
    window, opener, asked, started = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    window.side.ramp_widths.setText("16,13")
    window.desk.start_ramp()
    qtbot.waitUntil(lambda: not window.desk.preparing, timeout=5000)
    assert started == [] and "Not started: build(13) raised ValueError" in window.status.message()
    assert window.side.start_button.isEnabled()


def test_a_sweep_of_a_factory_builds_every_width_before_its_first_point(factory_window, qtbot, monkeypatch):
    from crossover_lab.gui.sweep import tab

    window, opener, asked, _ = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    window.desk.update_controls()
    sweep = window.sweep
    assert not sweep.sweep_form.layers.isEnabled() and sweep.sweep_form.layers.value() == 1 and sweep.sweep_form.widths.isEnabled()
    assert not sweep.sweep_form.preset.isEnabled() and "builds the whole model from one width" in sweep.sweep_form.layers.toolTip()
    swept = []
    monkeypatch.setattr(tab, "run_sweeps", lambda pool, lanes, specs, on_point, cancel: swept.append(specs) or [])
    sweep.sweep_form.widths.setText("32,64,128")
    sweep.start()
    qtbot.waitUntil(lambda: not sweep.running, timeout=5000)
    (specs,) = swept
    points = [c for s in specs for c in s.points()]
    assert [c.model.widths for c in points] == [(32,), (64,), (128,)]
    assert all(c.flops_per_batch == 3 * 72 * c.model.widths[0] * c.train.batch_size for c in points)
    assert asked == [(64,), (32, 128)]
    sweep.sweep_form.widths.setText("32,13")
    sweep.start()
    qtbot.waitUntil(lambda: not sweep.running, timeout=5000)
    assert len(swept) == 1 and "The sweep failed: build(13) raised ValueError" in sweep.sweep_form.progress_label.text()
    sweep.start_ladder()
    assert "ranking knobs with your model factory is not built" in sweep.sweep_form.progress_label.text()


def test_a_width_changed_during_a_factory_run_switches_only_to_a_width_counted_before(qtbot, gui_home, tmp_path):
    from PySide6.QtCore import QObject, Signal

    from crossover_lab.core.config import FACTORY, ModelSpec, RunConfig
    from crossover_lab.gui.panels.model import ModelPanel
    from crossover_lab.gui.window.live_switch import LiveSwitch
    from crossover_lab.gui.app_model import AppModel

    class Controller(QObject):
        run_started = Signal(object)
        running = True

        def __init__(self) -> None:
            super().__init__()
            self.sent: list[RunConfig] = []

        def switch_model(self, config: RunConfig) -> bool:
            self.sent.append(config)
            return True

    panel = ModelPanel()
    qtbot.addWidget(panel)
    factory = FactoryModel(str(tmp_path / "m.py"), hashlib.sha256(b"").hexdigest(), 0, "build")
    factory = factory.with_built([FactoryWidth(w, figures(factory, w)) for w in (64, 256)])
    panel.set_config(RunConfig(ModelSpec(widths=(64,), family=FACTORY, factory=factory)))
    controller, said = Controller(), []
    app = AppModel(panel.current())  # the window's state, which the panel writes into
    panel.config_changed.connect(lambda config: app.set_config(config, panel.problem()))
    switch = LiveSwitch(app, panel, controller, lambda text, error=False: said.append(text))
    controller.run_started.emit(type("Live", (), {"config": panel.config()})())
    panel.widths.spins[0].setValue(100)  # never built: not sent, and the run goes on
    switch.send()
    assert controller.sent == [] and said[-1].startswith("build(100) has not been built yet: a lane builds the new "
                                                         "width after this run")
    assert "this run goes on with build(64) (m.py)" in said[-1]
    panel.widths.spins[0].setValue(256)  # built before: sent with its own figures
    switch.send()
    (sent,) = controller.sent
    assert sent.model.widths == (256,) and sent.flops_per_batch == 3 * 72 * 256 * sent.train.batch_size
    assert said[-1].startswith("Switching every lane to build(256) (m.py)")


@pytest.mark.lanes
def test_a_real_lane_builds_the_factory_the_window_opened_at_the_width_it_shows(make_window, qtbot, tmp_path):
    """The whole path with a lane process: the file opened, build(64) imported and called by the cpu lane, its
    figures in the cost line (Dense(64) on 32 inputs and a softmax of 4: 37·64 + 4 parameters, 72·64 FLOPs per
    sample forward); the panel is grabbed as the user would see it."""
    window = make_window()
    path = tmp_path / "my_models.py"
    path.write_text("import keras\n\n\ndef build(width):\n    inputs = keras.Input(shape=(32,))\n"
                    "    x = keras.layers.Dense(width, activation='relu')(inputs)\n"
                    "    return keras.Model(inputs, keras.layers.Dense(4, activation='softmax')(x))\n")
    panel = window.side.model_panel
    panel.widths.set_widths((64,))
    panel.model_file_chosen.emit(str(path))
    assert panel.cost.text() == "counting build(64)…"
    qtbot.waitUntil(lambda: not window.desk.model_file.running, timeout=240_000)
    figures = panel.config().model.figures
    assert figures is not None and (figures.params, figures.forward_flops) == (37 * 64 + 4, 72 * 64)
    assert panel.cost.text().startswith("build(64) (my_models.py)\n2,372 parameters · ")
    assert panel.grab().save(str(tmp_path / "factory_panel.png"))


def test_a_width_settled_on_during_a_run_waits_for_the_lanes_and_is_built_when_the_run_ends(factory_window, qtbot):
    window, opener, asked, _ = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    panel = window.side.model_panel
    busy = {"on": True}
    opener._busy = lambda: busy["on"]  # a run holds the lanes
    panel.widths.spins[0].setValue(96)
    qtbot.wait(400)
    assert asked == [(64,)] and panel.cost.text() == ("build(96) (my_models.py): not counted yet; a lane builds it "
                                                      "once what is measuring has ended")
    busy["on"] = False
    window.desk._lanes_free()  # the run ended: the width that waited is built now, once
    qtbot.waitUntil(lambda: len(asked) == 2 and not opener.running, timeout=5000)
    assert asked[-1] == (96,) and panel.cost.text().startswith("build(96) (my_models.py)\n3,556 parameters")
    window.desk._lanes_free()
    qtbot.wait(400)
    assert len(asked) == 2


def test_the_why_tab_dissects_a_factorys_width_with_its_own_figures(factory_window, qtbot, monkeypatch):
    from crossover_lab.gui.why import tab as why_tab
    from crossover_lab.gui.window import model_file

    window, opener, asked, _ = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    monkeypatch.setattr(why_tab, "inspect_factory", model_file.inspect_factory)  # the stand-in lane
    dissected = []
    monkeypatch.setattr(why_tab, "measure_anatomies", lambda pool, lanes, configs, cancel, on_outcome:
                        dissected.append(configs) or [])
    window.side.model_panel.widths.spins[0].setValue(300)
    window.why.start()  # before the panel's build of 300: the Why tab's own job builds it first
    qtbot.waitUntil(lambda: not window.why.running, timeout=5000)
    ((config,),) = dissected
    assert config.model.widths == (300,) and config.flops_per_batch == 3 * 72 * 300 * config.train.batch_size
    assert (300,) in asked


def test_stop_while_a_lane_builds_a_runs_width_starts_nothing(factory_window, qtbot, monkeypatch):
    from crossover_lab.gui.window import model_file

    window, opener, asked, started = factory_window
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    building = []

    def slow(pool, lane, factory, widths, cancel=None):  # a lane that takes its time, until it is stopped
        building.append(tuple(widths))
        assert cancel is not None and cancel.wait(5)
        return factory

    monkeypatch.setattr(model_file, "inspect_factory", slow)
    window.side.model_panel.widths.spins[0].setValue(500)
    window.desk.start_run()
    qtbot.waitUntil(lambda: building == [(500,)], timeout=5000)
    assert window.actions.stop.isEnabled()
    window.desk.stop()
    qtbot.waitUntil(lambda: not window.desk.preparing, timeout=5000)
    assert started == [] and window.status.message() == "Not started: build(500) was not built: stopped."
    assert window.side.start_button.isEnabled()
    assert window.side.model_panel.cost.text() == "build(500) (my_models.py): not counted yet (stopped)"
