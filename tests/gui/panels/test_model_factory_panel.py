"""Your own model factory in the window (FILE.py:FUNCTION): opened from the Model panel's file button, its function
chosen, one width slider, and each width the user settles on built and counted by a lane (here a stand-in for one,
monkeypatched as the saved model's test does) off the GUI thread, once."""
from __future__ import annotations

import dataclasses
import textwrap

import pytest

from crossover_lab.core.config import FACTORY, FactoryModel, FactoryWidth, SavedModel
from crossover_lab.core.words.numbers import fmt_flops
from crossover_lab.gui.panels.model import ModelPanel
from crossover_lab.gui.window import model_file

TWO = textwrap.dedent('''
    raise SystemExit("the window never runs this file")

    def build(width):
        pass

    def build_wide(width, depth=2):
        pass

    def helper(a, b):
        pass
''')


def figures(factory: FactoryModel, width: int) -> SavedModel:
    """What a lane would find at `width`: 37·w + 4 parameters, 72·w FLOPs per sample forward."""
    return SavedModel(factory.path, factory.sha256, factory.size_bytes, f"dense_{width}", (32,), 4, 37 * width + 4,
                      72 * width, "", 2)


@pytest.fixture
def opened(qtbot, gui_home, monkeypatch):
    """A panel, its opener with a stand-in lane that records each width it is asked to build, and what was said."""
    panel = ModelPanel()
    qtbot.addWidget(panel)
    asked: list[tuple[str, tuple[int, ...]]] = []

    def inspect(pool, lane, factory, widths, cancel=None):
        todo = [w for w in dict.fromkeys(widths) if factory.at(w) is None]
        asked.append((lane.name, tuple(todo)))
        if 13 in todo:
            from crossover_lab.core.config import ConfigError
            raise ConfigError("build(13) raised ValueError: no model of width 13")
        return factory.with_built([FactoryWidth(w, figures(factory, w)) for w in todo])

    monkeypatch.setattr(model_file, "inspect_factory", inspect)
    said: list[tuple[str, bool]] = []
    opener = model_file.ModelFileOpener(panel, lambda: None, lambda: [], lambda: False,
                                        lambda text, error=False: said.append((text, error)))
    yield panel, opener, asked, said
    opener.shutdown()


def test_a_py_with_one_function_opens_as_that_factory_and_its_width_is_built_once(opened, qtbot, tmp_path):
    panel, opener, asked, said = opened
    path = tmp_path / "my_models.py"
    path.write_text("def build(width):\n    pass\n\ndef helper(a, b):\n    pass\n")
    panel.widths.set_widths((64,))
    panel.model_file_chosen.emit(str(path))
    assert panel.family.currentText() == "Your model: build(width)" and panel.family.currentData() == FACTORY
    assert panel.cost.text() == "counting build(64)…"  # before the lane answered: nothing claimed
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    assert asked == [("cpu", (64,))]
    config = panel.config()
    assert config.model.family == FACTORY and config.model.widths == (64,) and config.model.figures is not None
    assert panel.cost.text() == (f"build(64) (my_models.py)\n{37 * 64 + 4:,} parameters · "
                                 f"{fmt_flops(3 * 72 * 64 * 128)} per step at batch 128")
    assert said == [("Opened my_models.py: build(width). cpu imports it (your code runs there) and builds and "
                     "counts each width you settle on.", False)]  # the cost line says the rest
    # One width slider: the layer count, activation and dropout are the function's own business.
    assert panel.widths.isVisibleTo(panel) and len(panel.widths.widths()) == 1
    assert not panel.layers.isVisibleTo(panel) and not panel.dropout.isVisibleTo(panel)
    assert not panel.activation.isVisibleTo(panel) and panel.widths._labels[0].text() == "Width"
    assert not panel.widths.sliders[1].isVisibleTo(panel)


