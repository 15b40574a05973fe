"""A lane against its twin from the window (issue 57): each one-thread CPU lane of this machine is listed with its twin
(cpu1#2), unchecked, said as an A/A control; checked with its lane, the two take turns as any pair does."""
from __future__ import annotations

from crossover_lab.core.config import LaneSpec
from crossover_lab.core.engine.conductor import default_schedule
from crossover_lab.core.engine.devices import LaneOption
from crossover_lab.gui.panels.lanes import LanesPanel, with_twins


def _options() -> list[LaneOption]:
    return [LaneOption(LaneSpec.parse(name), "CPU", True) for name in ("cpu", "cpu1", "jax:cpu1")] + [
        LaneOption(LaneSpec.parse("gpu0"), "GPU", False, "no GPU")]


def test_every_one_thread_cpu_lane_has_its_twin_listed_after_it():
    names = [o.name for o in with_twins(_options())]
    assert names == ["cpu", "cpu1", "cpu1#2", "jax:cpu1", "jax:cpu1#2", "gpu0"]


def test_a_twin_is_offered_unchecked_and_taken_with_its_lane_takes_turns(qtbot):
    panel = LanesPanel()
    qtbot.addWidget(panel)
    panel.set_options(_options())
    assert "cpu1#2" in panel.boxes and not panel.boxes["cpu1#2"].isChecked()
    assert "twin of cpu1 (A/A)" in panel.boxes["cpu1#2"].text() and "false one" in panel.boxes["cpu1#2"].toolTip()
    panel.select(["cpu1", "cpu1#2"])
    specs = panel.selected_specs()
    assert [s.name for s in specs] == ["cpu1", "cpu1#2"] and specs[1].original == specs[0]
    assert default_schedule(specs).value == "interleaved"
