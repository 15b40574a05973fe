"""Predicted lanes in the window (issue 47): a device profile's lane, a shipped one by name or a profile file from a
dialog, drawn on the crossover map as a dashed line labelled "predicted from <profile>" for the window's model at
the map's widths, never a point of the map nor part of its verdict; an extrapolation dotted and said; the window's
report lists it with its profile and interval; removing it removes it from the map and the report."""
from __future__ import annotations

import dataclasses
import re

from helpers import answer_next_dialog, two_lane_result
from PySide6.QtCore import Qt

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.device_profile import find_profile

PROFILE = "h200-2026-11-30"
LABEL = f"jax:gpu0, predicted from {PROFILE}"
MODEL = RunConfig(ModelSpec((256,)), TrainSpec(batch_size=64, data="synthetic", samples=4096))


def _items(window, name: str, style: Qt.PenStyle | None = None) -> list:
    """The map's data items of that name (drawn with a pen of that style, if given)."""
    found = [i for i in window.compare.map.plot.listDataItems() if i.name() == name]
    if style is None:
        return found
    return [i for i in found if i.opts["pen"] is not None and i.opts["pen"].style() == style]


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", " ", text).replace("&nbsp;", " ")


def _report(window, path) -> str:
    assert window.exports.export_report(str(path), window.report_sources) == ""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def test_a_shipped_profiles_lane_is_drawn_dashed_reported_apart_and_removed(make_window, tmp_path):
    window = make_window()
    window.side.model_panel.set_config(MODEL)
    run = two_lane_result("measured", 256, 2.0, 1.0, MODEL, lanes=("cpu", "cpu1"))
    window.compare.add_saved_runs([run, two_lane_result("measured2", 64, 0.5, 0.9, dataclasses.replace(
        MODEL, model=ModelSpec((64,))), lanes=("cpu", "cpu1"))])
    window.compare.history.run_chosen.emit(run)  # the run a report of the Compare tab reports
    m = window.compare.map
    verdicts = [v for _, v in m.verdicts()]
    measured = sum(len(i.xData) for i in m.plot.listDataItems() if i.name() is None and i.xData is not None)

    assert m.predicted.add_named(PROFILE, "jax:gpu0") == ""
    dashed = _items(window, LABEL, Qt.PenStyle.DashLine)
    assert dashed, [i.name() for i in m.plot.listDataItems()]
    xs = sorted({x for i in dashed for x in i.xData})
    assert 64 in xs and 256 in xs and 16 in xs and 1024 in xs  # at the map's widths (the axis is width)
    assert LABEL in _plain(m.key.text()) and "95% interval" in m.key.toolTip() and "NVIDIA H200" in m.key.toolTip()
    assert "predicted from h200-2026-11-30, not measured" in m.description.text()
    # Never mixed with the measured: the same verdicts, the same measured points, no finding from a prediction.
    assert [v for _, v in m.verdicts()] == verdicts
    assert sum(len(i.xData) for i in m.plot.listDataItems() if i.name() is None and i.xData is not None) == measured
    assert {a.verdict.lanes for a in window.findings.answers()} <= {("cpu", "cpu1"), ("cpu1", "cpu")}
    assert m.predicted.add_named(PROFILE, "jax:gpu0").endswith("on the map already.")
    assert m.predicted.add_named(PROFILE, "gpu7").startswith(f"{PROFILE} has no lane 'gpu7'")
    assert m.predicted.add_named("nonesuch", "gpu0").startswith("no profile 'nonesuch'")
    assert "No profile 'nonesuch'" in window.status.message()

    report = _report(window, tmp_path / "r.html")
    predictions = report[report.index("Predictions"):]
    assert LABEL in predictions and "NVIDIA H200" in predictions and "measured 2026-11-30" in predictions
    assert re.search(r"784-256-10, batch 64: [\d.]+ ms per step \(95%: [\d.]+–[\d.]+ ms\)", predictions), predictions
    assert "predicted" not in report[:report.index("Predictions")].split("Settings")[0].split("The question")[1]

    # A model outside what the profile measured: dotted, said as an extrapolation in the key.
    window.side.model_panel.set_config(dataclasses.replace(MODEL, train=dataclasses.replace(MODEL.train,
                                                                                            batch_size=2048)))
    assert _items(window, f"{LABEL} (extrapolated)", Qt.PenStyle.DotLine)
    assert not _items(window, LABEL, Qt.PenStyle.DashLine)
    assert "extrapolated (no interval)" in _plain(m.key.text())

    assert m.predicted.remove(LABEL)
    assert not _items(window, LABEL) and not _items(window, f"{LABEL} (extrapolated)")
    assert "predicted" not in _plain(m.key.text()) and "not measured" not in m.description.text()
    assert "Predictions" not in _report(window, tmp_path / "after.html")


