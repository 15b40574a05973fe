"""The report: one self-contained HTML file (it parses, refers to nothing outside itself, a lane's name is text)
or Markdown with its pictures beside it, from the H200 results, two machines' sweeps, a run and an anatomy;
and a real browser (headless Chromium, no network) shows it: not blank, no console error, the verdict there."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import H200_SWEEP_CSV, ROOT, cli_in_process, point, two_lane_result

from crossover_lab.core.files.run_files import export_runs
from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
from crossover_lab.core.files.sweeps.files import read_sweep_rows
from crossover_lab.core.report.html import write_report
from crossover_lab.core.report.rule import make_rule
from crossover_lab.core import APP_VERSION
from crossover_lab.core.words.anatomy import CLOCKS
from crossover_lab.core.words.sweep import describe_pair

H200 = ROOT / "docs" / "results" / "h200-2026-11-30"
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_EMPTY = {"circle", "line", "rect", "polyline", "path"}
SCRIPT_LANE = "<script>alert(1)</script>"


class Strict(HTMLParser):
    """Every tag that opens closes, in order; the text and the attributes, as a reader sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-3:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Strict:
    parser = Strict()
    parser.feed(html)
    parser.close()
    assert parser.stack == [], parser.stack
    return parser


def assert_self_contained(html: str, parsed: Strict) -> None:
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    for name, value in parsed.attrs:
        assert not (name in ("src", "href", "xlink:href") and re.match(r"\s*(https?:)?//", value)), (name, value)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", html)


def two_machines(tmp_path: Path) -> list[str]:
    paths = []
    for name, gpu_ms in (("laptop", 2.0), ("lab", 1.5)):
        widths = [16, 64, 256, 1024, 4096]
        rows = [SweepRow(lane, f"{lane.upper()} of {name}", w, 0, 250_000 * w, 128, ms, ms * 0.97, ms * 1.03, 100,
                         layers=2) for lane, series in (("cpu", [0.5, 0.8, 2.0, 8.0, 30.0]), ("gpu0", [gpu_ms] * 5))
                for w, ms in zip(widths, series)]
        path = tmp_path / f"{name}.csv"
        path.write_text(sweep_rows_text(rows))
        (tmp_path / f"{name}-batches.json").write_text(json.dumps({"host": {"machine": name, "cpu": "Xeon",
                                                                             "cpu_cores": 8}}))
        paths.append(str(path))
    return paths


def a_run(tmp_path: Path) -> str:
    path = tmp_path / "run.csv"
    export_runs(path, [two_lane_result("r1", 256, 3.0, 1.2)], {"machine": "box", "cpu": "Xeon", "cpu_cores": 8})
    return str(path)


def an_anatomy(tmp_path: Path) -> str:
    path = tmp_path / "anatomy.json"
    path.write_text(json.dumps({"points": [point().to_json(), point("cpu", "CPU", fit=0.8, device_loop=0.3).to_json()],
                                "failures": [], "clocks": CLOCKS}))
    return str(path)


def test_the_h200_report_answers_first_and_holds_every_fact(tmp_path, capsys):
    out = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), str(H200 / "seed-qa.csv"), "-o",
                         str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text()
    parsed = parse(html)
    assert_self_contained(html, parsed)
    text = " ".join(" ".join(parsed.text).split())
    verdict = describe_pair([r.point() for r in _rows(H200_SWEEP_CSV)], "jax:cpu", "jax:gpu0")
    assert verdict in text and text.index(verdict) < text.index("Fitted cost models")  # the answer first
    (pair,) = make_rule([str(H200_SWEEP_CSV)]).kinds[0].pairs  # the device rule, as `crossover rule` makes it
    assert pair.statement in text and ": use jax:gpu0" in pair.statement
    assert "jax:gpu0 is 2.2x faster than jax:cpu" in text
    assert "NVIDIA H200" in text and "580.159.04" in text and "3.15.1" in text  # hardware and versions
    assert " sweep --lanes jax:cpu,jax:gpu0 --widths 16,32,64" in text and "--csv sweep-b128.csv" in text
    for name in ("sweep-b128.csv", "sweep-b128-batches.json", "seed-qa.csv", "seed-qa.json"):
        assert name in text and hashlib.sha256((H200 / name).read_bytes()).hexdigest() in text
    assert f"Crossover {APP_VERSION}" in text and parsed.tags.count("svg") == 2
    assert "prefers-color-scheme: dark" in html and "@media print" in html


