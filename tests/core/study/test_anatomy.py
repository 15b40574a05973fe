"""The anatomy of a step without a lane: the parts' arithmetic, the words, the wire, the CLI's JSON shape, the ladder."""
from __future__ import annotations

import json
import math

import pytest
from helpers import point, rung

from crossover_lab.core.records import RunSettings
from crossover_lab.core.cli import main as cli, anatomy as cli_anatomy
from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.analysis.anatomy import (PARTS, RUNGS, STACK, floor_crossovers, part_between,
                                                 parts_of, point_from_json, stacked, window_plan)
from crossover_lab.core.study.anatomy import AnatomyOutcome, anatomy_configs, anatomy_key
from crossover_lab.core.words.anatomy import (clock_note, floor_crossover_lines, floor_sentence, fmt_part,
                                              why_sentence)
from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.study.ladder import LadderRank, ladder_lines, ladder_settings, rank_ladder
from crossover_lab.core.analysis.anatomy import AnatomyMeasured
from crossover_lab.core.messages import AnatomyJob, from_wire, to_wire
from crossover_lab.core.study.sweep import SweepResult, SweepSpec
from crossover_lab.core.files.sweeps.rows import SweepRow


# ---------------------------------------------------------------- the parts of a step


def test_parts_are_the_differences_of_the_rungs_and_telescope_to_fit():
    parts = point().parts()
    assert parts["fit_and_input"].ms == pytest.approx(1.07)
    assert parts["synchronisation"].ms == pytest.approx(0.2)
    assert parts["host_dispatch"].ms == pytest.approx(0.05)
    assert parts["device_work"].ms == pytest.approx(0.05)
    assert parts["pipelining_gain"].ms == pytest.approx(0.47)
    assert sum(parts[name].ms for name in STACK) == pytest.approx(1.37)
    assert set(parts) == set(PARTS)


def test_a_difference_within_the_spread_is_about_zero_never_negative():
    within = part_between(rung(1.00, 0.1), rung(0.95, 0.02))
    assert within.ms == 0.0 and within.within_spread and within.raw_ms == pytest.approx(0.05)
    clear = part_between(rung(1.00, 0.01), rung(0.5, 0.01))
    assert clear.ms == pytest.approx(0.5) and not clear.within_spread
    inverted = part_between(rung(0.5, 0.01), rung(1.0, 0.01))  # the rung with less to do took longer
    assert inverted.ms == 0.0 and inverted.within_spread and inverted.raw_ms == pytest.approx(-0.5)
    parts, notes = parts_of({"fit": rung(0.5, 0.01), "fit_pipelined": rung(1.0, 0.01)})
    assert parts["pipelining_gain"].ms == 0.0
    assert "fit_pipelined took 0.5 ms longer than fit" in notes["pipelining_gain"]
    assert fmt_part(parts["pipelining_gain"]) == "≈0"


def test_a_part_needing_a_missing_rung_is_null_with_the_reason():
    p = point("torch:cpu", "CPU (x, 16 threads)", device_loop=None)
    parts, notes = parts_of(p.rungs)
    assert parts["host_dispatch"] is None and parts["device_work"] is None
    assert parts["synchronisation"] is not None
    assert notes["device_work"] == "needs device_loop, which was not measured"
    data = p.to_json()
    assert data["rungs"]["device_loop"] is None
    assert data["reasons"]["device_loop"] == "PyTorch has no on-device loop on a CPU"
    assert data["parts"]["device_work"] is None and "part device_work" in data["reasons"]


def test_timing_cost_is_fit_over_fit_pipelined():
    assert point().timing_cost == pytest.approx(1.37 / 0.9)
    assert math.isnan(point(fit_pipelined=None).timing_cost)


