"""The model panel: sliders and spin boxes change the config and the FLOP count; presets are exact."""
from __future__ import annotations

import math

import pytest

from crossover_lab.core.config import MAX_WIDTH, MIN_WIDTH, ModelSpec
from crossover_lab.core.presets import PRESETS
from crossover_lab.core.words.numbers import fmt_flops
from crossover_lab.gui.panels.model import ModelPanel
from crossover_lab.gui.widgets.width_slider import ROUND_WIDTHS, nearest_position


@pytest.fixture
def panel(qtbot, gui_home):
    widget = ModelPanel()
    qtbot.addWidget(widget)
    return widget


def test_slider_changes_width_config_and_flops(panel):
    seen = []
    panel.config_changed.connect(seen.append)
    slider, spin = panel.widths.sliders[0], panel.widths.spins[0]
    slider.setValue(ROUND_WIDTHS.index(1024))
    assert spin.value() == 1024
    config = panel.config()
    assert config.model.widths == (1024,)
    expected = ModelSpec((1024,)).flops_per_batch(config.train.batch_size)
    assert config.flops_per_batch == expected == 6 * 1024 * 10 * 128 + 4 * 784 * 1024 * 128
    assert fmt_flops(expected) in panel.cost.text()
    assert f"{ModelSpec((1024,)).params:,} parameters" in panel.cost.text()
    assert seen and seen[-1] == config  # the window hears of every change as it happens


def test_dragging_updates_the_flop_count_at_every_step(panel):
    labels = []
    panel.config_changed.connect(lambda cfg: labels.append(panel.cost.text()))
    slider = panel.widths.sliders[0]
    slider.setSliderDown(True)  # as while dragging: tracking emits on every position
    for position in range(ROUND_WIDTHS.index(16), ROUND_WIDTHS.index(4096) + 1):
        slider.setValue(position)
    slider.setSliderDown(False)
    assert len(set(labels)) == ROUND_WIDTHS.index(4096) - ROUND_WIDTHS.index(16) + 1
    assert panel.config().model.widths == (4096,)


def test_slider_is_logarithmic_over_the_whole_range_and_snaps_to_round_values():
    assert ROUND_WIDTHS[0] == MIN_WIDTH and ROUND_WIDTHS[-1] == MAX_WIDTH
    ratios = [b / a for a, b in zip(ROUND_WIDTHS, ROUND_WIDTHS[1:])]
    assert max(ratios) <= 2.0 and min(ratios) > 1.0
    # Roughly even in log(width): half the positions lie below the geometric middle (128).
    middle = math.sqrt(MIN_WIDTH * MAX_WIDTH)
    below = sum(1 for w in ROUND_WIDTHS if w < middle)
    assert 0.35 < below / len(ROUND_WIDTHS) < 0.65
    for width in (16, 32, 50, 64, 100, 128, 150, 256, 512, 750, 1000, 1024, 4096):
        assert width in ROUND_WIDTHS


def test_spin_box_keeps_the_exact_value_and_the_slider_follows(panel):
    spin, slider = panel.widths.spins[0], panel.widths.sliders[0]
    spin.setValue(777)
    assert panel.config().model.widths == (777,)
    assert ROUND_WIDTHS[slider.value()] in (750, 800)
    assert slider.value() == nearest_position(777)
    assert spin.value() == 777  # the slider's move did not snap the exact value


def test_number_of_layers_shows_that_many_rows(panel):
    panel.layers.setValue(3)
    for i, width in enumerate((300, 200, 100)):
        panel.widths.spins[i].setValue(width)
    assert panel.config().model.widths == (300, 200, 100)
    assert [s.isVisibleTo(panel) for s in panel.widths.spins] == [True] * 3 + [False] * 5
    panel.layers.setValue(1)
    assert panel.config().model.widths == (300,)
    panel.layers.setValue(8)
    assert len(panel.config().model.widths) == 8


def test_added_layers_copy_the_last_width(panel):
    # Not 1-unit bottlenecks, nor widths left over from an earlier preset.
    panel.apply_preset("huge")
    panel.apply_preset("blog-small")  # 784-128-10
    panel.layers.setValue(3)
    assert panel.config().model.widths == (128, 128, 128)
    panel.widths.spins[2].setValue(64)
    panel.layers.setValue(5)
    assert panel.config().model.widths == (128, 128, 64, 64, 64)


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_set_the_models_exactly(panel, name):
    panel.data.setCurrentText("synthetic")
    panel.samples.setValue(2000)
    panel.apply_preset(name)
    config, preset = panel.config(), PRESETS[name].config
    assert config.model == preset.model
    for key in ("batch_size", "epochs", "optimizer", "learning_rate", "preprocessing"):
        assert getattr(config.train, key) == getattr(preset.train, key)
    assert (config.train.data, config.train.samples) == ("synthetic", 2000)  # the user's data stays


