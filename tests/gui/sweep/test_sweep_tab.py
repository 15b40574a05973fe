"""The Sweep tab: a sweep fills the plot, the verdict and the table; Stop keeps finished points; refinement, a
ramp lent, a file reopened. On scripted lanes (tests/scripted_lanes.py) whose costs cross at a known width: what
the tab does with what lanes measure is tested here; that real lanes measure is tests/gui/window/'s."""
from __future__ import annotations

import math

import pytest

from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.sweeps.files import read_sweep_rows

BASE = RunConfig(ModelSpec((8,)), TrainSpec(batch_size=32, samples=1000, data="synthetic"))
LANES = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]


@pytest.fixture
def tab(qtbot, qsettings_tmp, scripted_pool):
    pool = scripted_pool
    from crossover_lab.gui.sweep.tab import SweepTab

    widget = SweepTab(lambda: pool, lambda: list(LANES), lambda: BASE, lambda: False)
    qtbot.addWidget(widget)
    widget.sweep_form.steady.setValue(5)
    widget.sweep_form.seconds.setValue(0.5)
    widget.sweep_form.passes.setValue(1)  # one pass and its recheck: quick (the default's passes are tested below)
    yield widget
    widget.shutdown()


def test_sweep_fills_plot_verdict_and_table(tab, qtbot, tmp_path):
    tab.sweep_form.widths.setText("8,128")
    tab.sweep_form.layers.setValue(1)
    tab.start()
    assert tab.running and not tab.sweep_form.run_button.isEnabled()
    qtbot.waitUntil(lambda: not tab.running, timeout=120_000)
    # Two widths on two lanes, then the middle one (by place: the first of two) again, its rows over both runs. The
    # lanes take turns in alternating order (a drifting load falls on both alike), the recheck in the reverse of its
    # point's first order: the rows come in as measured.
    assert tab.view.table.rowCount() == 6
    assert [tab.view.table.item(r, 1).text() for r in range(6)] == ["cpu", "cpu1", "cpu1", "cpu", "cpu1", "cpu"]
    assert [tab.view.table.item(r, 2).text() for r in range(6)] == ["8", "8", "128", "128", "8", "8"]
    again = tab.view.table.item(4, 2).text()
    assert again in ("8", "128") and [tab.view.table.item(r, 8).text() for r in (4, 5)] == ["completed, 2 runs"] * 2
    assert "scatter by ±" in tab.view.table.item(4, 8).toolTip()
    # Both lanes are drawn; a fit needs the times to grow with FLOPs, which noise may hide on 2 points.
    assert {p.lane for p in tab.view.plot.points} == {"cpu", "cpu1"} and set(tab.view.plot.fits) <= {"cpu", "cpu1"}
    # The one rule's answer, whichever the noise allows: a lead, a crossing, or too close to call.
    verdict = tab.view.verdict.text()
    assert "cpu" in verdict and "cpu1" in verdict, verdict
    assert " is faster " in verdict or " too close to call " in verdict or " equal within noise" in verdict, verdict
    assert tab.sweep_form.progress.value() == tab.sweep_form.progress.maximum() == 6
    path = tmp_path / "s.csv"
    written = tab.export_csv(str(path))
    assert written == [str(path), str(tmp_path / "s-batches.csv"), str(tmp_path / "s-batches.json")]
    assert sorted(r.width for r in read_sweep_rows(str(path))[0]) == [8, 8, 128, 128]
    import json

    meta = json.loads((tmp_path / "s-batches.json").read_text())
    assert set(meta["sweep"]["variants"]["base"]["calibration"]) == {"cpu", "cpu1"}
    assert len(meta["runs"]) == 3  # one per width and the one again, each with both lanes' per-batch records
    assert meta["sweep"]["recheck"] is True
    # The file holds one row per point and lane, the one measured again over both runs.
    twice = int(again)
    assert sorted((r.width, r.runs) for r in read_sweep_rows(str(path))[0]) == \
        sorted((w, 2 if w == twice else 1) for w in (8, 8, 128, 128))
    # Every point was autosaved as it arrived: the one measured again twice, its later rows over both runs.
    saved = read_sweep_rows(tab.autosave_path)[0]
    assert sorted(r.width for r in saved) == sorted([8, 8, 128, 128, twice, twice])
    assert [r.runs for r in saved if r.width == twice] == [1, 1, 2, 2]


