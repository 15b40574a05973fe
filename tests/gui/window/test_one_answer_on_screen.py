"""One answer on screen (issue 36): a ramp, a refinement from its points and a sweep over the same widths, on
scripted lanes whose costs cross at a known width, give one sentence in the Compare tab's headline, the map's
caption, the Sweep tab, and `analyze` and `report` of the files the window exported: the window's findings (core/files/
findings.py) made once from every completed point, rendered by each."""
from __future__ import annotations

import html

from helpers import cli_in_process
from scripted_lanes import cpu_like

from crossover_lab.core.analysis.verdict import State
from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.words.sweep import answer_words


def _plain(text: str) -> str:
    """A sentence as compared: a view may capitalise its first letter ("No answer …")."""
    return text[:1].lower() + text[1:]


def test_a_ramp_a_refinement_and_a_sweep_say_one_sentence_in_every_view_and_in_analyze(qtbot, make_window, scripted,
                                                                                        tmp_path, capsys):
    scripted.scripts.update(cpu=cpu_like(fixed_ms=0.3, gflops=20, noise=0.02),
                            cpu1=cpu_like(fixed_ms=1.0, gflops=60, noise=0.02, seed=1))
    window = make_window()
    window.side.model_panel.set_config(RunConfig(ModelSpec((16,)), TrainSpec(batch_size=128, samples=4096,
                                                                        data="synthetic")))
    said_before = []

    def one_sentence() -> str:
        (answer,) = window.findings.answers()  # one pair, one kind of model
        said = answer_words(answer)
        # What the run must do: cpu's lead gives way to cpu1's, once (at a width, or with a tie between the two
        # leads where the noise cannot place it); which of the two the noise gives is not this test's.
        v = answer.verdict
        assert v.state is State.CROSSES and [(c.faster_below, c.faster_above) for c in v.changes] == \
            [("cpu", "cpu1")], said
        views = {"headline": window.compare.summary.verdict.said, "map": window.compare.map.said,
                 "Sweep tab": window.sweep.view.verdict.text}
        # The findings tell the views once the event loop next turns (gui/app_model.py defers FINDINGS): a view may
        # lag the last rows by that one turn, never more than a moment.
        try:
            qtbot.waitUntil(lambda: all(_plain(said) in _plain(text()) for text in views.values()), timeout=2_000)
        except qtbot.TimeoutError:
            pass
        for view, text in views.items():
            assert _plain(said) in _plain(text()), (view, said, text())
        said_before.append(said)
        return said

    # A ramp: its headline is its crossing, and the map and the Sweep tab (which shows the ramp) say the same.
    window.side.ramp_widths.setText("16,64,256,1024,2048")
    assert window.desk.start_ramp() is not None
    qtbot.waitUntil(lambda: not window.controller.running and len(window.controller.runs) == 1, timeout=60_000)
    qtbot.waitUntil(lambda: "chance of any false lead" in window.compare.summary.verdict.said(), timeout=5_000)
    one_sentence()
    ramp_csv = tmp_path / "ramp.csv"
    window.exports.export_run(window.controller.runs[-1].run_id, str(ramp_csv))

    # Refine crossover from the ramp's points (lent, not timed again), then a sweep of the same widths: each joins
    # the findings, and every view says the pooled answer.
    window.sweep.sweep_form.tolerance.setValue(30)
    window.sweep.sweep_form.budget.setValue(10)
    window.sweep.start_refine()
    qtbot.waitUntil(lambda: not window.sweep.running, timeout=60_000)
    one_sentence()
    refine_csv = tmp_path / "refined.csv"
    assert window.sweep.export_csv(str(refine_csv))

    window.sweep.sweep_form.widths.setText("16,64,256,1024,2048")
    window.sweep.sweep_form.steady.setValue(20)
    window.sweep.start()
    qtbot.waitUntil(lambda: not window.sweep.running, timeout=60_000)
    final = one_sentence()
    sweep_csv = tmp_path / "sweep.csv"
    assert window.sweep.export_csv(str(sweep_csv))
    assert len(window.findings.run_ids) > 2  # the ramp's, the refinement's and the sweep's runs, pooled

    # analyze of the three files the window wrote says what the window says.
    out = cli_in_process(capsys, "analyze", str(ramp_csv), str(refine_csv), str(sweep_csv))
    assert out.returncode == 0, out.stderr
    assert final + "." in out.stdout.splitlines(), (final, out.stdout)
    # And the report of them, in its answer.
    page = tmp_path / "report.html"
    report = cli_in_process(capsys, "report", str(ramp_csv), str(refine_csv), str(sweep_csv), "-o", str(page))
    assert report.returncode == 0, report.stderr
    text = html.unescape(page.read_text(encoding="utf-8"))
    answer = text[text.index('<div class="answer">'):text.index("</div>", text.index('<div class="answer">'))]
    assert final in answer, (final, answer)


