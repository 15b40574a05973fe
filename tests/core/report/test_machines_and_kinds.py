"""How the report and the rule name what they measured: files of one machine are one machine (its lanes named
once, "cpu", never "vm/cpu" beside "vm#2/cpu"), a saved model is your saved model along batch size (never
"width 0, 6 hidden layers"), and a sweep along batch size counts samples per batch (never "units"). Made-up
sweep files and sidecars: no lane runs."""
from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import two_lane_result

from crossover_lab.core.files.run_files import export_runs
from crossover_lab.core.files.sweeps.rows import SweepRow, group_rows, sweep_rows_text
from crossover_lab.core.report.document import build_report
from crossover_lab.core.report.html import write_report
from crossover_lab.core.report.inputs import read_inputs, read_sweeps
from crossover_lab.core.report.rule import choose, decide, load_rule, make_rule

WIDTHS = [16, 64, 256, 1024, 4096]
BATCHES = [1, 4, 16, 128, 1024]


def host(machine: str) -> dict:
    return {"machine": machine, "cpu": "Xeon", "cpu_cores": 2}


def write(path: Path, rows: list[SweepRow], machine: str | None) -> str:
    path.write_text(sweep_rows_text(rows))
    if machine is not None:
        path.with_name(f"{path.stem}-batches.json").write_text(json.dumps({"host": host(machine)}))
    return str(path)


def width_sweep(path: Path, machine: str | None = "vm", series: dict | None = None, widths=WIDTHS) -> str:
    """An MLP of 2 hidden layers at batch 128: cpu1 faster at small widths, cpu above about 140 units (each width
    1.7x or more from equal: beyond the rule's floor for a sweep measured once)."""
    series = series or {"cpu": [1.0, 1.2, 2.0, 5.0, 20.0], "cpu1": [0.5, 0.6, 3.42, 9.0, 40.0]}
    rows = [SweepRow(lane, "CPU", w, 0, 250_000 * w, 128, ms, ms * 0.97, ms * 1.03, 100, layers=2)
            for lane, mss in series.items() for w, ms in zip(widths, mss)]
    return write(path, rows, machine)


def saved_sweep(path: Path, machine: str | None = "vm") -> str:
    """A saved model's sweep as `sweep --model mine.keras` writes it: width 0 (NO_WIDTH), family "saved
    mine.keras", its own 6 layers, along batch size: cpu1 faster at batch 1, equal from 4 to 16, cpu from 128.
    Each floor is a hair above its step, so the floor notes speak too."""
    series = {"cpu": [2.0, 2.0, 2.2, 4.0, 20.0], "cpu1": [1.0, 2.01, 2.2, 8.0, 40.0]}
    rows = [SweepRow(lane, "CPU", 0, 5000, 1_000_000 * b, b, ms, ms * 0.97, ms * 1.03, 100, layers=6,
                     family="saved mine.keras", floor_ms=ms * 1.01)
            for lane, mss in series.items() for b, ms in zip(BATCHES, mss)]
    return write(path, rows, machine)


def a_run(path: Path, machine: str) -> str:
    export_runs(path, [two_lane_result("r1", 256, 3.0, 1.2, lanes=("cpu", "cpu1"))], host(machine))
    return str(path)


def facts(paths: list[str]) -> dict[str, str]:
    return dict(build_report(read_inputs(paths)).facts)


def words_of(path: Path) -> str:
    return " ".join(path.read_text().split())


# ---------------------------------------------------------------- one machine, several files


def test_files_of_one_machine_name_its_lanes_once(tmp_path):
    """A width sweep, a saved model's sweep and a run, all from the machine "vm": two lanes, not six."""
    paths = [width_sweep(tmp_path / "sweep.csv"), saved_sweep(tmp_path / "saved.csv"), a_run(tmp_path / "run.csv", "vm")]
    said = facts(paths)
    assert said["lanes"] == "cpu, cpu1"  # was "vm/cpu, vm/cpu1, vm#2/cpu, vm#2/cpu1, cpu, cpu1"
    assert said["machines"] == "vm: vm (CPU)"  # was "vm: vm (CPU); vm#2: vm (CPU)"
    page = words_of(write_report(paths, tmp_path / "r.md", "md"))
    assert "vm/" not in page and "vm#2" not in page
    assert "cpu is faster above about 140 units" in page
    rule = make_rule(paths[:2])
    assert rule.machines == {"vm": "vm"} and {f["label"] for f in rule.files} == {"vm"}
    assert all(lane in ("cpu", "cpu1") for kind in rule.kinds for lane in kind.lanes)
    assert choose(rule, 4096 * 250_000, batch_size=128) == "cpu"
    assert choose(rule, 16 * 250_000, batch_size=128) == "cpu1"


def test_one_lane_in_two_files_of_one_machine_is_one_lane_the_later_file_giving_a_point_both_measured(tmp_path):
    first = width_sweep(tmp_path / "a.csv", widths=[16, 64, 256],
                        series={"cpu": [1.0, 1.2, 2.0], "cpu1": [0.5, 0.9, 2.5]})
    second = width_sweep(tmp_path / "b.csv", widths=[256, 1024, 4096],
                         series={"cpu": [2.2, 5.0, 20.0], "cpu1": [2.6, 9.0, 40.0]})
    sweeps = read_sweeps([first, second])
    assert [s.label for s in sweeps] == ["vm", "vm"] and [s.lane_prefix for s in sweeps] == ["", ""]
    (points,) = group_rows(r for s in sweeps for r in s.rows).values()
    cpu = sorted((p.width, p.median_ms) for p in points if p.lane == "cpu")
    assert cpu == [(16, 1.0), (64, 1.2), (256, 2.2), (1024, 5.0), (4096, 20.0)]  # 256: b.csv's, named later
    assert {p.lane for p in points} == {"cpu", "cpu1"}