def test_the_seeds_models(panel):
    expected = {"qa": ((750, 150, 50, 50), "nadam", 128), "blog-small": ((128,), "adam", 32),
                "blog-wide": ((1000, 1000), "adam", 32)}
    for name, (widths, optimizer, batch) in expected.items():
        index = panel.preset.findData(name)
        panel.preset.setCurrentIndex(index)
        panel.preset.activated.emit(index)
        cfg = panel.config()
        assert (cfg.model.widths, cfg.train.optimizer, cfg.train.batch_size) == (widths, optimizer, batch)
        assert cfg.model.label() == "-".join(map(str, (784, *widths, 10)))


def test_training_settings_reach_the_config(panel):
    panel.batch.setValue(64)
    panel.epochs.setValue(3)
    panel.optimizer.setCurrentText("sgd")
    panel.learning_rate.setValue(0.01)
    panel.dropout.setValue(0.5)
    panel.samples.setValue(0)
    cfg = panel.config()
    assert (cfg.train.batch_size, cfg.train.epochs, cfg.train.optimizer) == (64, 3, "sgd")
    assert cfg.train.learning_rate == pytest.approx(0.01)
    assert cfg.model.dropout == pytest.approx(0.5)
    assert cfg.train.samples is None and panel.samples.text() == "all"


def test_a_missing_data_file_gets_a_sentence(panel):
    seen = []
    panel.config_changed.connect(seen.append)
    panel.data.setCurrentText("/no/such/folder/digits.npz")
    assert panel.current() is None and seen[-1] is None
    assert "does not exist" in panel.problem()
    assert panel.problem_label.isVisibleTo(panel)
    assert "/no/such/folder/digits.npz" in panel.problem_label.text()
    panel.data.setCurrentText("synthetic")
    assert panel.current() is not None and not panel.problem_label.isVisibleTo(panel)


def test_every_control_has_a_tooltip(panel):
    controls = [panel.preset, panel.layers, panel.activation, panel.dropout, panel.batch, panel.epochs,
                panel.optimizer, panel.learning_rate, panel.data, panel.samples, *panel.widths.sliders,
                *panel.widths.spins]
    assert all(c.toolTip() for c in controls)


def test_typed_numbers_out_of_range_are_clamped_with_a_sentence(panel, qtbot):
    from PySide6.QtCore import Qt

    said = []
    panel.input_adjusted.connect(said.append)
    panel.show()
    spin = panel.widths.spins[0]
    spin.selectAll()
    qtbot.keyClicks(spin, "99999")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert spin.value() == 16384 and panel.config().model.widths[0] == 16384
    assert said == ["Width of layer 1: 99,999 is outside 1-16,384: set to 16,384."]
    panel.layers.selectAll()
    qtbot.keyClicks(panel.layers, "512")
    qtbot.keyClick(panel.layers, Qt.Key.Key_Return)
    assert panel.layers.value() == 8 and said[-1] == "Hidden layers: 512 is outside 1-8: set to 8."


def test_the_preset_box_shows_the_preset_loaded_until_a_setting_differs(gui_home, qtbot):
    from crossover_lab.gui.panels.model import ModelPanel

    panel = ModelPanel()
    qtbot.addWidget(panel)
    index = panel.preset.findData("blog-small")
    panel.preset.setCurrentIndex(index)
    panel.preset.activated.emit(index)
    assert panel.preset.currentData() == "blog-small" and panel.config().model.widths == (128,)
    panel.batch.setValue(64)  # no longer the preset
    assert panel.preset.currentData() == ""


def test_the_family_chooser_shows_its_own_settings_and_keeps_a_transformer_one_width(panel):
    """A family switch keeps the model's cost, not its width: a width means filters in one family and units in
    another (a 1000-wide MLP's widths made a CNN that trained for minutes)."""
    panel.apply_preset("blog-wide")  # 784-1000-1000-10
    form = panel._form
    mlp_flops = panel.config().model.flops_per_batch(1)
    assert not form.isRowVisible(panel.cell) and not form.isRowVisible(panel.heads)
    panel.family.setCurrentIndex(panel.family.findData("rnn"))
    assert form.isRowVisible(panel.cell) and form.labelForField(panel.layers).text() == "RNN layers"
    rnn = panel.config().model
    assert rnn.family == "rnn" and len(rnn.widths) == 2 and rnn.widths[0] == rnn.widths[1] < 1000
    assert 0.8 < rnn.flops_per_batch(1) / mlp_flops < 1.25 and panel.cell.currentText() == "lstm"
    panel.cell.setCurrentText("gru")
    assert panel.config().model.label() == f"gru {rnn.widths[0]}-{rnn.widths[0]}"
    gru_flops = panel.config().model.flops_per_batch(1)  # three gates to the LSTM's four: less
    panel.family.setCurrentIndex(panel.family.findData("cnn"))
    cnn = panel.config().model
    assert 0.75 < cnn.flops_per_batch(1) / gru_flops < 1.33 and cnn.widths[0] <= 64
    panel.family.setCurrentIndex(panel.family.findData("transformer"))
    assert form.isRowVisible(panel.heads) and not form.isRowVisible(panel.cell)
    widths = panel.config().model.widths
    assert widths[0] == widths[1] and widths[0] % panel.heads.value() == 0  # one d_model for every block
    panel.widths.spins[1].setValue(128)  # a slider moved: every block follows it
    assert panel.config().model.widths == (128, 128) and panel.config().model.family == "transformer"
    panel.heads.setValue(3)
    assert panel.current() is None and "divides d_model" in panel.problem_label.text()
    panel.heads.setValue(8)
    assert panel.config().model.label() == "transformer 2×128 (8 heads)"
    assert panel.cost.text().startswith("transformer 2×128 (8 heads)\n") and "FLOP per step at batch" in panel.cost.text()
    panel.apply_preset("cnn-small")
    assert panel.family.currentData() == "cnn" and form.labelForField(panel.layers).text() == "Conv blocks"
    assert panel.config().model.label() == "cnn 32-64"