def _rows(path: Path) -> list[SweepRow]:
    return read_sweep_rows(str(path))[0]


def test_two_machines_a_run_and_an_anatomy_make_one_report(tmp_path):
    paths = two_machines(tmp_path) + [a_run(tmp_path), an_anatomy(tmp_path)]
    html = write_report(paths, tmp_path / "all.html").read_text()
    parsed = parse(html)
    assert_self_contained(html, parsed)
    text = " ".join(" ".join(parsed.text).split())
    assert "laptop/gpu0" in text and "lab/cpu" in text and "machines" in text
    assert "gpu0 is 2.5x faster than cpu" in text  # the run's verdict, as the CLI words it
    assert "On gpu0, 1.37 ms per step" in text and "device working" in text  # the Why bars' words and parts
    assert parsed.tags.count("svg") == 3  # the sweep plot, the per-batch plot, the Why bars


def test_a_lane_named_like_markup_is_text(tmp_path):
    rows = [SweepRow(lane, "CPU", w, 0, 1000 * w, 64, ms, ms * 0.95, ms * 1.05, 100, layers=1)
            for lane, series in ((SCRIPT_LANE, [1.0, 2.0, 4.0]), ("cpu1", [2.0, 2.0, 2.0]))
            for w, ms in zip((16, 256, 4096), series)]
    path = tmp_path / "evil.csv"
    path.write_text(sweep_rows_text(rows))
    html = write_report([str(path)], tmp_path / "evil.html").read_text()
    parsed = parse(html)
    assert "script" not in parsed.tags and "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and SCRIPT_LANE in " ".join(parsed.text)
    md = write_report([str(path)], tmp_path / "evil.md", "md").read_text()
    assert "<script>" not in md


def test_markdown_has_the_tables_the_verdict_the_command_and_its_pictures_beside_it(tmp_path, capsys):
    out = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), "-o", str(tmp_path / "r.md"))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "r.md").read_text()
    verdict = describe_pair([r.point() for r in _rows(H200_SWEEP_CSV)], "jax:cpu", "jax:gpu0")
    assert "| lane | width (units) | MFLOP/batch |" in md and verdict in md
    assert " sweep --lanes jax:cpu,jax:gpu0 --widths 16," in md
    (svg,) = tmp_path.glob("r-figure-*.svg")
    assert f"]({svg.name})" in md and svg.read_text().startswith("<svg") and "<style>" in svg.read_text()


