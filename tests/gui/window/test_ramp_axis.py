"""The ramp through widths or batch sizes (issue 22): the side panel's Ramp widths | Ramp batch sizes, each keeping
what was typed for it; a saved model ramps through batch sizes only."""
from __future__ import annotations

import dataclasses

from crossover_lab.core.config import SAVED, ModelSpec, SavedModel


def test_a_ramp_through_batch_sizes_keeps_the_model_and_each_axis_keeps_its_text(make_window):
    window = make_window()
    side = window.side
    started = []
    window.controller.start_run = lambda config, specs, schedule, plan=(): started.append(plan)
    assert side.ramp_along() == "width" and side.ramp_widths.accessibleName() == "Ramp widths"
    side.ramp_widths.setText("16,256")
    side.set_ramp_along("batch")
    assert side.ramp_widths.text() == "1,8,64,512" and side.ramp_widths.accessibleName() == "Ramp batch sizes"
    side.ramp_widths.setText("4,64")
    window.desk.start_ramp()
    (plan,) = started
    base = window.side.model_panel.config().model
    assert [(c.model.widths, c.train.batch_size) for c in plan] == [(base.widths, 4), (base.widths, 64)]
    side.set_ramp_along("width")
    assert side.ramp_widths.text() == "16,256"  # what was typed for widths came back
    side.set_ramp_along("batch")
    side.ramp_widths.setText("8")
    assert window.desk.start_ramp() is None and len(started) == 1
    assert "at least two" in window.status.message()


def test_a_saved_model_ramps_through_batch_sizes_only(make_window):
    window = make_window()
    started = []
    window.controller.start_run = lambda config, specs, schedule, plan=(): started.append(plan)
    saved = SavedModel("/m/mine.keras", "ab" * 32, 10, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4)
    config = window.side.model_panel.config()
    window.side.model_panel.set_config(dataclasses.replace(
        config, model=ModelSpec(widths=(), family=SAVED, saved=saved)))
    window.desk.update_controls()
    side = window.side
    assert side.ramp_along() == "batch" and not side.ramp_axis.isEnabled()
    assert "ramps through batch sizes" in side.ramp_axis.toolTip()
    assert side.ramp_button.isEnabled()
    window.desk.start_ramp()
    (plan,) = started
    assert [c.train.batch_size for c in plan] == [1, 8, 64, 512] and all(c.model.saved == saved for c in plan)