def test_a_profile_file_from_the_dialog_starts_in_the_last_folder_and_adds_its_lane(make_window, tmp_path):
    window = make_window()
    window.side.model_panel.set_config(RunConfig(ModelSpec((128, 128)), TrainSpec(batch_size=128)))  # as measured
    shipped = find_profile("cpu-2026-12-03")
    one_lane = dataclasses.replace(shipped, name="lab-cpu", lanes=shipped.lanes[:1])
    path = one_lane.write(tmp_path / "lab-cpu.json")
    seen: list[str] = []
    answer_next_dialog(window.dialogs, str(path), seen)
    window.compare.map.predicted_button.ask_file()
    label = f"{one_lane.lanes[0].lane}, predicted from lab-cpu"
    assert _items(window, label, Qt.PenStyle.DashLine)
    assert window.dialogs.folder() == str(tmp_path)  # the next dialog starts here
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"format": "crossover-profile/9"}')
    answer_next_dialog(window.dialogs, str(damaged), seen)
    window.compare.map.predicted_button.ask_file()
    assert seen[-1] == str(tmp_path.resolve())
    assert "is not a Crossover device profile" in window.status.message()
    assert [lane.lane for lane in window.compare.map.predicted.lanes] == [one_lane.lanes[0].lane]


def test_the_menu_lists_the_shipped_profiles_lanes_and_removes_what_it_added(make_window):
    window = make_window()
    window.side.model_panel.set_config(MODEL)
    button = window.compare.map.predicted_button
    menu = button.menu()
    menu.aboutToShow.emit()
    profiles = {a.text(): a.menu() for a in menu.actions() if a.menu() is not None}
    assert set(profiles) == {"cpu-2026-12-03", PROFILE}
    lanes = {a.text(): a for a in profiles[PROFILE].actions()}
    assert set(lanes) == {"jax:cpu", "jax:gpu0"}  # each lane once, whatever settings it was measured with
    lanes["jax:gpu0"].trigger()
    assert _items(window, LABEL, Qt.PenStyle.DashLine)
    menu.aboutToShow.emit()
    (remove,) = [a for a in menu.actions() if a.text() == LABEL]
    remove.trigger()
    assert not _items(window, LABEL) and not window.compare.map.predicted.lanes


def test_a_profile_of_other_versions_says_so_when_added_and_under_the_map(make_window):
    """Another Keras or backend can move the fixed cost per step: the window says which, as `predict` does."""
    window = make_window()
    window.side.model_panel.set_config(MODEL)
    m = window.compare.map
    profile = find_profile(PROFILE)
    said: list[str] = []
    m.predicted.said.connect(lambda text, problem: said.append(text))
    m.predicted.host = lambda: {"keras": "9.9.9", "backends": {"jax": "0.0.1"}}
    assert m.predicted.add_named(PROFILE, "jax:gpu0") == ""
    keras = f"{PROFILE} was measured with Keras {profile.host.keras}; this machine has 9.9.9."
    jax = f"{PROFILE} was measured with jax {dict(profile.host.backends)['jax']}; this machine has 0.0.1."
    assert keras in said[-1] and jax in said[-1], said
    assert keras in m.description.text() and jax in m.description.text()
    m.predicted.clear()
    m.predicted.host = lambda: {"keras": profile.host.keras, "backends": dict(profile.host.backends)}
    assert m.predicted.add_named(PROFILE, "jax:gpu0") == ""
    assert "was measured with" not in said[-1] and "was measured with" not in m.description.text()