def test_a_file_that_is_no_source_is_refused_with_a_sentence(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    out = cli_in_process(capsys, "report", str(bad), "-o", str(tmp_path / "r.html"))
    assert out.returncode == 2 and "not an anatomy JSON" in out.stderr and not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------- in a real browser


def png_colours(path: Path) -> int:
    """How many different byte values the PNG's decompressed rows hold (a blank page: two or three)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat)))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OFFLINE = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--proxy-server=127.0.0.1:9",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-background-networking"]


@pytest.mark.lanes  # a real browser, a program of its own
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's chromium)")
def test_a_real_browser_shows_each_report_offline(tmp_path):
    reports = {"h200": write_report([str(H200_SWEEP_CSV), str(H200 / "seed-qa.csv")], tmp_path / "h200.html"),
               "all": write_report(two_machines(tmp_path) + [an_anatomy(tmp_path)], tmp_path / "all.html")}
    for name, report in reports.items():
        shot = tmp_path / f"{name}.png"
        out = subprocess.run([CHROMIUM, *OFFLINE, "--enable-logging=stderr", "--v=0", f"--screenshot={shot}",
                              "--window-size=1200,1600", report.as_uri()], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
        assert shot.is_file() and png_colours(shot) > 16, out.stderr[-2000:]
        console = [line for line in out.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
        assert console == [], console
        dom = subprocess.run([CHROMIUM, *OFFLINE, "--dump-dom", report.as_uri()], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path).stdout
        verdict = "jax:cpu is faster up to 32 units and jax:gpu0 from 512 units" if name == "h200" \
            else "lab/gpu0 is faster"
        assert verdict in dom and dom.count("<svg") == (2 if name == "h200" else 2), dom[:500]
        assert dom.count("<figure>") == dom.count("<svg")


def test_energy_measured_per_point_is_in_the_report_and_absent_where_none_was(tmp_path):
    from crossover_lab.core.words.sweep import energy_lines
    from crossover_lab.core.files.sweeps.rows import group_rows
    rows = [SweepRow(lane, "X", w, 0, 1000 * w, 128, ms, ms * 0.97, ms * 1.03, 200, layers=1,
                     energy_j_per_msample=j, mean_w=watts, idle_w=watts / 3, energy_counter=counter)
            for lane, counter, watts, series in (("gpu0", "nvml-energy", 300.0, [(2.0, 9000.0), (2.1, 800.0)]),
                                                  ("cpu", "rapl-package", 60.0, [(0.5, 600.0), (9.0, 9000.0)]))
            for w, (ms, j) in zip((16, 4096), series)]
    path = tmp_path / "energy.csv"
    path.write_text(sweep_rows_text(rows))
    page = write_report([str(path)], tmp_path / "energy.html").read_text(encoding="utf-8")
    said, unlike = energy_lines(group_rows(rows))  # the crossing, and that a package and a board are unlike things
    assert unlike.startswith("unlike things: cpu is charged its whole CPU package")
    assert said in page.replace("&#39;", "'") and "nvml-energy" in page and "rapl-package" in page
    assert unlike in page.replace("&#39;", "'")
    assert "Energy per point" in page
    plain = [SweepRow(r.lane, r.device, r.width, 0, r.flops_per_batch, 128, r.median_ms, r.p10_ms, r.p90_ms, 200,
                      layers=1) for r in rows]
    path.write_text(sweep_rows_text(plain))
    assert "Energy per point" not in write_report([str(path)], tmp_path / "plain.html").read_text(encoding="utf-8")


def test_a_refined_sweep_reports_what_its_refinement_left_open_as_analyze_says_it(tmp_path, capsys):
    """The report of a refined sweep says the refinement's open crossing and why it stopped, in the words
    `analyze` of the file prints (the CI once caught the report saying only the one rule's sentence)."""
    from crossover_lab.core.analysis.refinement import RefineTarget, with_refinement
    from crossover_lab.core.study.refine import answer
    widths = (16, 180, 2048)
    rows = [SweepRow(lane, "CPU", w, 0, 250_000 * w, 128, ms, ms * 0.97, ms * 1.03, 100, layers=1)
            for lane, series in (("cpu", [2.0, 3.0, 4.0]), ("cpu1", [1.0, 1.5, 9.0])) for w, ms in zip(widths, series)]
    refinement = answer([r.point() for r in rows], {}, RefineTarget(0.05, 15.0), "budget", 15.0, widths)
    assert [c.stopped for c in refinement.crossings] == ["budget"]  # open: 180 to 2,048 is far from ±5%
    path = tmp_path / "refined.csv"
    path.write_text(sweep_rows_text(rows))
    analysis = with_refinement({"crossovers": [], "lanes": {}}, refinement)
    (tmp_path / "refined-batches.json").write_text(json.dumps(
        {"host": {"machine": "box"}, "sweep": {"variants": {"base": {"analysis": analysis}}}}))
    said = cli_in_process(capsys, "analyze", str(path)).stdout
    open_line = next(x for x in said.splitlines() if "not yet known within ±5%" in x)
    assert open_line.startswith("cpu overtakes cpu1 between 180 and 2,048 units")
    html = write_report([str(path)], tmp_path / "r.html").read_text()
    answer_div = html[html.index('<div class="answer">'):html.index("</div>", html.index('<div class="answer">'))]
    assert open_line.rstrip(".") in answer_div and "Refinement stopped after 15 s" in answer_div


def test_a_report_of_a_calls_anatomy_is_titled_by_it_and_reproduces_it_with_its_task(tmp_path, capsys):
    from helpers import rung

    from crossover_lab.core.analysis.anatomy import AnatomyPoint
    from crossover_lab.core.records import RunSettings
    from crossover_lab.core.words.anatomy import anatomy_json

    times = {"predict_on_batch": 1.0, "call_synced": 0.6, "call_resident": 0.5, "call_pipelined": 0.3,
             "device_loop": 0.1}
    call = AnatomyPoint("cpu1", "CPU (1 thread)", "tensorflow", (64,), 16, 10**6,
                        {k: rung(v, 0.01) for k, v in times.items()}, window_steps=8, task="predict",
                        settings=RunSettings(family="cnn", data_source="synthetic"))
    path = tmp_path / "calls.json"
    path.write_text(json.dumps(anatomy_json([call])))
    out = cli_in_process(capsys, "report", str(path), "-o", str(tmp_path / "r.md"), "--format", "md")
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "r.md").read_text()
    assert md.startswith("# Crossover report: the anatomy of a served call")
    assert ("anatomy --lanes cpu1 --widths 64 --layers 1 --family cnn --batch-size 16 --task predict --data "
            "synthetic --json-file calls.json") in md
    assert "How soon does this lane answer one call of this model?" in md and "ms per call" in md


def test_the_reproduce_command_of_a_ramp_replays_the_ramp_not_its_first_model():
    from crossover_lab.core.report.reproduce import reproduce_command

    def run(segments, status="completed"):
        lanes = {"cpu": {"segments": [{"widths": list(w), "batch_size": b, "summary": {"status": status}}
                                      for w, b in segments]}, "cpu1": {"segments": []}}
        return {"runs": [{"lanes": lanes, "schedule": "interleaved", "config": {
            "model": {"widths": list(segments[0][0]), "family": "mlp", "dropout": 0.2},
            "train": {"batch_size": segments[0][1], "epochs": 1, "max_steps": 25, "warmup_steps": 5,
                      "max_seconds": 2.0}}}]}

    widths = reproduce_command("/x/r.csv", run([((16, 16), 64), ((256, 256), 64), ((2048, 2048), 64)]), "run")
    assert "--ramp 16,256,2048 --layers 2 --steady-steps 20 --seconds-per-point 2.0" in widths
    assert "--widths" not in widths and "--epochs" not in widths
    batches = reproduce_command("/x/r.csv", run([((64,), 1), ((64,), 8), ((64,), 512)]), "run")
    assert "--widths 64" in batches and "--ramp-batch-sizes 1,8,512 --steady-steps 20" in batches
    dragged = reproduce_command("/x/r.csv", run([((16,), 64), ((256,), 64)], status="switched"), "run")
    assert "--ramp" not in dragged and "--widths 16" in dragged  # a hand's drags are not replayed
    one = reproduce_command("/x/r.csv", run([((16,), 64)]), "run")
    assert "--ramp" not in one and "--epochs 1" in one


def test_the_reproduce_command_names_a_saved_model_its_family_and_its_task():
    from crossover_lab.core.report.reproduce import reproduce_command

    saved = {"path": "/m/mine.keras", "sha256": "ab" * 32, "size_bytes": 10}
    meta = {"runs": [{"lanes": {"cpu": {}, "cpu1": {}}, "config": {
        "model": {"widths": [], "family": "saved", "saved": saved, "dropout": 0.2},
        "train": {"batch_size": 1, "task": "predict", "serve": "compiled"}}}],
        "sweep": {"widths": [0], "layers": 1, "batch_sizes": [1, 16, 128]}}
    command = reproduce_command("/x/s.csv", meta, "sweep")
    assert "--model /m/mine.keras" in command and "--widths" not in command and "--layers" not in command
    assert "--task predict --serve compiled" in command and "--batch-sizes 1,16,128" in command
    assert "--dropout" not in command and "--family" not in command
    lstm = {"runs": [{"lanes": {"cpu": {}}, "config": {
        "model": {"widths": [64, 64], "family": "rnn", "cell": "gru", "heads": 4, "dropout": 0.2},
        "train": {"batch_size": 32, "task": "train", "serve": "keras"}}}]}
    command = reproduce_command("/x/r.csv", lstm, "run")
    assert "--widths 64,64 --family rnn --cell gru --dropout 0.2" in command
    assert "--heads" not in command and "--task" not in command


def test_a_tie_widened_by_run_to_run_noise_reads_the_same_in_the_report(tmp_path):
    """A sentence with an apostrophe ("one width's runs scattered ...") is the same sentence on the page, however
    the page escapes it (the CI once compared it against Python's escaping, not the page's)."""
    import html as html_lib
    rows = [SweepRow(lane, "CPU", w, 0, 1000 * w, 128, ms, ms * 0.97, ms * 1.03, 200, layers=1, runs=2,
                     between_runs=spread)
            for lane, series, spread in (("cpu", [1.0, 2.0], 0.08), ("cpu1", [1.2, 1.6], 0.5))
            for w, ms in zip((16, 2048), series)]
    said = describe_pair([r.point() for r in rows], "cpu", "cpu1")
    # cpu1 looked 1.25x faster, inside the pair's run-to-run noise: no answer, said as noise (not "too close").
    assert said.startswith("no answer for cpu and cpu1") and "one run's ratio of the two is uncertain by" in said
    path = tmp_path / "noisy.csv"
    path.write_text(sweep_rows_text(rows))
    page = write_report([str(path)], tmp_path / "noisy.html").read_text()
    parsed = parse(page)
    assert said in " ".join(" ".join(parsed.text).split())
    answer_div = page[page.index('<div class="answer">'):page.index("</div>", page.index('<div class="answer">'))]
    assert said in html_lib.unescape(answer_div)


def test_markdown_keeps_whatever_a_file_names_as_text_and_no_command_closes_its_fence(tmp_path, capsys):
    """A lane, a file or a data path named with Markdown or HTML in it (a newline and ``` to close the reproduce
    fence, <img onerror>, <script>, ![x](http://…) to fetch a remote image) stays text in the Markdown report."""
    from helpers import cli_in_process

    from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
    from crossover_lab.core.report.html import _md_cell, _md_code

    hostile = "![x](http://evil.example/a.png)<img src=x onerror=alert(1)>"
    rows = [SweepRow(lane, "CPU " + hostile, w, 0, 1000 * w, 128, ms, ms * 0.95, ms * 1.05, 200)
            for lane, series in (("cpu", [1.0, 1.0, 1.0]), ("cpu1", [0.5, 1.0, 3.0]))
            for w, ms in zip([16, 256, 4096], series)]
    path = tmp_path / "sweep ```\n<script>alert(1).csv"
    path.write_text(sweep_rows_text(rows))
    out = cli_in_process(capsys, "report", str(path), "-o", str(tmp_path / "r.md"))
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "<script" not in text and "<img" not in text and "](http" not in text.replace("\\](http", "")
    fences = [line for line in text.splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0 and all(len(f) == len(fences[0]) and set(f) == {"`"} for f in fences)
    assert "alert(1)" in text  # kept, as text
    # The filters themselves.
    assert _md_cell("a|b\n`c`[d]") == "a\\|b \\`c\\`\\[d\\]"
    assert _md_code("run\n```\nx").splitlines() == ["````", "run\\n```\\nx", "````"]


def test_a_runs_time_limit_is_recorded_and_its_reproduce_command_gives_it_back(tmp_path, capsys, scripted):
    """The window's default run stops after 30 s a lane (its Time limit): the sidecar records it, and the report's
    command to measure the file again says --time-limit, which `run` takes."""
    import json

    from helpers import cli_in_process
    from crossover_lab.core.report.reproduce import reproduce_command

    out = tmp_path / "r.csv"
    done = cli_in_process(capsys, "run", "--lanes", "cpu", "--data", "synthetic", "--epochs", "1000",
                          "--time-limit", "0.2", "--csv", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["runs"][0]["config"]["train"]["max_seconds"] == 0.2
    command = reproduce_command(str(out), meta, "run")
    assert "--epochs 1000 --time-limit 0.2" in command, command
    refused = cli_in_process(capsys, "run", "--lanes", "cpu", "--time-limit", "0")
    assert refused.returncode == 2 and "--time-limit 0: choose above 0" in refused.stderr


def test_a_served_calls_p90_from_too_few_calls_is_no_spread_in_the_reports_run_table(tmp_path):
    """Issue 45: p90 is gated wherever it is shown. A predict run of 30 calls a lane (the tail rule gives a p90 from
    64): the run's table shows no p10–p90 for it, as its sidecar holds it null; a training run's spread stays."""
    from crossover_lab.core.run_stats import summarize
    from crossover_lab.core.records import BatchTiming
    from crossover_lab.core.results import LaneResult, RunResult
    from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
    from helpers import lane_events

    def run(task: str, n: int) -> RunResult:
        config = RunConfig(ModelSpec((64,)), TrainSpec(batch_size=1, task=task))
        lanes = {}
        for lane, ms in (("cpu", 1.0), ("cpu1", 1.5)):
            events = lane_events(f"{task}-{n}", lane, lane.upper(), ms, n=n)
            records = [e for e in events if isinstance(e, BatchTiming)]
            s = summarize(records, run_id=f"{task}-{n}", lane=lane, device=lane.upper(), status="completed",
                          flops_per_batch=config.flops_per_batch, wall_s=1.0)
            lanes[lane] = LaneResult(lane, events[0], records, s)
        return RunResult(f"{task}-{n}", config, Schedule.SEQUENTIAL, "2026-01-01T00:00:00+00:00", lanes)

    for task, n, shown in (("predict", 30, False), ("predict", 200, True), ("train", 30, True)):
        path = tmp_path / f"{task}-{n}.csv"
        export_runs(path, [run(task, n)], {"machine": "box"})
        md = write_report([str(path)], tmp_path / f"{task}-{n}.md", "md").read_text()
        (cpu_row,) = [line for line in md.splitlines() if line.startswith("| cpu | CPU | completed |")]
        cells = [c.strip() for c in cpu_row.strip("|").split("|")]
        assert (cells[5] != "–") == shown, (task, n, cpu_row)


def test_a_lane_has_the_windows_colour_in_the_reports_pictures():
    """Issue 55: the report coloured cpu1 red where the window draws it in its own colour: each lane's points,
    fit and line take the lane's colour from core/colours.py, which the window's lane_color reads too."""
    from crossover_lab.core.analysis.points import SweepPoint
    from crossover_lab.core.colours import lane_hex
    from crossover_lab.core.report.sections import sweep_figure

    points = [SweepPoint(lane, w, 1000.0 * w * w, ms * w / 16, batch_size=128, n_batches=50)
              for lane, ms in (("cpu", 1.0), ("cpu1", 2.0)) for w in (16, 64, 256)]
    svg = str(sweep_figure("test", points, 1).svg)
    for lane in ("cpu", "cpu1"):
        assert f"stroke:{lane_hex(lane)};fill:{lane_hex(lane)}" in svg  # its points
        assert f'fig-fit" style="stroke:{lane_hex(lane)}"' in svg  # its fitted line, unfilled
    assert 'class="c1' not in svg and lane_hex("cpu1") != lane_hex("jax:gpu0")