def test_a_run_of_one_model_has_one_headline_in_the_cli_the_report_and_the_window(qtbot, scripted, tmp_path,
                                                                                   capsys):
    """Issue 37: a run's headline was made three ways (the summary widget, the report, the CLI). Now core makes it
    (core/words/run.py run_headline) and each view says it: `run`'s output, the report of its file, and the
    window's summary of the same run opened from the history."""
    from crossover_lab.core.files.run_files import read_runs
    from crossover_lab.core.words.run import run_headline
    from crossover_lab.gui.compare.tab import CompareTab

    scripted.scripts.update(cpu=cpu_like(fixed_ms=0.3, gflops=20, noise=0.02),
                            cpu1=cpu_like(fixed_ms=1.0, gflops=60, noise=0.02, seed=1))
    path = tmp_path / "run.csv"
    done = cli_in_process(capsys, "run", "--lanes", "cpu,cpu1", "--data", "synthetic", "--samples", "4096",
                          "--widths", "512", "--csv", str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = read_runs(path)
    (headline,) = run_headline(run)
    assert headline.startswith("cpu1 is ") and " faster than cpu on this model" in headline, headline
    assert headline + "." in done.stdout.splitlines(), done.stdout
    page = tmp_path / "report.html"
    assert cli_in_process(capsys, "report", str(path), "-o", str(page)).returncode == 0
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert headline in text[text.index('<div class="answer">'):text.index("</div>", text.index('<div class="answer">'))]
    tab = CompareTab()
    qtbot.addWidget(tab)
    tab.add_saved_runs([run])
    tab.history.run_chosen.emit(run)
    assert tab.summary.verdict.said().startswith(headline + "."), tab.summary.verdict.said()


def test_file_export_report_says_the_windows_answer_over_the_same_widths(qtbot, make_window, scripted, tmp_path):
    """Issue 55: two ramps (or a run and a drag) make one answer over every width measured since the window
    opened; File > Export report of the Compare tab reads the runs that answer rests on, so it says the headline's
    sentence over the same widths, not the last run's alone."""
    scripted.scripts.update(cpu=cpu_like(fixed_ms=0.3, gflops=20, noise=0.02),
                            cpu1=cpu_like(fixed_ms=1.0, gflops=60, noise=0.02, seed=1))
    window = make_window()
    window.side.model_panel.set_config(RunConfig(ModelSpec((16,)), TrainSpec(batch_size=128, samples=4096,
                                                                        data="synthetic")))
    for n, widths in enumerate(("16,64,256", "1024,2048"), start=1):
        window.side.ramp_widths.setText(widths)
        assert window.desk.start_ramp() is not None
        qtbot.waitUntil(lambda: not window.controller.running and len(window.controller.runs) == n, timeout=60_000)
    (answer,) = window.findings.answers()
    said = answer_words(answer)
    assert sorted(answer.verdict.widths) == [16, 64, 256, 1024, 2048]
    qtbot.waitUntil(lambda: _plain(said) in _plain(window.compare.summary.verdict.said()), timeout=5_000)
    window.tabs.setCurrentWidget(window.compare)
    page = tmp_path / "report.html"
    assert window.exports.export_report(str(page), window.report_sources) == ""
    text = html.unescape(page.read_text(encoding="utf-8"))
    assert said in text, (said, text[:3000])