def _live_lines(window) -> list:
    import pyqtgraph as pg

    return [i for i in window.compare.plot.plot.getPlotItem().items if isinstance(i, pg.InfiniteLine)
            and i.angle == 0]


def test_the_live_plot_draws_a_predicted_lane_for_the_run_shown_dashed_labelled_and_never_a_batch(make_window):
    """The Compare tab's live plot: the map's predicted lane as a dashed line at its predicted ms for the run's
    model, with its band and its figure on the line; no batch counted from it; a ramp gets none, and says why."""
    import math

    from helpers import canned_ramp

    window = make_window()
    plot = window.compare.plot
    run = two_lane_result("measured", 256, 2.0, 1.0, MODEL, lanes=("cpu", "cpu1"))
    window.compare.history.add_run(run)
    window.compare.history.run_chosen.emit(run)
    points = plot.points_drawn(warmup=True)
    assert not _live_lines(window) and not plot.predicted_note.isVisibleTo(window)

    assert window.compare.map.predicted.add_named(PROFILE, "jax:gpu0") == ""
    expected = find_profile(PROFILE).lane("jax:gpu0")
    assert expected is not None
    from crossover_lab.core.files.predicted import PredictedLane
    p = PredictedLane(find_profile(PROFILE), "jax:gpu0").predict(MODEL)
    lines = _live_lines(window)
    assert len(lines) == 1 and math.isclose(lines[0].value(), p.ms if not plot.log_y.isChecked() else math.log10(p.ms))
    style = Qt.PenStyle.DashLine if p.has_interval else Qt.PenStyle.DotLine
    assert lines[0].pen.style() == style
    text = lines[0].label.textItem.toPlainText()
    assert text.startswith("jax:gpu0 predicted: ") and text.endswith(" ms"), text  # labelled on the line
    assert lines[0].toolTip().startswith(f"{LABEL}: ")
    assert "predicted for this run's model (jax:gpu0 from h200-2026-11-30), not measured" in plot.predicted_note.text()
    assert plot.points_drawn(warmup=True) == points  # never a batch of the plot
    lo, hi = plot.plot.getViewBox().viewRange()[1]
    y = lines[0].value()
    assert lo <= y <= hi  # in view, however far from the measured lanes

    plot.log_y.toggle()  # the y axis changes: the line moves with it
    lines = _live_lines(window)
    assert len(lines) == 1 and math.isclose(lines[0].value(), p.ms if not plot.log_y.isChecked() else math.log10(p.ms))

    ramp = canned_ramp([dataclasses.replace(MODEL, model=ModelSpec((w,))) for w in (64, 256)])
    window.compare.history.add_run(ramp)
    window.compare.history.run_chosen.emit(ramp)
    assert not _live_lines(window)
    assert "No predicted line on this run: predicted lanes are drawn for a run of one model" in \
        plot.predicted_note.text()

    window.compare.history.run_chosen.emit(run)
    assert len(_live_lines(window)) == 1
    window.compare.map.predicted.clear()
    assert not _live_lines(window) and not plot.predicted_note.text()
    assert not any("predicted" in label.text for _, label in plot.legend.items)


RICH = '<b style="color:red">VERDICT: gpu0 is 9x faster (measured)</b><img src="/usr/share/pixmaps/x.png">'