def test_the_window_plan_keeps_a_median_for_slow_models_and_bounds_fast_ones():
    assert window_plan(0.1, 0.2) == (2, 2)  # a 100 ms step: the minimum of steps and windows
    k, windows = window_plan(0.0002, 0.2)
    assert k == 64 and 2 <= windows <= 20
    assert window_plan(float("nan"), 0.2)[0] >= 2
    # K is a power of two, the same for step times a little apart: one on-device loop program, compiled once.
    ks = {window_plan(step, 0.2)[0] for step in (0.00095, 0.001, 0.0011, 0.0012)}
    assert ks == {32}
    assert all(window_plan(step, 0.2)[0] in (2, 4, 8, 16, 32, 64) for step in (1e-5, 3e-4, 7e-4, 0.003, 0.009, 1.0))


# ---------------------------------------------------------------- words


def test_the_why_sentence_reads_as_the_issue_asks():
    text = why_sentence(point())
    assert text == ("On gpu0, 1.37 ms per step: 0.05 ms is the GPU working; 1.12 ms is Keras fit and dispatch; "
                    "0.2 ms is waiting for the result.")
    floor = floor_sentence([point(), point("cpu", "CPU (x, 16 threads)", device_loop=0.7)])
    assert floor == "With an on-device loop this model would take 0.05 ms per step on gpu0 against 0.7 ms on cpu."


def test_the_bar_never_adds_up_past_the_synced_step():
    noisy = point("cpu1", "CPU (x, 1 thread)", fit=113, fit_pipelined=123, step_loop=121, step_loop_pipelined=116,
                  device_loop=121)  # a big model on a busy core: the floor's median came out above fit's
    assert stacked(noisy) == [("device_work", 113)]
    assert why_sentence(noisy) == ("On cpu1, 113 ms per step: all of it is the CPU working (an on-device loop takes "
                                   "121 ms per step, within the spread).")
    segments = stacked(point(step_loop=1.0, step_loop_pipelined=1.0))  # two parts ≈0: the rest is named as such
    assert [name for name, _ in segments] == ["device_work", "host_dispatch", "fit_and_input"]
    assert sum(ms for _, ms in segments) == pytest.approx(1.37)
    within = stacked(point(fit=1.0, step_loop=0.992))
    assert within[-1][0] == "rest" and sum(ms for _, ms in within) == pytest.approx(1.0)


def test_the_verdict_names_its_clock_and_a_disagreeing_one():
    a, b = point("gpu0", fit_pipelined=0.5), point("cpu", "CPU (x)", fit_pipelined=0.8)
    assert clock_note({"gpu0": 1.37, "cpu": 1.0}, {"gpu0": a, "cpu": b}) == (
        "by the synced clock (each step waited for); the pipelined clock disagrees: gpu0 is faster when steps are "
        "not waited for (0.5 against 0.8 ms per step)")
    assert clock_note({"gpu0": 0.9, "cpu": 1.0}, {"gpu0": a, "cpu": b}).endswith("the pipelined clock agrees")
    assert "not measured for this model (press Why)" in clock_note({"gpu0": 0.9, "cpu": 1.0}, {})


def test_the_floor_crossover_comes_from_the_floor_column():
    points = [SweepPoint("cpu", w, w * 1e6, ms, floor_ms=floor) for w, ms, floor in ((16, 0.5, 0.1), (256, 2, 1.0))]
    points += [SweepPoint("gpu0", w, w * 1e6, ms, floor_ms=floor) for w, ms, floor in ((16, 1.4, 0.3), (256, 1.5, 0.4))]
    (found,) = floor_crossovers(points)
    assert found.faster_above == "gpu0" and 16 < found.width < 256
    (line,) = floor_crossover_lines({"all": points})
    assert line.startswith("with an on-device loop gpu0 would win above about ") and line.endswith(", cpu below")
    assert floor_crossover_lines({"all": [SweepPoint("cpu", 16, 1e6, 0.5)]}) == []
    # Along batch size the floors' x's are batch sizes, and the sentence says so.
    batches = [SweepPoint(lane, b, b * 1e6, ms, floor_ms=floor, axis="batch")
               for lane, scale in (("cpu", 1.0), ("cpu1", 3.0)) for b, ms, floor in ((8, 1.0, 0.2 * scale),
                                                                                      (128, 2.0, 0.9 * scale))]
    (line,) = floor_crossover_lines({"all": batches})
    assert line == ("with an on-device loop cpu would be faster wherever they differ (8 to 128 samples per batch): "
                    "the floors do not cross")


