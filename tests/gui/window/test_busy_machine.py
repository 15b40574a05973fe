"""A busy machine said everywhere (issue 36): before a study starts and while a run or a sweep measures, the status
bar says how busy; a quiet machine says nothing. The share is faked here: what /proc gives is core/engine's."""
from __future__ import annotations

import math

from crossover_lab.core.engine.machine_load import busy_start_words, busy_words


def test_the_words_say_how_busy_and_nothing_when_quiet():
    said = busy_start_words(0.46, 3.2, "this sweep")
    assert said.startswith("⚠ Other work is using 46% of this machine's CPU as this sweep starts (load 3.2)")
    assert busy_start_words(0.05, 3.2) == "" and busy_start_words(math.nan, 1.0) == ""
    assert busy_words(0.46, 3.2).startswith("⚠ Busy: other work uses 46%")


def test_a_sweep_started_on_a_busy_machine_says_so_before_its_first_point_and_while_it_runs(qtbot, make_window,
                                                                                            scripted):
    from scripted_lanes import LaneScript

    scripted.default = LaneScript(min_sleep_s=0.01)
    window = make_window()
    window._load.share = lambda: 0.5  # other work on half the cores
    window._on_load_timer_timeout()
    assert not window.busy_label.isVisibleTo(window)  # nothing measures: nothing to say
    window.sweep.sweep_form.widths.setText("8,16,32,64")
    window.sweep.sweep_form.steady.setValue(5)
    window.sweep.sweep_form.seconds.setValue(0.5)
    window.sweep.start()
    assert window.sweep.running
    # One owner answers "who holds the lanes": the sweep does, so a run or the Why tab would wait; not itself.
    from crossover_lab.gui.window.run_desk import Holder
    assert window.desk.holders() == [Holder.SWEEP] and window.desk.measuring()
    assert window.desk.lanes_busy(Holder.WHY) and not window.desk.lanes_busy(Holder.SWEEP)
    assert "as this sweep starts" in window.busy_label.text() and window.busy_label.isVisibleTo(window)
    window._on_load_timer_timeout()  # the start's words stand until the study's own first reading
    window._on_load_timer_timeout()
    assert window.busy_label.text().startswith("⚠ Busy: other work uses 50%")
    window.sweep.stop()
    qtbot.waitUntil(lambda: not window.sweep.running, timeout=30_000)
    assert window.desk.holders() == [] and not window.desk.lanes_busy()
    window._load.share = lambda: 0.01
    window._on_load_timer_timeout()
    assert not window.busy_label.isVisibleTo(window)