def test_settling_on_a_width_asks_for_it_once_and_a_width_asked_before_is_not_asked_again(opened, qtbot, tmp_path):
    panel, opener, asked, _ = opened
    path = tmp_path / "m.py"
    path.write_text("def build(width):\n    pass\n")
    panel.widths.set_widths((64,))
    panel.model_file_chosen.emit(str(path))
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    slider = panel.widths.sliders[0]
    slider.setSliderDown(True)  # a drag through widths: none of them is asked for
    for position in range(slider.value() + 1, slider.value() + 6):
        slider.setValue(position)
        assert panel.cost.text().startswith("counting build(")
    dragged_to = panel.widths.widths()[0]
    qtbot.wait(400)  # longer than the settle time: a held slider is still not asked
    assert asked == [("cpu", (64,))]
    slider.setSliderDown(False)  # released: that width, at once
    qtbot.waitUntil(lambda: len(asked) == 2 and not opener.running, timeout=5000)
    assert asked[-1] == ("cpu", (dragged_to,)) and panel.config().model.figures is not None
    assert panel.cost.text().startswith(f"build({dragged_to}) (m.py)\n{37 * dragged_to + 4:,} parameters")
    panel.widths.spins[0].setValue(64)  # typed: asked once the edits pause, and 64 was counted before
    qtbot.wait(400)
    assert len(asked) == 2 and panel.cost.text().startswith("build(64) (m.py)\n2,372 parameters")
    panel.widths.spins[0].setValue(100)
    panel.widths.spins[0].setValue(1000)  # two edits within the settle time: the last one is asked
    qtbot.waitUntil(lambda: len(asked) == 3 and not opener.running, timeout=5000)
    assert asked[-1] == ("cpu", (1000,))
    panel.widths.spins[0].setValue(13)  # the function raises there: a sentence, in the label and the status bar
    qtbot.waitUntil(lambda: len(asked) == 4 and not opener.running, timeout=5000)
    assert panel.cost.text() == "build(13) could not be built: build(13) raised ValueError: no model of width 13"
    panel.batch.setValue(64)  # another edit: the width that failed is not asked again
    qtbot.wait(400)
    assert len(asked) == 4


def test_a_py_with_two_functions_asks_which_and_a_cancelled_choice_changes_nothing(opened, qtbot, tmp_path,
                                                                                   monkeypatch):
    panel, opener, asked, said = opened
    path = tmp_path / "two.py"
    path.write_text(TWO)
    offered = []

    def get_item(parent, title, label, items, current, editable):
        offered.append(list(items))
        return answer

    monkeypatch.setattr(model_file.QInputDialog, "getItem", staticmethod(get_item))
    before = panel.config()
    answer = ("", False)
    panel.model_file_chosen.emit(str(path))
    assert offered == [["build", "build_wide"]] and panel.config() == before and "no function" in said[-1][0]
    answer = ("build_wide", True)
    panel.model_file_chosen.emit(str(path))
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    factory = panel.config().model.factory
    assert factory is not None and factory.function == "build_wide" and factory.file == "two.py"
    assert panel.family.currentText() == "Your model: build_wide(width)"


def test_a_broken_py_is_a_sentence_and_a_keras_file_still_opens_as_before(opened, qtbot, tmp_path, monkeypatch):
    import json
    import zipfile

    panel, opener, asked, said = opened
    before = panel.config()
    for name, text, words in (("broken.py", "def build(width):\n    return (\n", "broken.py is not valid Python"),
                              ("none.py", "def two(a, b):\n    pass\n", "no top-level function of one argument")):
        (tmp_path / name).write_text(text)
        panel.model_file_chosen.emit(str(tmp_path / name))
        assert said[-1][1] and words in said[-1][0] and said[-1][0].count("\n") == 0
        assert panel.config() == before and panel.family.findData(FACTORY) < 0 and asked == []
    path = tmp_path / "mine.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", json.dumps({"class_name": "Functional", "config": {"layers": []}}))
    monkeypatch.setattr(model_file, "inspect_saved_model", lambda pool, lane, found, cancel: SavedModel(
        found.path, found.sha256, found.size_bytes, "mine", (32, 32, 3), 5, 1000, 2_000_000, "", 4))
    panel.model_file_chosen.emit(str(path))
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    assert panel.config().model.saved is not None and panel.family.currentText() == "Your model: mine"
    assert "Opened mine" in said[-1][0]


def test_a_saved_configuration_with_a_factory_comes_back_with_its_counted_widths(opened, qtbot, tmp_path):
    panel, opener, asked, _ = opened
    path = tmp_path / "m.py"
    path.write_text("def build(width):\n    pass\n")
    panel.widths.set_widths((64,))
    panel.model_file_chosen.emit(str(path))
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    config = panel.config()
    panel.family.setCurrentIndex(panel.family.findData("mlp"))  # Crossover's own again: its layers come back
    assert panel.config().model.family == "mlp" and panel.layers.isVisibleTo(panel)
    assert len(panel.widths.widths()) == panel.layers.value()
    panel.set_config(config)
    assert panel.config() == config and asked == [("cpu", (64,))]
    other = dataclasses.replace(config.model.factory, sha256="0" * 64, built=())  # the file changed since
    panel.set_factory(other)
    qtbot.waitUntil(lambda: not opener.running, timeout=5000)
    assert asked[-1] == ("cpu", (64,)) and panel.config().model.factory.sha256 == "0" * 64
