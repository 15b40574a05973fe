"""The model panel shows a config quietly: one config_changed per set_config, a user's own model included, because a
block of blocked signals inside another leaves the outer one's widgets blocked."""
from __future__ import annotations

from PySide6.QtCore import QObject

from crossover_lab.core.config import FactoryModel, FactoryWidth, ModelSpec, RunConfig, SavedModel
from crossover_lab.gui.panels.model import ModelPanel
from crossover_lab.gui.widgets.signals import signals_blocked

SAVED = SavedModel("/tmp/mine.keras", "ab" * 32, 10, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4)
FACTORY = FactoryModel("/tmp/models.py", "cd" * 32, 5, "build")


def test_a_block_inside_another_leaves_the_outer_ones_blocked_and_each_as_it_was_after():
    a, b = QObject(), QObject()
    b.blockSignals(True)
    with signals_blocked(a, b):
        with signals_blocked(a):
            pass
        assert a.signalsBlocked() and b.signalsBlocked()
    assert not a.signalsBlocked() and b.signalsBlocked()


def test_a_users_model_shown_by_set_config_is_one_config_changed(qtbot, gui_home):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    train = panel.config().train
    built = FACTORY.with_built([FactoryWidth(512, SavedModel(FACTORY.path, FACTORY.sha256, 5, "d512", (32,), 4,
                                                             37 * 512 + 4, 72 * 512, "", 2))])
    for model in (ModelSpec(widths=(), family="saved", saved=SAVED), ModelSpec((512,), family="factory", factory=built),
                  ModelSpec((64, 32), family="cnn")):
        seen = []
        panel.config_changed.connect(seen.append)
        config = RunConfig(model, train)
        panel.set_config(config)
        panel.config_changed.disconnect(seen.append)
        assert seen == [config] and panel.config() == config
        assert not any(c.signalsBlocked() for c in (*panel.controls(), panel.preset))