def test_a_sweep_row_keeps_its_floor_and_older_files_read_without_it():
    row = SweepRow("cpu", "CPU", 16, 100, 10**6, 128, 0.5, 0.4, 0.6, 60, floor_ms=0.125)
    header = list(row.__dataclass_fields__)
    back = SweepRow.from_csv_row(dict(zip(header, row.to_csv_row())))
    assert back.floor_ms == 0.125 and back.point().floor_ms == 0.125
    old = SweepRow.from_csv_row({"lane": "cpu", "width": "16", "flops_per_batch": "1000000", "median_ms": "0.5"})
    assert math.isnan(old.floor_ms)


# ---------------------------------------------------------------- messages and configurations


def test_anatomy_messages_cross_the_wire():
    job = AnatomyJob(RunConfig(), ("device_loop",), 0.2, True)
    assert from_wire(json.loads(json.dumps(to_wire(job)))) == job
    answer = AnatomyMeasured(point(device_loop=None))
    back = from_wire(json.loads(json.dumps(to_wire(answer))))
    assert back.point.to_json() == answer.point.to_json() and back.point.rung("fit") == rung(1.37, 0.01)


def test_a_point_reads_back_from_its_json():
    p = point("torch:gpu0", device_loop=None)
    back = point_from_json(json.loads(json.dumps(cli_anatomy.as_json([AnatomyOutcome("x", RunConfig(), p)])["points"][0])))
    assert back.rungs == p.rungs and back.reasons == p.reasons and back.widths == p.widths
    assert back.parts() == p.parts() and back.window_steps == 8


def test_anatomy_models_are_the_widths_or_the_model_itself():
    base = RunConfig(ModelSpec((750, 150)), TrainSpec(batch_size=32))
    assert [c.model.widths for c in anatomy_configs(base, (16, 2048), None)] == [(16, 16), (2048, 2048)]
    assert [c.model.widths for c in anatomy_configs(base, (16,), 1)] == [(16,)]
    assert anatomy_configs(base, None, None) == [base]
    with pytest.raises(ConfigError, match="--layers applies to --widths"):
        anatomy_configs(base, None, 3)
    assert anatomy_key(base.replace(max_steps=65, epochs=3)) == anatomy_key(base)
    assert anatomy_key(base.replace(batch_size=64)) != anatomy_key(base)


# ---------------------------------------------------------------- the CLI's shape, with the lanes stood in for