def test_the_same_lane_name_on_two_machines_stays_two_lanes_each_machine_named_once(tmp_path):
    """Two files of "lab" and one of "laptop": lab/cpu and laptop/cpu, never lab#2/cpu; a run of lab's lists its
    lanes as lab's."""
    (tmp_path / "other").mkdir()
    paths = [width_sweep(tmp_path / "lab.csv", "lab"), width_sweep(tmp_path / "laptop.csv", "laptop"),
             saved_sweep(tmp_path / "other" / "saved.csv", "lab"), a_run(tmp_path / "run.csv", "lab")]
    sweeps = read_sweeps(paths[:3])
    assert [s.label for s in sweeps] == ["lab", "laptop", "lab"]
    assert {r.lane for s in sweeps for r in s.rows} == {"lab/cpu", "lab/cpu1", "laptop/cpu", "laptop/cpu1"}
    said = facts(paths)
    assert said["lanes"] == "lab/cpu, lab/cpu1, laptop/cpu, laptop/cpu1"  # the run's cpu is lab's
    assert said["machines"] == "lab: lab (CPU); laptop: laptop (CPU)"
    assert make_rule(paths[:3]).machines == {"lab": "lab", "laptop": "laptop"}


def test_files_that_name_no_machine_stay_apart(tmp_path):
    """Without a sidecar nothing says two files ran on one machine: each is its own, named by its file."""
    sweeps = read_sweeps([width_sweep(tmp_path / "a.csv", None), width_sweep(tmp_path / "b.csv", None)])
    assert [s.label for s in sweeps] == ["a", "b"]
    assert {r.lane for s in sweeps for r in s.rows} == {"a/cpu", "a/cpu1", "b/cpu", "b/cpu1"}


# ---------------------------------------------------------------- a saved model, along batch size


def test_a_saved_model_is_your_saved_model_along_batch_size_not_width_0_and_hidden_layers(tmp_path):
    paths = [width_sweep(tmp_path / "sweep.csv"), saved_sweep(tmp_path / "saved.csv")]
    said = facts(paths)
    assert said["model"] == ("MLP, 2 hidden layers of 16–4,096 units · batch 128; "
                             "your saved model mine.keras (6 layers), along batch size 1–1,024")
    page = words_of(write_report(paths, tmp_path / "r.md", "md"))
    assert "width 0" not in page and "0–4,096" not in page and "6 hidden layers" not in page
    assert "saved mine.keras" not in page  # the family's own spelling: the report says "your saved model"
    assert ("your saved model mine.keras · along batch size: cpu1 is faster up to 1 sample per batch and cpu from "
            "128 samples per batch" in page)
    rule = make_rule(paths)
    saved = next(k for k in rule.kinds if k.batch_size == 0)
    assert saved.describe() == "your saved model mine.keras (6 layers) · along batch size"
    assert load_rule(json.loads(json.dumps(rule.to_json()))).kinds[1].describe() == saved.describe()
    alone = make_rule([paths[1]])
    assert alone.lines()[0].startswith("your saved model mine.keras (6 layers) · along batch size: ")


# ---------------------------------------------------------------- a sweep along batch size counts samples per batch


UNITS = re.compile(r"\bunits?\b")


def test_a_sweep_along_batch_size_says_samples_per_batch_never_units(tmp_path):
    path = saved_sweep(tmp_path / "saved.csv")
    rule = make_rule([path])
    (kind,) = rule.kinds
    (pair,) = kind.pairs
    reasons = [s.reason for s in pair.segments] + [decide(rule, x).reason for x in (1e3, 3e6, 8e6, 1e12)]
    for said in [*rule.lines(), *reasons]:
        assert not UNITS.search(said), said
    assert "not measured between 1 and 4 samples per batch" in pair.statement
    assert "1–1,024 samples per batch): the rule does not extrapolate" in decide(rule, 1e3).reason
    assert load_rule(rule.to_json()).kinds[0].pairs[0].decide(1e3).reason == decide(rule, 1e3).reason
    older = rule.to_json()  # a rule written before its pairs kept their unit: along batch size, still batch sizes
    for k in older["kinds"]:
        for p in k["pairs"]:
            del p["unit"]
    assert decide(older, 1e3).reason == decide(rule, 1e3).reason
    page = write_report([path], tmp_path / "r.md", "md").read_text()
    assert not UNITS.search(page), UNITS.findall(page)
    text = " ".join(page.split())
    assert "cpu1 is faster up to 1 sample per batch and cpu from 128 samples per batch" in text
    assert "cpu at 16 samples per batch: the floor" in text  # the floor notes count batch sizes too


def test_a_lead_at_every_batch_size_says_batch_size_not_width(tmp_path):
    rows = [SweepRow(lane, "CPU", 0, 5000, 1_000_000 * b, b, ms, ms * 0.97, ms * 1.03, 100, layers=3,
                     family="saved net.keras")
            for lane, factor in (("cpu", 1.0), ("cpu1", 2.0)) for b, ms in zip(BATCHES, (1.0, 2.0, 4.0, 8.0, 30.0))
            for ms in [ms * factor]]
    rule = make_rule([write(tmp_path / "lead.csv", rows, "vm")])
    (line,) = rule.lines()
    assert "use cpu (faster at every measured batch size)" in line and not UNITS.search(line)
