"""A user's own model factory (`--model FILE.py:FUNCTION`): checked before a lane without running it, imported and
called by a lane at each width, counted per width, run, swept and read back; what cannot be used is a sentence."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import textwrap
import types

import pytest
from helpers import cli_in_process

from crossover_lab.core.config import (ConfigError, FactoryModel, FactoryWidth, ModelSpec, RunConfig, SavedModel,
                                       is_factory_kind)
from crossover_lab.core.files.model_factory import MAX_FACTORY_BYTES, check_factory, factory_functions, is_factory_arg

# Dense(width) on 32 inputs, then a softmax over 4 classes: forward FLOPs per sample 2·32·w + 2·w·4 = 72·w,
# parameters 32·w + w + 4·w + 4 = 37·w + 4.
DENSE = textwrap.dedent('''
    import keras


    def build(width):
        inputs = keras.Input(shape=(32,))
        x = keras.layers.Dense(width, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(4, activation="softmax")(x), name=f"dense_{width}")


    def boom(width):
        raise ValueError(f"no model of width {width}\\nsecond line: the one that is said")


    def not_a_model(width):
        return width


    def counts_nothing(width):  # a softmax and no layer the walk counts
        inputs = keras.Input(shape=(width,))
        return keras.Model(inputs, keras.layers.Activation("softmax")(inputs))


    def grows(width):  # its input changes with the width: one factory, two shapes of data
        inputs = keras.Input(shape=(width,))
        return keras.Model(inputs, keras.layers.Dense(4, activation="softmax")(inputs))
''')


def forward_flops(width: int) -> int:
    return 2 * 32 * width + 2 * width * 4


def training_flops(width: int) -> int:
    """Per sample: 3x the forward pass, less the first layer's input gradient (it reads the data), as the MLP's."""
    return 3 * forward_flops(width) - 2 * 32 * width


@pytest.fixture
def factory_file(tmp_path):
    path = tmp_path / "my_models.py"
    path.write_text(DENSE)
    return path


# ---------------------------------------------------------------- without a lane


def test_a_factory_file_is_checked_without_running_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("raise SystemExit('this file ran')\n\ndef build(width, depth=2):\n    pass\n")
    found = check_factory(f"{path}:build")  # parsed, never imported: the SystemExit above never runs
    assert found.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and found.function == "build"
    assert found.path == str(path) and found.size_bytes == path.stat().st_size and found.built == ()
    with pytest.raises(ConfigError, match=r"defines no top-level function make \(its functions: build\)"):
        check_factory(f"{path}:make")
    with pytest.raises(ConfigError, match="name the function that builds the model after the file"):
        check_factory(str(path))
    with pytest.raises(ConfigError, match="'2build' is not a Python function name"):
        check_factory(f"{path}:2build")
    with pytest.raises(ConfigError, match="name the function"):
        check_factory(f"{tmp_path / 'm.txt'}:build")
    with pytest.raises(ConfigError, match="does not exist"):
        check_factory(f"{tmp_path / 'missing.py'}:build")
    (tmp_path / "two.py").write_text("def build(width, depth):\n    pass\n")
    with pytest.raises(ConfigError, match=r"must take one argument, the width: def build\(width\)"):
        check_factory(f"{tmp_path / 'two.py'}:build")
    (tmp_path / "broken.py").write_text("def build(width):\n    return (\n")
    with pytest.raises(ConfigError, match=r"broken.py is not valid Python: .* \(line \d+\)"):
        check_factory(f"{tmp_path / 'broken.py'}:build")
    (tmp_path / "big.py").write_bytes(b"#" * (MAX_FACTORY_BYTES + 1))
    with pytest.raises(ConfigError, match="more than the 1 MiB"):
        check_factory(f"{tmp_path / 'big.py'}:build")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    with pytest.raises(ConfigError, match="zero.py"):  # not a regular file: refused before a byte is read
        check_factory(f"{tmp_path / 'zero.py'}:build")
    assert is_factory_arg("a.py:build") and is_factory_arg("a.py") and not is_factory_arg("m.keras")


def test_the_functions_a_factory_file_offers_are_its_top_level_functions_of_one_argument(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''
        raise SystemExit("this file ran")
        def wide(width, depth=2): pass
        def two(a, b): pass
        async def later(width): pass
        class Builder:
            def method(self): pass
        def _private(width): pass
        def star(*args): pass
        def redefined(width): pass
        def redefined(a, b): pass
        def again(a, b): pass
        def again(width): pass
    '''))
    assert factory_functions(str(path)) == ["wide", "_private", "star", "again"]  # parsed, never run
    (tmp_path / "none.py").write_text("def two(a, b): pass\nx = 1\n")
    with pytest.raises(ConfigError, match="none.py defines no top-level function of one argument"):
        factory_functions(str(tmp_path / "none.py"))
    (tmp_path / "broken.py").write_text("def build(width):\n    return (\n")
    with pytest.raises(ConfigError, match=r"broken.py is not valid Python"):
        factory_functions(str(tmp_path / "broken.py"))
    with pytest.raises(ConfigError, match="does not exist"):
        factory_functions(str(tmp_path / "missing.py"))


def test_a_factory_is_inspected_by_a_lane_of_this_machine_where_there_is_one():
    from crossover_lab.core.config import LaneSpec
    from crossover_lab.core.study.saved import inspecting_lane

    remote, local = LaneSpec.parse("ssh://lab-gpu/gpu0"), LaneSpec.parse("cpu1")
    assert inspecting_lane([remote, local]) == local  # its file is here: nothing to send for it
    assert inspecting_lane([remote]) == remote  # a remote lane inspects the copy it was sent


def _factory(widths: tuple[int, ...]) -> FactoryModel:
    built = tuple(FactoryWidth(w, SavedModel("/x/f.py", "ab" * 32, 10, f"dense_{w}", (32,), 4, 37 * w + 4,
                                             forward_flops(w), "", 2)) for w in widths)
    return FactoryModel("/x/f.py", "ab" * 32, 10, "build", built)


def test_a_factory_spec_has_one_width_and_the_figures_of_that_width():
    factory = _factory((8, 64))
    small, big = (ModelSpec(widths=(w,), family="factory", factory=factory) for w in (8, 64))
    assert small.flops_per_batch(32) == 3 * 32 * 72 * 8 and big.flops_per_batch(32) == 3 * 32 * 72 * 64
    assert big.flops_per_batch(32, forward=True) == 32 * 72 * 64
    assert (small.params, big.params) == (37 * 8 + 4, 37 * 64 + 4)
    assert big.label() == "build(64) (f.py)" and big.kind == "factory build" and is_factory_kind(big.kind)
    config = RunConfig(big)
    assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config  # as a sidecar holds it
    unknown = ModelSpec(widths=(16,), family="factory", factory=factory)
    with pytest.raises(ConfigError, match=r"build\(16\) has not been inspected"):
        unknown.flops_per_batch(32)  # never another width's figures
    with pytest.raises(ConfigError, match=r"2 widths: build\(width\) builds one model"):
        ModelSpec(widths=(8, 8), family="factory", factory=factory)
    with pytest.raises(ConfigError, match="family 'factory'"):
        ModelSpec(widths=(8,), factory=factory)
    assert factory.with_built([FactoryWidth(16, factory.built[0].model)]).at(16) is not None


def test_options_of_crossovers_own_models_are_refused_beside_a_factory(factory_file, capsys):
    model = f"{factory_file}:build"
    out = cli_in_process(capsys, "run", "--model", model, "--family", "cnn")
    assert out.returncode == 2 and "--family describe Crossover's own models" in out.stderr
    out = cli_in_process(capsys, "run", "--model", model, "--widths", "16,32")
    assert out.returncode == 2 and "build(width) takes one width" in out.stderr
    out = cli_in_process(capsys, "sweep", "--model", model, "--widths", "8,64", "--layers", "2", "--lanes", "cpu1")
    assert out.returncode == 2 and "builds the whole model from its width" in out.stderr
    out = cli_in_process(capsys, "run", "--model", f"{factory_file}:nothing")
    assert out.returncode == 2 and "defines no top-level function nothing" in out.stderr


def test_the_users_function_is_called_in_the_lane_and_what_it_raises_is_a_sentence(tmp_path):
    """core/lane/factory.py's calls, with a stand-in for Keras, on a file that imports none (this process imports
    no framework)."""
    from crossover_lab.core.lane import factory as lane_factory

    class Model:
        pass

    keras = types.SimpleNamespace(Model=Model)
    path = tmp_path / "plain.py"
    path.write_text(textwrap.dedent('''
        def boom(width):
            raise ValueError(f"no model of width {width}\\nsecond line: the one that is said")


        def not_a_model(width):
            return width
    '''))

    def made(function: str) -> FactoryModel:
        return check_factory(f"{path}:{function}")

    with pytest.raises(ConfigError, match=r"^boom\(16\) in plain.py raised ValueError: second line: the one "
                                          r"that is said$"):
        lane_factory._call(keras, made("boom"), 16)
    with pytest.raises(ConfigError, match=r"^not_a_model\(16\) in plain.py returned int, not a keras.Model$"):
        lane_factory._call(keras, made("not_a_model"), 16)
    (tmp_path / "fails.py").write_text("import no_such_module_here\n\ndef build(width):\n    pass\n")
    with pytest.raises(ConfigError, match="importing fails.py raised ModuleNotFoundError: No module named "
                                          "'no_such_module_here'"):
        lane_factory._call(keras, check_factory(f"{tmp_path / 'fails.py'}:build"), 16)
    checked = made("boom")
    path.write_text(path.read_text() + "\n# changed\n")
    with pytest.raises(ConfigError, match="plain.py changed since it was checked"):
        lane_factory._call(keras, checked, 16)  # refused before the file is imported


# ---------------------------------------------------------------- on real lanes


@pytest.mark.lanes
def test_a_factory_runs_at_its_width_with_that_widths_figures(factory_file, tmp_path, capsys, cli_lanes):
    run_csv = tmp_path / "run.csv"
    out = cli_in_process(capsys, "run", "--model", f"{factory_file}:build", "--widths", "16", "--lanes", "cpu1", "--samples", "256",
              "--batch-size", "32", "--data", "synthetic", "--csv", str(run_csv))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "cpu1 imports it (your code runs there) and builds width 16" in out.stderr
    assert f"build(16): dense_16, input 32, 4 classes, {37 * 16 + 4:,} parameters" in out.stderr
    assert f"model build(16) (my_models.py), {37 * 16 + 4} parameters" in out.stderr
    with open(run_csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["family"] for r in rows} == {"factory build"} and {r["widths"] for r in rows} == {"16"}
    model = json.loads(run_csv.with_suffix(".json").read_text())["runs"][0]["config"]["model"]
    (built,) = model["factory"]["built"]
    assert built["width"] == 16 and built["model"]["forward_flops"] == forward_flops(16) == 1152
    assert model["factory"]["sha256"] == hashlib.sha256(factory_file.read_bytes()).hexdigest()
    # A ramp: every width built and counted before the run, each segment timed with its own width's FLOPs.
    out = cli_in_process(capsys, "run", "--model", f"{factory_file}:build", "--ramp", "8,64", "--lanes", "cpu1", "--samples", "512",
              "--batch-size", "32", "--steady-steps", "5", "--seconds-per-point", "0.5", "--data", "synthetic")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "builds widths 8, 64" in out.stderr and "build(128)" not in out.stderr  # the ramp's widths only
    for width, mflop in ((8, "0.0389"), (64, "0.311")):  # 32 x (3 x 72·w - 64·w) FLOPs per training step
        assert f"{32 * training_flops(width) / 1e6:.3g}" == mflop
        assert re.search(rf"^cpu1\s+{width}\s+32\s+{mflop}\s", out.stdout, re.M), out.stdout


@pytest.mark.lanes
def test_a_factory_sweeps_its_widths_each_counted_at_its_own_width_and_analyze_reads_it_back(factory_file, tmp_path, capsys, cli_lanes):
    sweep_csv = tmp_path / "sweep.csv"
    out = cli_in_process(capsys, "sweep", "--model", f"{factory_file}:build", "--widths", "8,64", "--lanes", "cpu1,cpu",
              "--samples", "512", "--batch-size", "32", "--steady-steps", "5", "--seconds-per-point", "0.5",
              "--no-calibrate", "--data", "synthetic", "--csv", str(sweep_csv))
    assert out.returncode == 0, out.stderr[-2000:]
    with open(sweep_csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and {r["family"] for r in rows} == {"factory build"}
    for row in rows:  # a training step counts 3x the forward pass less the first layer's input gradient
        width = int(row["width"])
        assert int(row["flops_per_batch"]) == 32 * training_flops(width), row
        assert int(row["params"]) == 37 * width + 4 and row["status"] == "completed"
    assert {int(r["width"]) for r in rows} == {8, 64}
    analyzed = cli_in_process(capsys, "analyze", str(sweep_csv))
    assert analyzed.returncode == 0, analyzed.stderr[-2000:]
    for lane in ("cpu", "cpu1"):  # each lane's cost model, fitted over its two widths as read back
        assert re.search(rf"^{lane}\s+[\d.]+\s+\S+\s+2\s", analyzed.stdout, re.M), analyzed.stdout


@pytest.mark.lanes
def test_what_the_users_function_does_wrong_is_a_sentence_never_a_traceback(factory_file, capsys, cli_lanes):
    out = cli_in_process(capsys, "run", "--model", f"{factory_file}:boom", "--widths", "16", "--lanes", "cpu1", "--data", "synthetic")
    assert out.returncode == 2 and "boom(16) in my_models.py raised ValueError: second line" in out.stderr
    assert "Traceback" not in out.stderr
    out = cli_in_process(capsys, "sweep", "--model", f"{factory_file}:grows", "--widths", "8,16", "--lanes", "cpu1",
              "--data", "synthetic")
    assert out.returncode == 2 and "every width of one factory must take the same input" in out.stderr
    assert "grows(8) takes 8 inputs and 4 classes, grows(16) 16 inputs and 4 classes" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.lanes
def test_a_lane_whose_factory_raised_inspects_the_next_width_as_if_nothing_had_happened(factory_file):
    from crossover_lab.core.config import LaneSpec
    from crossover_lab.core.engine.pool import LanePool
    from crossover_lab.core.study.saved import inspect_factory

    pool, lane = LanePool(), LaneSpec.parse("cpu1")
    try:
        with pytest.raises(ConfigError, match=r"boom\(8\) in my_models.py raised ValueError"):
            inspect_factory(pool, lane, check_factory(f"{factory_file}:boom"), [8])
        pid = pool.get(lane).pid
        with pytest.raises(ConfigError, match=r"not_a_model\(8\) in my_models.py returned int, not a keras.Model"):
            inspect_factory(pool, lane, check_factory(f"{factory_file}:not_a_model"), [8])
        with pytest.raises(ConfigError, match=r"counts_nothing\(8\) in my_models.py: the walk of its layers counts "
                                              "no FLOPs"):
            inspect_factory(pool, lane, check_factory(f"{factory_file}:counts_nothing"), [8])
        found = inspect_factory(pool, lane, check_factory(f"{factory_file}:build"), [8, 64])
        assert [(b.width, b.model.forward_flops, b.model.params) for b in found.built] == \
            [(8, forward_flops(8), 37 * 8 + 4), (64, forward_flops(64), 37 * 64 + 4)]
        assert pid is not None and pool.get(lane).pid == pid  # the same lane process answered all three
    finally:
        pool.close()


def test_a_refinement_inspects_each_width_it_adds_before_it_measures_it(monkeypatch):
    """The widths refinement adds are built and counted by a lane first: each point it times carries the figures
    of its own width, never a neighbour's."""
    from helpers import ReadyPool, fake_refined_points

    from crossover_lab.core.analysis.refinement import RefineTarget
    from crossover_lab.core.config import LaneSpec, TrainSpec
    from crossover_lab.core.study import refined_sweep
    from crossover_lab.core.study.sweep import SweepSpec

    def ms(width: int) -> tuple[float, float]:  # cpu leads below about 1,000 units, gpu0 above
        return 1 + width / 100, 5 + width / 1000

    coarse = (16, 256, 2048)
    base = RunConfig(ModelSpec(widths=(16,), family="factory", factory=_factory(coarse)), TrainSpec(batch_size=64))
    spec = SweepSpec(widths=coarse, layers=1, base=base, calibrate=False)
    lanes = [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")]
    inspected: list[int] = []

    def fake_inspect(pool, lane, factory, widths, cancel=None):
        assert lane == lanes[0]
        inspected.extend(widths)
        return factory.with_built(_factory(tuple(widths)).built)

    configs = fake_refined_points(monkeypatch, ms)  # each point's FLOPs: it raises for a width no lane inspected
    monkeypatch.setattr(refined_sweep, "inspect_factory", fake_inspect)
    result = refined_sweep.run_refined_sweep(ReadyPool(), lanes, spec, RefineTarget(0.25, 60.0))
    timed = [(c.model.widths[0], c.flops_per_batch) for c in configs]
    added = [w for w, _ in timed if w not in coarse]
    assert added and sorted(inspected) == sorted(set(added)), (inspected, timed)  # the coarse widths were known
    assert all(flops == 3 * 64 * forward_flops(w) for w, flops in timed), timed
    assert result.refinement is not None and result.refinement.crossings


def test_a_factorys_reproduce_command_and_picture_title_name_its_file_function_and_widths():
    from crossover_lab.core.files.sweeps.rows import SweepRow
    from crossover_lab.core.report.reproduce import reproduce_command
    from crossover_lab.core.words.sweep import picture_title

    config = RunConfig(ModelSpec(widths=(64,), family="factory", factory=_factory((8, 64))))
    meta = {"runs": [{"config": json.loads(json.dumps(config.to_dict())), "lanes": {"cpu": {}, "cpu1": {}}}],
            "sweep": {"widths": [8, 64], "layers": 1}}
    sweep = reproduce_command("/x/s.csv", meta, "sweep")
    assert "--widths 8,64 --model /x/f.py:build" in sweep and "--layers" not in sweep, sweep
    run = reproduce_command("/x/r.csv", meta, "run")
    assert "--model /x/f.py:build --widths 64" in run and "--family" not in run, run
    rows = [SweepRow("cpu", "CPU", w, 37 * w + 4, 3 * 32 * forward_flops(w), 32, 1.0, 0.9, 1.1, 30, layers=1,
                     family="factory build") for w in (8, 64)]
    assert picture_title(rows, {}).startswith("your model build(width), width 8–64 · batch 32")


@pytest.mark.lanes
def test_the_anatomy_of_a_factorys_model_dissects_it_at_its_width(factory_file, capsys, cli_lanes):
    out = cli_in_process(capsys, "anatomy", "--model", f"{factory_file}:build", "--widths", "16", "--layers", "2")
    assert out.returncode == 2 and "build(width) builds the whole model from its width" in out.stderr
    out = cli_in_process(capsys, "anatomy", "--model", f"{factory_file}:build", "--widths", "16", "--lanes", "cpu1", "--samples", "512",
              "--batch-size", "32", "--data", "synthetic", "--seconds-per-rung", "0.1", "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    (point,) = json.loads(out.stdout)["points"]
    assert point["widths"] == [16] and point["lane"] == "cpu1", point
    assert "builds width 16" in out.stderr and "build(16) (my_models.py)" in out.stderr


def test_factory_code_deeper_than_the_parser_follows_is_a_sentence_not_a_traceback(tmp_path):
    """Issue 35 #8: 300,000 terms in one expression (RecursionError) or 50,000 nested lambdas (MemoryError) crashed
    the factory's pre-check with a traceback."""
    from crossover_lab.core.config import ConfigError
    from crossover_lab.core.files.model_factory import check_factory

    terms = tmp_path / "terms.py"
    terms.write_text("def build(width):\n    return " + "+".join(["1"] * 300_000) + "\n")
    lambdas = tmp_path / "lambdas.py"
    lambdas.write_text("def build(width):\n    return " + "lambda: " * 50_000 + "1\n")
    for path in (terms, lambdas):
        with pytest.raises(ConfigError, match="nests its code deeper than Python's parser can follow"):
            check_factory(f"{path}:build")