def test_anatomy_json_has_the_documented_shape(monkeypatch, capsys):
    def fake(pool, lanes, configs, **kwargs):
        out = [AnatomyOutcome(spec.name, config, point(spec.name, device_loop=None if spec.backend == "torch"
                                                       else 0.05)) for spec in lanes for config in configs]
        for outcome in out:
            kwargs["on_outcome"](outcome)
        return out

    monkeypatch.setattr(cli_anatomy, "measure_anatomies", fake)
    monkeypatch.setattr(cli_anatomy, "lanes_can_run", lambda lanes, pool: True)
    code = cli.main(["anatomy", "--widths", "16,2048", "--lanes", "cpu1,torch:cpu1", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["points"]) == 4 and data["failures"] == []
    first = data["points"][0]
    assert {"lane", "width", "batch_size", "backend", "device", "rungs", "parts", "reasons"} <= set(first)
    assert list(first["rungs"]) == list(RUNGS)
    assert set(first["rungs"]["fit"]) >= {"median_ms", "p10_ms", "p90_ms"}
    assert set(first["parts"]) == set(PARTS) and first["timing_cost"] == pytest.approx(1.37 / 0.9)
    torch = next(p for p in data["points"] if p["lane"] == "torch:cpu1")
    assert torch["rungs"]["device_loop"] is None and torch["reasons"]["device_loop"]
    assert set(data["clocks"]) == {"synced clock", "pipelined clock"}


def test_anatomy_table_and_a_failed_point_exit_1(monkeypatch, capsys):
    def fake(pool, lanes, configs, **kwargs):
        return [AnatomyOutcome("cpu1", configs[0], point("cpu1", "CPU (x, 1 thread)")),
                AnatomyOutcome("jax:cpu1", configs[0], None, "out of memory on jax:cpu1: lower the widths")]

    monkeypatch.setattr(cli_anatomy, "measure_anatomies", fake)
    monkeypatch.setattr(cli_anatomy, "lanes_can_run", lambda lanes, pool: True)
    assert cli.main(["anatomy", "--widths", "64", "--lanes", "cpu1,jax:cpu1"]) == 1
    out = capsys.readouterr().out
    assert "step_loop_pipelined" in out and "host_dispatch" in out and "1.52x" in out
    assert "jax:cpu1 784-64-64-10 failed: out of memory on jax:cpu1" in out
    assert "On cpu1, 1.37 ms per step: 0.05 ms is the CPU working" in out


@pytest.mark.parametrize("args, words", [
    (["--csv", "x.csv"], "anatomy writes no CSV"),
    (["--layers", "3"], "--layers applies to --widths"),
    (["--seconds-per-rung", "0"], "--seconds-per-rung 0"),
])
def test_anatomy_bad_input_exits_2(args, words, capsys):
    assert cli.main(["anatomy", "--lanes", "cpu1", *args]) == 2
    assert words in capsys.readouterr().err


# ---------------------------------------------------------------- the knob ladder


def test_the_ladder_lists_what_cannot_apply_with_the_reason():
    spec = SweepSpec(widths=(16, 256))
    settings = {s.label: s for s in ladder_settings(spec, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")],
                                                    installed=lambda b: b != "torch")}
    assert {"base", "steps_per_execution=8", "steps_per_execution=64", "feeding=device", "jit=on", "jit=off",
            "mixed_precision=on", "backend=jax", "backend=torch"} == set(settings)
    assert "mixed precision is for GPU lanes" in settings["mixed_precision=on"].reason
    assert "needs the jax or torch backend" in settings["feeding=device"].reason
    assert settings["backend=torch"].reason == "PyTorch is not installed: pip install -e '.[torch]'"
    assert not settings["backend=jax"].reason
    assert [lane.name for lane in settings["backend=jax"].lanes] == ["jax:cpu", "jax:cpu1"]
    assert settings["steps_per_execution=8"].spec.base.train.steps_per_execution == 8
    gpu = {s.label: s for s in ladder_settings(spec, [LaneSpec.parse("torch:gpu0")], installed=lambda b: True)}
    assert "one step per execution" in gpu["steps_per_execution=8"].reason and not gpu["mixed_precision=on"].reason


def test_the_ladder_ranks_by_the_slower_lane_at_the_smallest_width():
    def result(variant: str, gpu_ms: float) -> SweepResult:
        rows = [SweepRow(lane, "", w, 1, w * 10**6, 128, ms, ms, ms, 60, variant=variant)
                for lane, w, ms in (("cpu", 16, 0.5), ("cpu", 1024, 8.0), ("gpu0", 16, gpu_ms), ("gpu0", 1024, 1.6))]
        return SweepResult(SweepSpec(widths=(16, 1024), variant=variant), rows=rows)

    ranks = rank_ladder([result("base", 1.4), result("steps_per_execution=64", 0.3)])
    assert [r.label for r in ranks] == ["steps_per_execution=64", "base"]
    assert ranks[0].slower_lane == "cpu" and ranks[0].slower_ms == 0.5 and ranks[1].slower_lane == "gpu0"
    assert "gpu0 faster above about" in ranks[1].crossover
    lines = ladder_lines([LadderRank("base", 16, "gpu0", 1.4, "x")], [])
    assert lines == ["1. base: slower lane gpu0 1.4 ms per step at width 16; x"]


def test_the_ladder_along_batch_size_speaks_in_batch_sizes():
    """A sweep of one width over several batch sizes (or a saved model) ranks its knobs at the smallest batch size,
    and says its crossover in samples per batch, never as a width."""
    from crossover_lab.core.config import LaneSpec
    from crossover_lab.core.study.ladder import ladder_heading

    def result(variant: str, gpu_ms: float) -> SweepResult:
        rows = [SweepRow(lane, "", 256, 1, b * 10**6, b, ms, ms, ms, 60, variant=variant)
                for lane, b, ms in (("cpu", 8, 0.5), ("cpu", 512, 8.0), ("gpu0", 8, gpu_ms), ("gpu0", 512, 1.6))]
        return SweepResult(SweepSpec(widths=(256,), batch_sizes=(8, 512), variant=variant), rows=rows)

    ranks = rank_ladder([result("base", 1.4), result("jit=on", 0.3)])
    assert all(r.along_batch and r.width == 8 for r in ranks)
    assert "gpu0 faster above about" in ranks[1].crossover and "samples per batch" in ranks[1].crossover
    assert ladder_lines(ranks, [])[0] == f"1. jit=on: slower lane cpu 0.5 ms per step at batch size 8; {ranks[0].crossover}"
    heading = ladder_heading([LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")], ranks)
    assert heading.endswith("at the smallest batch size):")
    assert ladder_heading([LaneSpec.parse("cpu")]).endswith("smallest width):")


def test_a_floor_above_its_step_is_explained_not_shown_bare():
    from crossover_lab.core.words.anatomy import floor_notes

    within = SweepPoint("cpu", 2048, 1e9, 40.6, 38.0, 45.0, floor_ms=42.0)
    beyond = SweepPoint("cpu", 4096, 4e9, 40.6, 38.0, 45.0, floor_ms=78.5)
    fine = SweepPoint("cpu", 16, 1e6, 1.0, 0.9, 1.1, floor_ms=0.2)
    within_note, beyond_note = floor_notes({"all": [within, beyond, fine]})
    assert within_note.startswith("cpu at 2,048 units: the floor (42 ms) came out above the step (40.6 ms)")
    assert "within the step's spread" in within_note
    assert "beyond the step's spread" in beyond_note and "quiet machine" in beyond_note
    assert floor_notes({"all": [fine]}) == []


def test_a_rung_slower_than_the_one_above_it_gets_the_same_note_everywhere():
    """The pipelined tick beyond the synced bar, within the spread: said so; beyond the spread: the part's note;
    a busy machine: said so. The CLI and the Why tab both print anatomy_notes."""
    from dataclasses import replace
    from crossover_lab.core.words.anatomy import anatomy_notes
    tick_within = replace(point(), rungs={**point().rungs, "fit": rung(1.0, 0.05),
                                              "fit_pipelined": rung(1.03, 0.05)})
    (note,) = anatomy_notes(tick_within)
    assert "pipelined tick (fit_pipelined) came out beyond the synced bar (fit) by 0.03 ms" in note
    assert "within their spread" in note
    beyond = point(step_loop=0.3, step_loop_pipelined=0.5)  # the pipelined loop 0.2 ms slower, spread 0.01
    (note,) = anatomy_notes(beyond)
    assert note.startswith("step_loop_pipelined took 0.2 ms longer than step_loop, beyond their spread")
    assert anatomy_notes(point()) == []
    busy = replace(point(), settings=RunSettings(others_cpu=0.42, load_avg=2.5))
    (note,) = anatomy_notes(busy)
    assert note.startswith("other work used 42% of gpu0's cores while it was measured (load 2.5)")
    assert anatomy_notes(replace(point(), settings=RunSettings())) == []


# ---------------------------------------------------------------- the anatomy of a served call (predict)


def call_point(**medians):
    """A served call's anatomy with known rungs (ms): predict_on_batch 1.0, call_synced 0.6, …; None: not measured."""
    from crossover_lab.core.analysis.anatomy import AnatomyPoint

    times = {"predict_on_batch": 1.0, "call_synced": 0.6, "call_resident": 0.5, "call_pipelined": 0.3,
             "device_loop": 0.1}
    times.update(medians)
    rungs = {name: None if ms is None else rung(ms, 0.01) for name, ms in times.items()}
    reasons = {name: "not here" for name, ms in times.items() if ms is None}
    return AnatomyPoint("cpu", "CPU (2 threads)", "jax", (64, 64), 1, 10**6, rungs, reasons, window_steps=8,
                        task="predict")


def test_a_calls_parts_are_the_differences_of_its_rungs_and_telescope_to_predict_on_batch():
    from crossover_lab.core.analysis.anatomy import PREDICT_LADDER

    p = call_point()
    parts = p.parts()
    assert set(parts) == set(PREDICT_LADDER.parts) and "pipelining_gain" not in parts
    assert parts["predict_machinery"].ms == pytest.approx(0.4)
    assert parts["input_transfer"].ms == pytest.approx(0.1)
    assert parts["answer_back"].ms == pytest.approx(0.2)
    assert parts["host_dispatch"].ms == pytest.approx(0.2)
    assert parts["device_work"].ms == pytest.approx(0.1)
    assert sum(ms for _, ms in stacked(p)) == pytest.approx(1.0)  # the bar is the call, no more
    assert [name for name, _ in stacked(p)] == list(PREDICT_LADDER.stack)
    assert math.isnan(p.timing_cost)  # a call has no pipelined clock


def test_a_calls_why_sentence_speaks_per_call_and_reads_back_from_json():
    p = call_point()
    text = why_sentence(p)
    assert text.startswith("On cpu, 1 ms per call: 0.1 ms is the CPU working; 0.6 ms is Keras predict and dispatch")
    assert "0.1 ms is taking the input in (on a GPU, its copy there)" in text and "0.2 ms is waiting for the answer" in text
    back = point_from_json(json.loads(json.dumps(p.to_json())))
    assert back.task == "predict" and back.rungs == p.rungs and back.parts() == p.parts()
    train = point_from_json(json.loads(json.dumps({k: v for k, v in point().to_json().items() if k != "task"})))
    assert train.task == "train" and train.rungs == point().rungs  # a file from before calls had anatomies


def test_the_anatomy_table_of_calls_names_the_call_ladder_and_its_one_clock():
    import io

    out = io.StringIO()
    cli_anatomy.print_anatomy([AnatomyOutcome("cpu", RunConfig(), call_point())], out)
    text = out.getvalue()
    assert "ms per call, median" in text and "predict_on_batch" in text and "answer_back" in text
    assert "fit_pipelined" not in text and "timing cost" not in text
    assert "per-call clock:" in text and "pipelined clock:" not in text


def test_a_factorys_anatomy_is_keyed_by_its_file_function_and_width_not_by_the_widths_counted_so_far():
    import dataclasses

    from crossover_lab.core.config import FACTORY, FactoryModel, FactoryWidth, ModelSpec, RunConfig, SavedModel

    factory = FactoryModel("/m/m.py", "ab" * 32, 10, "build")
    model = lambda w: SavedModel("/m/m.py", "ab" * 32, 10, f"d{w}", (784,), 10, 37 * w, 72 * w, "", 2)  # noqa: E731
    counted = factory.with_built([FactoryWidth(64, model(64))])
    config = RunConfig(ModelSpec(widths=(64,), family=FACTORY, factory=factory))
    at_64 = RunConfig(ModelSpec(widths=(64,), family=FACTORY, factory=counted))
    more = RunConfig(ModelSpec(widths=(64,), family=FACTORY, factory=counted.with_built([FactoryWidth(8, model(8))])))
    assert anatomy_key(config) == anatomy_key(at_64) == anatomy_key(more)
    assert anatomy_key(RunConfig(ModelSpec(widths=(8,), family=FACTORY, factory=counted))) != anatomy_key(at_64)
    other = dataclasses.replace(factory, sha256="cd" * 32)  # the file changed: another model
    assert anatomy_key(RunConfig(ModelSpec(widths=(64,), family=FACTORY, factory=other))) != anatomy_key(at_64)
