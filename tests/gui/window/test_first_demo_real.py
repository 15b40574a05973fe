"""The README's first demo on real lanes (issue 55), on the window's defaults but a shorter time limit: Start, hold
128 until both lanes have 10 steady batches there, type 1,024 (the slider follows, as a presenter aims it), let the
run end. Both widths are completed points of both lanes, the map and the headline say the findings' answer over
both widths, and File > Export report says the same sentence. Which lane the noise makes faster is not this test's
(a test of realness asserts what the run must do)."""
from __future__ import annotations

import dataclasses
import html
import re

import pytest

from crossover_lab.core.config import RunConfig
from crossover_lab.core.words.sweep import answer_words
from crossover_lab.core.words.headline import headline

pytestmark = pytest.mark.lanes


def _steady(window, lane: str, width: int) -> int:
    live = window.controller.live
    if live is None or lane not in live.lanes:
        return 0
    segments = [s for s in live.lanes[lane].segments if s.started.widths == (width,)]
    return max((live.segment_summary(lane, s).n_batches for s in segments), default=0)


def test_a_typed_width_mid_run_makes_a_point_at_both_widths_and_one_answer_in_window_and_report(qtbot, make_window,
                                                                                               tmp_path):
    window = make_window(prestart=True)
    config = window.config
    assert isinstance(config, RunConfig) and config.model.widths == (128,)  # the defaults
    window.side.model_panel.set_config(dataclasses.replace(
        config, train=dataclasses.replace(config.train, data="synthetic", max_seconds=8.0)))
    window.show()
    window.actions.start.trigger()  # F5
    qtbot.waitUntil(lambda: window.controller.running, timeout=60_000)
    qtbot.waitUntil(lambda: min(_steady(window, lane, 128) for lane in ("cpu", "cpu1")) >= 10, timeout=120_000)
    window.side.model_panel.widths.spins[0].setValue(1024)  # typed, as a presenter aims it; the slider follows
    qtbot.waitUntil(lambda: not window.controller.running, timeout=180_000)
    kinds = {(p.lane, p.point.width): str(p.kind) for p in window.compare.map.map_points()}
    for lane in ("cpu", "cpu1"):
        for width in (128, 1024):
            assert kinds.get((lane, width)) == "completed", kinds
    answers = [a for a in window.findings.answers() if sorted({p.width for p in a.points}) == [128, 1024]]
    assert answers, [answer_words(a) for a in window.findings.answers()]
    said = answer_words(answers[0])
    assert "No two lanes have completed points" not in window.compare.map.description.text()
    low = lambda text: text[:1].lower() + text[1:]  # noqa: E731  (a view may capitalise the first letter)
    assert low(said) in low(window.compare.map.said())
    assert low(headline(said)[0]) in low(window.compare.map.description.text())  # the caption: plain words
    qtbot.waitUntil(lambda: low(said) in low(window.compare.summary.verdict.said()), timeout=5_000)
    page = tmp_path / "demo.html"
    assert window.exports.export_report(str(page), window.report_sources) == ""
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))
    assert said in text, (said, text[:2000])
