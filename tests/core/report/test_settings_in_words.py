"""Issue 50: the report a reader would cite. Its settings are those that apply to the file's task and model family,
in words, grouped, said once; its answer says what the verdict rests on, as the CLI does; it explains only what was
measured. Checked on stored real files (docs/results/): a training run of an MLP, a sweep, a run at a rate, a served sweep."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from helpers import ROOT

from crossover_lab.core.records import RunSettings
from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.report.html import write_report
from crossover_lab.core.results import RunResult
from crossover_lab.core.words.settings import placement_words, settings_groups

CPU = ROOT / "docs" / "results" / "cpu-2026-12-03"
PYTHON_WORDS = re.compile(r"\b(None|False|True|null)\b|\(s\)|tensorflow default|/job:localhost")


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_text(html: str) -> str:
    parser = Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def _answer(html: str) -> str:
    start = html.index('<div class="answer">')
    return page_text(html[start:html.index("</div>", start)])


def _settings(text: str) -> str:
    start = text.index("Settings What applies")
    return text[start:text.index("Reproduce", start)]


def test_the_report_of_an_mlps_training_run_says_what_applies_in_words_once_and_what_it_rests_on(tmp_path):
    run = CPU / "seed-blog-small.csv"  # a real run: cpu and cpu1 trained an MLP, its sidecar as the lanes wrote it
    html = write_report([str(run)], tmp_path / "r.html").read_text()
    text = page_text(html)
    settings = _settings(text)
    for absent in ("lstm", "LSTM", "cell", "heads", "arrival", "max_batch", "serve", "predict_on_batch"):
        assert absent not in settings, absent  # a training run of an MLP has none of these
    assert PYTHON_WORDS.search(text) is None, PYTHON_WORDS.search(text)
    assert html.count('class="settings"') == 1 and text.count("Settings What applies") == 1  # one settings table
    assert "Settings that change speed" not in text
    for said in ("MLP, 784-128-10", "1 layer of 128 units", "Adam, learning rate 0.001", "32 samples",
                 "off, TensorFlow's default", "on TensorFlow's CPU 0", "1 thread, pinned to core 1",
                 "Crossover's choice", "Every lane", "Lane cpu1"):
        assert said in settings, said
    assert settings.count("TensorFlow 2.21.0, Keras 3.15.1") == 1  # the same on both lanes: said once
    assert 'href="seed-blog-small.json"' not in html  # written elsewhere, the link finds the sidecar from there
    assert re.search(r'href="[^"]*docs/results/cpu-2026-12-03/seed-blog-small\.json"', html)
    answer = _answer(html)
    assert "cpu1 is 1.6x faster than cpu" in answer
    assert "This verdict rests on one run of each lane" in answer  # as the CLI says it after the run
    assert "fixed cost" not in text  # one model at one size: no fit, so no lesson on fixed cost
    assert text.count("cpu1 is 1.6x faster than cpu") == 1  # the verdict once: in the answer
    assert "from 2 files" in text

    md = write_report([str(run)], tmp_path / "r.md", "md").read_text()
    assert md.count("## Settings") == 1 and "| **Model** | |" in md and "| **Lane cpu1** | |" in md
    assert PYTHON_WORDS.search(md.split("## Reproduce")[0]) is None
    assert "This verdict rests on one run of each lane" in md


def test_each_family_and_task_names_its_own_settings_only():
    def groups(model: ModelSpec, train: TrainSpec) -> dict[str, dict[str, str]]:
        run = RunResult("r", RunConfig(model, train), Schedule.INTERLEAVED, "2026-01-01T00:00:00+00:00", {})
        return {g.title: dict(g.rows) for g in settings_groups([run])}

    rnn = groups(ModelSpec((64, 64), family="rnn", cell="gru"), TrainSpec())
    assert rnn["Model"]["model"] == "RNN of GRU cells" and "attention heads" not in rnn["Model"]
    assert "activation" not in rnn["Model"] and rnn["Model"]["recurrent layers"] == "2 layers, each 64 units"
    transformer = groups(ModelSpec((64,), family="transformer", heads=8), TrainSpec())
    assert transformer["Model"]["attention heads"] == "8"
    load = groups(ModelSpec((128,)), TrainSpec(batch_size=1, task="predict", arrival_rate=100.0, max_batch=4))
    serving = load["Serving"]
    assert serving["requests arrive at"] == "100 requests/s" and serving["the server"] == "at most 4 requests a call"
    assert "optimizer" not in serving and "dropout" not in load["Model"]
    served = groups(ModelSpec((128,)), TrainSpec(batch_size=8, task="predict"))["Serving"]
    assert "arrivals" not in served and served["batch size"] == "8 samples a call"
    assert placement_words("/job:localhost/replica:0/task:0/device:GPU:1", "tensorflow") == "TensorFlow's GPU 1"
    assert placement_words("cpu:0", "jax") == "JAX's CPU 0"


def test_a_sweep_a_rate_run_and_a_served_sweep_say_their_own_settings(tmp_path):
    for files, present, absent in (
            (["sweep.csv"], ("2 layers, each as wide as the other: 16, 64, 256, 1,024 and 4,096 units",
                             "width, in units", "at most 60 steady steps or 3 s a lane"),
             ("arrival", "length", "epoch")),
            (["load.csv"], ("100, 400 and 1,600 requests/s", "Poisson", "one request per call"),
             ("optimizer", "dropout", "learning rate")),
            (["serve.csv"], ("1, 8, 64 and 512 samples a call", "batch size (the sizes under Serving)",
                             "steady calls"), ("arrival", "optimizer"))):
        html = write_report([str(CPU / f) for f in files], tmp_path / f"{files[0]}.html").read_text()
        text = page_text(html)
        settings = _settings(text)
        assert PYTHON_WORDS.search(text) is None, (files, PYTHON_WORDS.search(text))
        assert html.count('class="settings"') == 1
        for said in present:
            assert said in settings, (files, said)
        for word in absent:
            assert word not in settings, (files, word)
        assert "fixed cost" not in text.replace("fixed + FLOPs", "")  # no lesson where no fit shows it


def test_an_anatomy_answers_once_with_its_busy_note_and_a_load_shows_the_clis_load_table(tmp_path):
    import dataclasses
    import json

    from helpers import point

    from crossover_lab.core.words.anatomy import anatomy_json, why_sentence

    busy = dataclasses.replace(point("cpu", "CPU (2 threads)", fit=0.8, device_loop=0.3),
                               settings=RunSettings.from_json({"backend": "jax", "others_cpu": 0.6, "load_avg": 3.1,
                                                               "jit_compile": True, "jit_source": "jax default",
                                                               "placement": "cpu:0"}))
    quiet = dataclasses.replace(point(), settings=RunSettings(backend="jax", jit_compile=True, jit_source="jax default",
                                                              placement="gpu:0"))
    path = tmp_path / "anatomy.json"
    path.write_text(json.dumps(anatomy_json([quiet, busy])))
    html = write_report([str(path)], tmp_path / "a.html").read_text()
    text, answer = page_text(html), _answer(html)
    assert answer.startswith(why_sentence(quiet)) and text.count(why_sentence(quiet)) == 1  # said once: the answer
    assert "Other work used 60% of cpu's cores while it was measured (load 3.1)" in answer
    assert "other work used" not in text.replace(answer, "")
    settings = _settings(text)
    assert "on JAX's GPU 0" in settings and "on JAX's CPU 0" in settings and "on, JAX's default" in settings
    assert "Every lane" in settings and PYTHON_WORDS.search(text) is None

    load = write_report([str(CPU / "load.csv")], tmp_path / "load.html").read_text()
    assert "<th>asked /s</th><th>answered /s</th>" in load and "samples/s" not in load  # the CLI's load table
    assert "ms per call along the run" in load


def test_a_ramps_settings_name_every_width_it_stepped_through():
    from helpers import canned_ramp

    ramp = canned_ramp([RunConfig(ModelSpec((w,)), TrainSpec(batch_size=64)) for w in (16, 256, 1024)])
    model = {g.title: dict(g.rows) for g in settings_groups([ramp])}["Model"]
    assert model["hidden layers"] == "1 layer: 16, 256 and 1,024 units, one width at a time"
    assert model["trainable parameters"].endswith(", by width")
