"""A report's Predictions section (issue 47): each predicted lane with its profile's name, machine, age and versions
and its interval, apart from the measured answer; `report --profile` predicts a profile's lanes on the files' models,
an extrapolation is said as one, and an unknown profile is refused with a sentence."""
from __future__ import annotations

import re

from helpers import H200_SWEEP_CSV, ROOT, cli_in_process

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.predicted import AskedPrediction, PredictedLane
from crossover_lab.core.files.device_profile import find_profile
from crossover_lab.core.report.html import write_report

H200 = ROOT / "docs" / "results" / "h200-2026-11-30"
PROFILE = "h200-2026-11-30"


def _section(html: str, start: str, end: str = "<section") -> str:
    at = html.index(start)
    after = html.find(end, at + len(start))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[at:after if after > 0 else None]))


def test_report_profile_predicts_the_sweeps_model_along_its_widths_apart_from_the_answer(tmp_path, capsys):
    out = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), "-o", str(tmp_path / "r.html"), "--profile", PROFILE)
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    section = _section(html, "<h2>Predictions</h2>")
    assert "jax:gpu0, predicted from h200-2026-11-30" in section and "jax:cpu, predicted from h200-2026-11-30" in section
    assert "NVIDIA H200" in section and "measured 2026-11-30" in section and "Keras 3.15.1" in section
    assert re.search(r"\(95%: [\d.]+–[\d.]+ ms\)", section), section[:2000]
    assert "width" in section and "95% interval" in section and "1,024" in section  # along the sweep's widths
    answer = _section(html, '<section id="answer">')
    assert "predicted" not in answer  # the measured answer stands alone
    assert html.index("<h2>Predictions</h2>") < html.index("<section id=\"settings\">")  # after the measured sections
    plain = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), "-o", str(tmp_path / "plain.html"))
    assert plain.returncode == 0 and "Predictions" not in (tmp_path / "plain.html").read_text(encoding="utf-8")


def test_a_model_the_profile_never_measured_is_said_as_an_extrapolation_without_an_interval(tmp_path):
    cnn = RunConfig(ModelSpec((32, 32), family="cnn"), TrainSpec(batch_size=128))
    asked = [AskedPrediction(PredictedLane(find_profile(PROFILE), "jax:gpu0"), cnn, (16, 32, 64))]
    md = write_report([str(H200 / "seed-qa.csv")], tmp_path / "r.md", "md", predictions=asked).read_text(
        encoding="utf-8")
    section = md[md.index("## Predictions"):]
    line = next(x for x in section.splitlines() if x.startswith("jax:gpu0, predicted from"))
    assert "an extrapolation" in line and "never measured a cnn" in line and "95%" not in line
    assert "≈" in section  # the width table says each figure as an extrapolation too


def test_an_unknown_profile_is_refused_with_a_sentence_and_no_report(tmp_path, capsys):
    out = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), "-o", str(tmp_path / "r.html"), "--profile", "nonesuch")
    assert out.returncode == 2 and "no profile 'nonesuch'" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "r.html").exists()
