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