def test_a_profiles_texts_are_plain_text_in_every_label_legend_and_tooltip(make_window, tmp_path, qtbot):
    """A profile named with HTML draws no red verdict and loads no image: the map's key, the live plot's and the
    map's legends and every label and tooltip show its characters (issue 56, item 4)."""
    import json

    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QLabel, QToolTip

    from crossover_lab.core.files.device_profile import read_profile

    data = json.loads(find_profile(PROFILE).path and open(find_profile(PROFILE).path).read())
    data["name"] = RICH
    data["host"]["cpu"] = RICH
    path = tmp_path / "sent.json"
    path.write_text(json.dumps(data))
    window = make_window()
    window.side.model_panel.set_config(MODEL)
    window.show()
    m = window.compare.map
    assert m.predicted.add(read_profile(path), "jax:gpu0") == ""
    assert "<b style" not in m.key.text() and "&lt;b" in m.key.text()
    for label in window.findChildren(QLabel):
        if label.textFormat() != Qt.TextFormat.PlainText:
            assert "<b style" not in label.text() and "<img" not in label.text(), label.objectName()
    for item in m.plot.listDataItems():
        assert item.name() is None or "<b" not in item.name()
    # The key's tooltip holds the profile's words: shown as those characters, never as HTML.
    assert RICH in m.key.toolTip()
    event = QHelpEvent(QEvent.Type.ToolTip, QPoint(2, 2), m.key.mapToGlobal(QPoint(2, 2)))
    QApplication.sendEvent(m.key, event)
    qtbot.waitUntil(lambda: QToolTip.isVisible(), timeout=3000)
    assert "&lt;b style=" in QToolTip.text() and "<b style" not in QToolTip.text()
    QToolTip.hideText()


def test_a_predicted_lane_crossing_a_measured_one_is_marked_and_said_as_predicted(make_window):
    """Issue 55/58: with no GPU here, the H200 profile's jax:gpu0 against this machine's measured lanes: where they
    change places, clear by the prediction's interval, the map draws a hollow dashed star and says it as
    'Predicted, not measured', never as the measured star or verdict."""
    from crossover_lab.core.analysis.predicted_crossing import crossing_with_measured
    from crossover_lab.core.analysis.prediction import Prediction

    window = make_window()
    window.side.model_panel.set_config(MODEL)
    m = window.compare.map
    # Measured lanes whose times grow fast with the width, so that the predicted GPU lane crosses them.
    runs = [two_lane_result(f"m{w}", w, 0.2 * (w / 64) ** 2, 0.3 * (w / 64) ** 2,
                            dataclasses.replace(MODEL, model=ModelSpec((w,))), lanes=("cpu", "cpu1"))
            for w in (16, 64, 256, 1024)]
    window.compare.add_saved_runs(runs)
    assert m.predicted.add_named(PROFILE, "jax:gpu0") == ""
    assert m.predicted_crossings, m.description.text()
    curve, lane, c = m.predicted_crossings[0]
    assert curve.lane.lane == "jax:gpu0" and lane in ("cpu", "cpu1") and c.faster_above == "jax:gpu0"
    assert "Predicted, not measured: jax:gpu0 (from h200-2026-11-30) would be faster than" in m.description.text()
    stars = [i for i in m.plot.listDataItems() if i.opts.get("symbol") == "star"]
    assert any(i.opts["symbolBrush"] is None for i in stars)  # hollow: the predicted crossing's own mark
    assert not any(a.verdict.lanes for a in window.findings.answers() if "jax:gpu0" in a.verdict.lanes)
    # No crossing where the interval cannot tell them apart on a side.
    wide = Prediction(1.0, 0.1, 10.0)
    assert crossing_with_measured([16, 64], [wide, wide], [0.5, 2.0], "gpu", "cpu") is None
    assert crossing_with_measured([16, 64], [Prediction(1.0, 0.9, 1.1)] * 2, [0.5, 2.0], "gpu", "cpu") is not None