def test_the_tabs_default_is_the_clis_five_passes_and_a_sweep_in_passes_pools_each_point_over_them(tab, qtbot, tmp_path):
    """Issue 57: the Sweep tab measures as the CLI does by default, every width in DEFAULT_PASSES passes (Measure
    twice is then off: the passes measure every width again); a sweep in three passes writes one row a point and
    lane over its three runs, and its answer rests on them (the one rule's passes)."""
    from crossover_lab.core.study.sweep import DEFAULT_PASSES
    from crossover_lab.gui.sweep.form import SweepForm

    fresh = SweepForm(tab.sweep_form._settings)
    qtbot.addWidget(fresh)
    fresh.reset()
    assert fresh.passes.value() == DEFAULT_PASSES == 5 and not fresh.recheck.isEnabled()
    assert "measure every width 5 times already" in fresh.recheck.toolTip()
    fresh.passes.setValue(1)
    assert fresh.recheck.isEnabled()

    tab.sweep_form.widths.setText("8,128")
    tab.sweep_form.layers.setValue(1)
    tab.sweep_form.passes.setValue(3)
    tab.start()
    qtbot.waitUntil(lambda: not tab.running, timeout=120_000)
    assert tab.sweep_form.progress.value() == tab.sweep_form.progress.maximum() == 12
    path = tmp_path / "p.csv"
    tab.export_csv(str(path))
    rows = read_sweep_rows(str(path))[0]
    assert sorted((r.width, r.runs, len(r.run_medians)) for r in rows) == [(8, 3, 3)] * 2 + [(128, 3, 3)] * 2


def test_refine_crossover_runs_in_the_tab_and_answers_in_words(tab, qtbot):
    from PySide6.QtCore import Qt

    tab.sweep_form.widths.setText("16,256,2048")
    tab.sweep_form.layers.setValue(1)
    tab.sweep_form.tolerance.setValue(25)
    tab.sweep_form.budget.setValue(15)
    qtbot.mouseClick(tab.sweep_form.refine_button, Qt.MouseButton.LeftButton)
    assert tab.running and not tab.sweep_form.refine_button.isEnabled() and not tab.sweep_form.run_button.isEnabled()
    assert (tab.sweep_form.progress.format(), tab.sweep_form.progress.maximum()) == ("%v / %m s", 15)
    qtbot.waitUntil(lambda: not tab.running, timeout=120_000)
    (result,) = tab.results
    refinement = result.refinement
    assert refinement is not None and refinement.spent_s <= 15
    assert refinement.stopped in ("tight", "noise", "no crossover", "budget")
    assert "Refinement stopped after" in tab.view.verdict.text()
    assert tab.view.table.rowCount() == len(result.rows) >= 6
    # The plot marks each change refinement found between the same two measured widths; where the window's one
    # answer keeps a tie between them (the widths refinement added sit inside the noise), as a band with no width.
    assert [(c.faster_above, c.width_lo, c.width_hi) for c in tab.view.plot.crossovers] == \
        [(c.faster_above, c.width_lo, c.width_hi) for c in refinement.crossings]
    assert tab.sweep_form.run_button.isEnabled() and tab.sweep_form.refine_button.isEnabled() and not tab.sweep_form.stop_button.isEnabled()


def test_refine_after_reopening_this_sessions_sweep_file_times_no_coarse_width_again(tab, qtbot, tmp_path):
    """A sweep exported, opened again (the tab forgets its results), then Refine on the same lanes and settings:
    the file's widths are taken with the batches behind them; a width is timed again only at a level above 0,
    when refinement doubts its lead. The H200's file, measured elsewhere, lends nothing."""
    from helpers import H200_SWEEP_CSV

    tab.sweep_form.widths.setText("16,2048")
    tab.sweep_form.layers.setValue(1)
    tab.start()
    qtbot.waitUntil(lambda: not tab.running, timeout=120_000)
    swept = {run.run_id for run in tab.results[0].runs}  # a run per width, and one width's again
    path = tmp_path / "s.csv"
    assert len(tab.export_csv(str(path))) == 3
    assert tab.open_csv(str(H200_SWEEP_CSV))
    before = len(tab.ledger)
    assert tab.open_csv(str(path)) and tab.results == []  # shown from the file
    assert len(tab.ledger) == before  # the same points, given again: each batch counts once
    tab.sweep_form.tolerance.setValue(30)
    tab.sweep_form.budget.setValue(8)
    tab.start_refine()
    assert "Refining: 2 of the 2 widths were measured before on these lanes" in tab.sweep_form.progress_label.text()
    qtbot.waitUntil(lambda: not tab.running, timeout=120_000)
    (result,) = tab.results
    coarse = [row for row in result.rows if row.stage == "coarse"]
    assert {row.run_id for row in coarse} <= swept and {row.width for row in coarse} == {16, 2048}
    assert "(4 of them taken as measured before, not timed again)" in tab.sweep_form.progress_label.text()
    assert result.refinement is not None and result.refinement.widths[:2] == (16, 2048)
    again = [run for run in result.runs if run.run_id not in swept and run.config.model.widths[0] in (16, 2048)]
    assert len(again) == result.refinement.widths.count(16) + result.refinement.widths.count(2048) - 2


