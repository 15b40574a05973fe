"""The Sweep form with a user's saved model: swept along its batch sizes (it has no width), refused without them."""
from __future__ import annotations

import pytest

from crossover_lab.core.config import ConfigError, ModelSpec, RunConfig, SavedModel, TrainSpec


def test_a_saved_model_is_swept_along_the_forms_batch_sizes(qtbot, qsettings_tmp):
    from crossover_lab.gui.settings import AppSettings
    from crossover_lab.gui.sweep.form import SweepForm
    from crossover_lab.core.study.refined_sweep import along_batch

    form = SweepForm(AppSettings())
    qtbot.addWidget(form)
    saved = SavedModel("/m/mine.keras", "ab" * 32, 10, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4)
    base = RunConfig(ModelSpec(widths=(), family="saved", saved=saved), TrainSpec(data="synthetic"))
    form.batches.setText("")
    with pytest.raises(ConfigError, match="sweep it along batch size"):
        form.specs(base)
    form.batches.setText("1,16,256")
    form.preset.setCurrentIndex(form.preset.findData("blog"))  # a preset chosen before: the saved model stays
    (spec,) = form.specs(base)
    assert [c.train.batch_size for c in spec.points()] == [1, 16, 256]
    assert all(c.model == base.model for c in spec.points()) and along_batch(spec)


def test_the_form_sweeps_along_batch_size_at_the_model_panels_model(qtbot, tmp_path):
    """Along: batch sizes: the Model panel's model (one width per layer) at each of the Batch sizes; its answer in
    samples per batch (a sweep of one width over several batch sizes); Widths and Layers are not used."""
    from crossover_lab.gui.settings import AppSettings
    from crossover_lab.gui.sweep.form import SweepForm
    from crossover_lab.core.study.refined_sweep import along_batch

    mine = str(tmp_path / "settings.ini")  # this test's own: what it saves must not reach another test's form
    form = SweepForm(AppSettings(mine))
    qtbot.addWidget(form)
    base = RunConfig(ModelSpec((256, 256)), TrainSpec(data="synthetic"))
    form.along.setCurrentIndex(form.along.findData("batch"))
    form.widths.setText("16,64")
    form.batches.setText("8")
    with pytest.raises(ConfigError, match="at least two Batch sizes"):
        form.specs(base)
    form.batches.setText("8,64,512")
    (spec,) = form.specs(base)
    assert along_batch(spec) and spec.widths == (256,) and spec.layers == 2
    assert [(c.model.widths, c.train.batch_size) for c in spec.points()] == [((256, 256), 8), ((256, 256), 64),
                                                                            ((256, 256), 512)]
    with pytest.raises(ConfigError, match="layers of different widths"):
        form.specs(RunConfig(ModelSpec((256, 64)), TrainSpec(data="synthetic")))
    form.along.setCurrentIndex(form.along.findData("width"))
    (spec,) = form.specs(base)
    assert spec.widths == (16, 64) and not along_batch(spec)  # along widths, at each batch size: two curves
    form.save()
    again = SweepForm(AppSettings(mine))
    qtbot.addWidget(again)
    assert not again.along_batch()


def test_a_saved_model_sets_the_window_sweep_along_batch_size(make_window):
    window = make_window()
    saved = SavedModel("/m/mine.keras", "ab" * 32, 10, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4)
    config = window.side.model_panel.config()
    window.side.model_panel.set_config(RunConfig(ModelSpec(widths=(), family="saved", saved=saved), config.train))
    window.desk.update_controls()
    form = window.sweep.sweep_form
    assert form.along_batch() and not form.along.isEnabled() and not form.widths.isEnabled()
    window.side.model_panel.set_config(config)  # Crossover's own model again: the axis is the user's to choose
    window.desk.update_controls()
    assert form.along.isEnabled() and not form.widths.isEnabled()  # still along batch size, as it was left
    form.along.setCurrentIndex(form.along.findData("width"))
    assert form.widths.isEnabled() and form.layers.isEnabled()