def test_the_task_chooser_makes_a_predict_config_whose_cost_is_one_forward_call(panel):
    """Predict: the Call row appears, the config carries the task and the way, and the cost is one forward call
    (a third of a training step's FLOPs for an MLP past its first layer); a saved predict config comes back."""
    assert not panel._form.isRowVisible(panel.serve)
    train_flops = panel.config().flops_per_batch
    panel.task.setCurrentIndex(panel.task.findData("predict"))
    assert panel._form.isRowVisible(panel.serve)
    panel.serve.setCurrentIndex(panel.serve.findData("compiled"))
    config = panel.config()
    assert (config.train.task, config.train.serve) == ("predict", "compiled")
    assert config.flops_per_batch == config.model.flops_per_batch(config.train.batch_size, forward=True)
    assert config.flops_per_batch < train_flops and "per call at batch" in panel.cost.text()
    panel.set_config(config.replace(task="train"))
    assert panel.task.currentData() == "train" and not panel._form.isRowVisible(panel.serve)
    panel.set_config(config)
    assert panel.task.currentData() == "predict" and panel.serve.currentData() == "compiled"


def test_a_saved_model_opens_from_a_file_through_a_lane_and_a_bad_one_is_a_sentence(panel, qtbot, tmp_path,
                                                                                    monkeypatch):
    import json
    import zipfile

    from crossover_lab.core.config import SavedModel
    from crossover_lab.gui.window import model_file

    path = tmp_path / "mine.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", json.dumps({"class_name": "Functional", "config": {"layers": []}}))
    asked = []

    def inspect(pool, lane, found, cancel):  # what a lane would answer, without one
        asked.append((lane.name, found.path))
        return SavedModel(found.path, found.sha256, found.size_bytes, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4)

    monkeypatch.setattr(model_file, "inspect_saved_model", inspect)
    said = []
    opener = model_file.ModelFileOpener(panel, lambda: None, lambda: [], lambda: False,
                                        lambda text, error=False: said.append((text, error)))
    before = panel.config()
    (tmp_path / "bad.keras").write_text("not a zip")
    opener.open(str(tmp_path / "bad.keras"))
    assert said[-1][1] and "is not a saved Keras 3 model" in said[-1][0] and panel.config() == before
    with qtbot.waitSignal(panel.config_changed, timeout=5000):
        panel.model_file_chosen.emit(str(path))
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    assert asked == [("cpu", str(path))] and "Opened mine: input 32x32x3, 5 classes" in said[-1][0]
    config = panel.config()
    assert config.model.saved is not None and config.model.widths == () and panel.family.currentText() == "Your model: mine"
    assert not panel.widths.isVisibleTo(panel) and not panel.layers.isVisibleTo(panel)
    assert panel.cost.text().startswith("mine (mine.keras)\n1,000 parameters · 768 MFLOP per step at batch 128")
    panel.family.setCurrentIndex(panel.family.findData("mlp"))  # back to Crossover's own: its sliders again
    assert panel.config().model.family == "mlp" and panel.widths.isVisibleTo(panel)
    panel.set_config(config)  # a saved configuration with the model (the window restores it so)
    assert panel.config() == config


def test_a_width_typed_counts_once_whole_never_digit_by_digit(panel, qtbot):
    """Typing 1024 into a running model's width box switched the lanes to 10 when the keys came slowly (CI at load
    8): the box's number counts on Enter (or Tab, or an action that reads the form), not per keystroke."""
    from PySide6.QtCore import Qt

    seen = []
    panel.config_changed.connect(lambda config: seen.append(config.model.widths))
    panel.show()
    spin = panel.widths.spins[0]
    spin.setFocus()
    spin.selectAll()
    for digit in "1024":
        qtbot.keyClick(spin, digit)
        qtbot.wait(350)  # longer than the live switch waits after an edit
    assert seen == [] and panel.config().model.widths == (128,)
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert seen == [(1024,)] and panel.config().model.widths == (1024,)
    qtbot.keyClick(spin, Qt.Key.Key_Up)  # the arrows still count at once
    assert seen[-1] == (1025,)