def test_a_ramp_shown_in_the_tab_sets_the_form_to_it_and_lends_its_points(tab):
    """The window shows a finished ramp here: the form now describes it (its widths, layers and budget per point),
    so Refine crossover refines from its points; the ledger holds each lane's widths."""
    from helpers import canned_ramp
    from crossover_lab.core.study.refined_sweep import point_configs
    from crossover_lab.core.study.sweep import ramp_plan

    plan = ramp_plan(BASE, (16, 256, 2048), layers=1, steady_steps=20, seconds=1.5)
    assert tab.show_run(canned_ramp(plan))
    assert (tab.sweep_form.widths.text(), tab.sweep_form.layers.value(), tab.sweep_form.steady.value(), tab.sweep_form.seconds.value()) == \
        ("16,256,2048", 1, 20, 1.5)
    assert "Refine crossover refines from them" in tab.sweep_form.progress_label.text()
    (spec,) = tab.specs()
    assert sorted(tab.ledger.lend(LANES, point_configs(spec))) == [16, 256, 2048]


def test_stop_keeps_finished_points(tab, qtbot, scripted):
    import dataclasses

    for name, script in scripted.scripts.items():  # a point takes most of a second: the stop lands mid-sweep
        scripted.scripts[name] = dataclasses.replace(script, min_sleep_s=0.01)
    tab.sweep_form.widths.setText("8,16,32,64,128")
    tab.start()
    qtbot.waitUntil(lambda: tab.view.table.rowCount() >= 2, timeout=120_000)
    tab.stop()
    qtbot.waitUntil(lambda: not tab.running, timeout=30_000)
    rows = tab.view.table.rowCount()
    assert 2 <= rows < 10
    assert all(tab.view.table.item(r, 8).text() == "completed" for r in range(rows))
    assert "Stopped" in tab.sweep_form.progress_label.text()


def test_bad_widths_are_refused_with_a_sentence(tab):
    tab.sweep_form.widths.setText("8,0")
    with pytest.raises(ConfigError, match="sweep width 0: widths must be 1-16384"):
        tab.specs()
    tab.sweep_form.widths.setText("8,x")
    with pytest.raises(ConfigError, match=r"sweep width 'x' \(item 2 of 2\)"):
        tab.specs()
    tab.sweep_form.widths.setText("8,64")
    tab.sweep_form.compare.setCurrentText("jit=on")
    base, changed = tab.specs()
    assert base.variant == "base" and changed.variant == "jit=on" and changed.base.train.jit is True


def test_window_sweep_tab_f5_esc_and_close_mid_sweep(qtbot, make_window, scripted):
    import time

    from PySide6.QtCore import Qt

    from helpers import wait_for, wall_limit
    from scripted_lanes import LaneScript

    scripted.default = LaneScript(min_sleep_s=0.01)  # a point takes most of a second: Esc lands mid-sweep
    window = make_window()
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)  # shortcuts reach the active window only
    window.side.model_panel.set_config(BASE)
    window.tabs.setCurrentWidget(window.sweep)
    window.sweep.sweep_form.widths.setText("8,16,32,64,128,256")
    window.sweep.sweep_form.steady.setValue(5)
    window.sweep.sweep_form.seconds.setValue(0.5)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert window.sweep.running and not window.side.model_panel.isEnabled()
    qtbot.waitUntil(lambda: window.sweep.view.table.rowCount() >= 1, timeout=30_000)
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.sweep.running, timeout=30_000)
    assert window.side.model_panel.isEnabled() and 1 <= window.sweep.view.table.rowCount() < 12
    # Again, and close the window in the middle of it.
    window.sweep.start()
    qtbot.waitUntil(lambda: window.sweep.view.table.rowCount() >= 1, timeout=30_000)
    assert window.sweep.running
    t0 = time.monotonic()
    window.close()
    assert time.monotonic() - t0 < wall_limit(3.5)
    assert window.sweep.threads() == [] and window.controller.threads() == []
    assert wait_for(lambda: not scripted.alive(), 3.0)  # every lane closed


def test_open_a_saved_sweep_csv(tab):
    from helpers import H200_SWEEP_CSV

    assert tab.open_csv(str(H200_SWEEP_CSV))
    assert tab.view.table.rowCount() == 20
    assert set(tab.view.plot.fits) == {"jax:cpu", "jax:gpu0"}
    assert "jax:cpu is faster up to 32 units and jax:gpu0 from 512 units" in tab.view.verdict.text()
    # The change the tie between hides is marked as the band between the two leads, at no width of its own.
    (change,) = tab.view.plot.crossovers
    assert (change.faster_above, change.width_lo, change.width_hi) == ("jax:gpu0", 32, 512)
    assert math.isnan(change.width)


