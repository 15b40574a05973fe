"""A drag of a width slider (issue 55): the box previews every round width passed, and the model changes once, where
the slider is let go; a typed width moves the slider, so a presenter can aim at 1,000 exactly."""
from __future__ import annotations

from crossover_lab.gui.widgets.width_slider import ROUND_WIDTHS, LayerWidths, nearest_position


def test_a_drag_changes_the_model_once_where_it_is_let_go(qtbot):
    widths = LayerWidths()
    qtbot.addWidget(widths)
    changes: list[tuple[int, ...]] = []
    widths.widths_changed.connect(lambda: changes.append(widths.widths()))
    slider = widths.sliders[0]
    slider.setSliderDown(True)  # pressed, as a mouse holds it
    for position in range(nearest_position(128), nearest_position(4000) + 1):
        slider.setSliderPosition(position)
        assert widths.spins[0].value() == ROUND_WIDTHS[position]  # the box follows the hand
    assert changes == []
    slider.setSliderDown(False)  # let go
    assert changes == [(4000,)]
    widths.spins[0].setValue(1000)  # typed
    assert slider.value() == nearest_position(1000) and changes[-1] == (1000,)
