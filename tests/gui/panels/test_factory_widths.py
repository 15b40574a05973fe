"""What the model panel holds of a user's model factory (gui/panels/factory_widths.py), without Qt: the widths lanes
counted, kept across a re-show of the same factory; notes on the widths without figures, dropped when figures come,
when the lanes are free (for a width that waited) or when another factory is opened."""
from __future__ import annotations

from crossover_lab.core.config import FactoryModel, FactoryWidth, SavedModel
from crossover_lab.gui.panels.factory_widths import FactoryWidths, same_factory


def factory(function: str = "build", widths: tuple[int, ...] = (), sha: str = "a" * 64) -> FactoryModel:
    built = tuple(FactoryWidth(w, SavedModel(f"/m/{w}", sha, 1, params=w)) for w in widths)
    return FactoryModel("/m/models.py", sha, 100, function, built)


def test_the_same_factory_keeps_its_counted_widths_and_another_starts_without_notes():
    held = FactoryWidths()
    assert held.factory is None and not held.wanted(64)
    held.show(factory(widths=(64,)), fresh=True)
    assert not held.wanted(64) and held.wanted(128)
    held.note(128, "could not build it: out of memory")
    assert not held.wanted(128) and held.cost_words(128) == "could not build it: out of memory"
    assert held.cost_words(256) == "counting build(256)…"
    # The same factory shown again (a saved configuration restored): its widths and notes are kept.
    again = held.show(factory(), fresh=True)
    assert again.at(64) is not None and not held.wanted(128)
    # Another function of the file, just opened: no notes of the first.
    held.show(factory("other"), fresh=True)
    assert held.factory.function == "other" and held.wanted(128) and held.factory.at(64) is None
    assert same_factory(factory(), factory(widths=(8,))) and not same_factory(factory(), factory(sha="b" * 64))


def test_figures_or_free_lanes_drop_a_widths_note_and_another_factorys_figures_are_ignored():
    held = FactoryWidths()
    held.show(factory(), fresh=True)
    held.note(32, "the lanes are measuring", waiting=True)
    held.note(48, "could not build it")
    held.free()  # the lanes are free: the width that waited is asked again, the one that failed is not
    assert held.wanted(32) and not held.wanted(48)
    assert held.add(factory(widths=(48,))) and not held.wanted(48) and held.factory.at(48) is not None
    assert held.cost_words(48) == "counting build(48)…"  # its note is gone with the figures
    assert not held.add(factory("other", widths=(96,))) and held.factory.at(96) is None