def test_a_saved_models_sweep_opened_from_a_file_or_shown_after_a_ramp_is_drawn_and_said(tab, tmp_path):
    """Its rows have no width ("as saved", 0): opening its CSV raised in the view's redraw (a spec of width 0) and
    left the plot empty under "No sweep yet", as did a ramp of it through batch sizes shown on this tab."""
    from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text

    rows = [SweepRow(lane, "", 0, 1, b * 10**6, b, ms, ms * 0.98, ms * 1.02, 60, family="saved mine")
            for lane, b, ms in (("cpu", 1, 1.0), ("cpu", 512, 40.0), ("cpu1", 1, 2.0), ("cpu1", 512, 20.0))]
    path = tmp_path / "mine.csv"
    path.write_text(sweep_rows_text(rows))
    assert tab.open_csv(str(path))
    assert "samples per batch" in tab.view.verdict.text() and "No sweep yet" not in tab.view.verdict.text()
    assert tab.show_rows(rows) and "samples per batch" in tab.view.verdict.text()


def test_the_energy_axis_draws_joules_per_sample_where_a_counter_measured_them(tab, tmp_path):
    from helpers import H200_SWEEP_CSV
    from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text

    assert tab.open_csv(str(H200_SWEEP_CSV))  # measured before energy was: nothing to draw
    assert not tab.view.energy_box.isEnabled() and "No point has energy measured" in tab.view.energy_box.toolTip()
    rows = [SweepRow(lane, "X", w, 0, 1000 * w, 128, ms, ms * 0.97, ms * 1.03, 200, layers=1,
                     energy_j_per_msample=j, mean_w=100.0, idle_w=30.0, energy_counter="rapl-package")
            for lane, series in (("gpu0", [(2.0, 9000.0), (2.1, 800.0)]), ("cpu", [(0.5, 600.0), (9.0, 9000.0)]))
            for w, (ms, j) in zip((16, 4096), series)]
    path = tmp_path / "energy.csv"
    path.write_text(sweep_rows_text(rows))
    assert tab.open_csv(str(path))
    assert tab.view.energy_box.isEnabled() and not tab.view.plot.energy
    time_crossing = [c.faster_above for c in tab.view.plot.crossovers]
    tab.view.energy_box.setChecked(True)
    assert tab.view.plot.energy and tab.view.plot.fits == {}
    assert tab.view.plot.getAxis("left").labelText == "joules per million samples"
    assert sorted(p.median_ms for p in tab.view.plot.points) == [600.0, 800.0, 9000.0, 9000.0]
    assert [c.faster_above for c in tab.view.plot.crossovers] == ["gpu0"] == time_crossing
    tab.view.energy_box.setChecked(False)
    assert not tab.view.plot.energy and set(tab.view.plot.fits) == {"cpu", "gpu0"}


def test_a_new_point_is_fitted_once_per_lane_and_judged_once(qtbot, monkeypatch):
    """Issue 37: one new sweep point refitted each lane twice and found the crossings three times. Now the
    window's findings fit and judge once per change, and the tab's sentence and plot draw what they made."""
    from crossover_lab.core.analysis import crossings, fits, verdict
    from crossover_lab.core.files import findings as findings_module
    from crossover_lab.core.files.sweeps.rows import SweepRow
    from crossover_lab.gui.sweep import plot
    from crossover_lab.gui.sweep.view import SweepView
    from crossover_lab.gui.settings import AppSettings
    from crossover_lab.gui.widgets.file_dialogs import FileDialogs

    calls = {"fit": 0, "judge": 0}

    def counted(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    fit = counted("fit", fits.fit_cost_model)
    for module in (findings_module, crossings, plot):
        monkeypatch.setattr(module, "fit_cost_model", fit)
    judge = counted("judge", verdict.curve_verdict)
    monkeypatch.setattr(verdict, "curve_verdict", judge)

    def rows(width: int, run_id: str) -> list[SweepRow]:
        return [SweepRow(lane, "CPU", width, 0, 1000 * width, 128, ms, ms * 0.97, ms * 1.03, 100, layers=1,
                         run_id=run_id) for lane, ms in (("cpu", 0.01 * width + 0.2), ("cpu1", 0.002 * width + 1.0))]

    view = SweepView(FileDialogs(AppSettings()), None, lambda *a, **k: None, lambda: [])
    qtbot.addWidget(view)
    view.set_rows(rows(16, "a") + rows(64, "b") + rows(256, "c"))
    calls.update(fit=0, judge=0)
    view.add_rows(rows(1024, "d"))  # one new point on both lanes
    assert calls == {"fit": 2, "judge": 1}, calls  # each lane fitted once; the pair judged once
    assert "Fits: cpu: " in view.verdict.text() and view.plot.fits.keys() == {"cpu", "cpu1"}
