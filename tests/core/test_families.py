"""Model families: their settings, names, parameter and FLOPs counts, and each one trained on real lanes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.engine.pool import run_comparison

FAMILY_MODELS = [ModelSpec((32, 64), family="cnn"), ModelSpec((64, 64), family="rnn"),
                 ModelSpec((32,), family="rnn", cell="gru"), ModelSpec((64, 64), family="transformer", heads=4)]


def test_each_family_is_named_and_checked_in_its_own_words():
    assert ModelSpec((128,)).label() == "784-128-10"  # the MLP's name and figures are as before
    assert ModelSpec((128,)).flops_per_batch(128) == 52_363_264
    assert [m.label() for m in FAMILY_MODELS] == ["cnn 32-64", "lstm 64-64", "gru 32", "transformer 2×64 (4 heads)"]
    with pytest.raises(ConfigError, match="share one d_model"):
        ModelSpec((64, 128), family="transformer")
    with pytest.raises(ConfigError, match="heads that divides d_model"):
        ModelSpec((100,), family="transformer", heads=3)
    with pytest.raises(ConfigError, match="a cnn takes 1-6"):
        ModelSpec((8,) * 7, family="cnn")
    with pytest.raises(ConfigError, match="recurrent cell 'rnn'"):
        ModelSpec((8,), family="rnn", cell="rnn")
    with pytest.raises(ConfigError, match="model family 'resnet'"):
        ModelSpec((8,), family="resnet")
    # A saved configuration without a family is the MLP it always was.
    assert RunConfig.from_dict({"model": {"widths": [64]}, "train": {}}).model.family == "mlp"
    # FLOPs grow with the width on the slider, in every family.
    for m in FAMILY_MODELS:
        wider = ModelSpec(tuple(2 * w for w in m.widths), family=m.family, cell=m.cell, heads=m.heads)
        assert wider.flops_per_batch(32) > 2 * m.flops_per_batch(32) * 0.9


COST_ANALYSIS = textwrap.dedent("""
    import json, os, sys
    os.environ["KERAS_BACKEND"] = "jax"
    import jax, keras, numpy as np
    from crossover_lab.core.config import ModelSpec, TrainSpec
    from crossover_lab.core.lane.model import build_model
    out = []
    for spec in [ModelSpec(tuple(s["widths"]), family=s["family"], cell=s["cell"], heads=s["heads"], dropout=0.0)
                 for s in json.loads(sys.argv[1])]:
        model = build_model(keras, spec, TrainSpec(batch_size=32), jit=True, unroll=True)
        x, y = np.zeros((32, 784), "float32"), np.zeros((32,), "int32")
        tv = [v.value for v in model.trainable_variables]
        ntv = [v.value for v in model.non_trainable_variables]
        def loss(tv, ntv, x, y):
            pred, _ = model.stateless_call(tv, ntv, x, training=False)
            return keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, pred))
        # The lowered program's cost analysis: within 1-9% of the compiled one's here, without its compile (seconds
        # a model, 12 s for an unrolled LSTM).
        cost = jax.jit(jax.grad(loss)).lower(tv, ntv, x, y).cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        out.append({"xla": cost["flops"], "ours": spec.flops_per_batch(32), "params": model.count_params(),
                    "our_params": spec.params})
    print(json.dumps(out))
""")


@pytest.mark.lanes
def test_flops_and_parameters_agree_with_xla_and_keras():
    """Our FLOPs per training step within 15% of XLA's cost analysis of the compiled JAX gradient (elementwise
    work included there, left out here); parameters exactly as Keras counts them."""
    specs = [ModelSpec((32, 64), family="cnn"), ModelSpec((512, 512), family="rnn"),
             ModelSpec((128, 128), family="rnn", cell="gru"), ModelSpec((128, 128), family="transformer"),
             ModelSpec((256, 256))]
    arg = json.dumps([{"widths": list(s.widths), "family": s.family, "cell": s.cell, "heads": s.heads} for s in specs])
    out = subprocess.run([sys.executable, "-c", COST_ANALYSIS, arg], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    for spec, got in zip(specs, json.loads(out.stdout.splitlines()[-1])):
        assert got["params"] == got["our_params"] == spec.params, (spec.label(), got)
        assert 0.85 <= got["ours"] / got["xla"] <= 1.15, (spec.label(), got["ours"] / got["xla"])


@pytest.mark.lanes
def test_every_family_trains_on_tensorflow_and_jax_lanes(pool):
    lanes = [LaneSpec.parse("cpu1"), LaneSpec.parse("jax:cpu1")]
    for model in FAMILY_MODELS:
        config = RunConfig(model, TrainSpec(batch_size=32, samples=320, data="synthetic"))
        # side by side: each lane's tracing and compiling (one thread, most of a run here) on a core of its own
        result = run_comparison(pool, lanes, config, schedule=Schedule.SIDE_BY_SIDE)
        for name, lane in result.lanes.items():
            assert lane.status == "completed", (model.label(), name, lane.failure)
            assert lane.summary is not None and lane.summary.n_batches == 10 - 5, (model.label(), name)
            assert lane.summary.flops_per_batch == config.flops_per_batch
            assert {r.family for r in lane.records} == {model.kind}  # the per-batch CSV's family column


def test_a_sweep_file_keeps_each_family_on_its_own_curve(tmp_path):
    """The sweep CSV's family column (at the end; an older file reads as mlp), and analyze's groups by kind."""
    from crossover_lab.core.files.sweeps.rows import COLUMNS, SweepRow, group_rows, sweep_rows_text
    from crossover_lab.core.files.sweeps.files import read_sweep_rows
    assert COLUMNS.index("family") > COLUMNS.index("energy_counter")  # after every older column
    rows = [SweepRow(lane, "CPU", w, 0, 1000 * w, 128, ms, ms * 0.95, ms * 1.05, 200, family=family)
            for family in ("mlp", "lstm") for lane, ms in (("cpu", 1.0), ("cpu1", 2.0)) for w in (16, 64)]
    path = tmp_path / "s.csv"
    path.write_text(sweep_rows_text(rows))
    back, _ = read_sweep_rows(str(path))
    assert [r.family for r in back] == [r.family for r in rows]
    assert sorted(group_rows(back)) == ["lstm", "mlp"]
    old = tmp_path / "old.csv"
    text = sweep_rows_text(rows[:4])
    header, *lines = text.splitlines()
    old.write_text("\n".join([",".join(header.split(",")[:-1])] + [",".join(l.split(",")[:-1]) for l in lines]) + "\n")
    assert {r.family for r in read_sweep_rows(str(old))[0]} == {"mlp"}


def test_each_family_crosses_in_what_its_width_counts():
    """A CNN's crossing is in filters, a transformer's in d_model, an LSTM's in units: the one rule's words
    name what the slider moves; the rule for a program says the same."""
    from crossover_lab.core.files.sweeps.rows import SweepRow, group_rows
    from crossover_lab.core.report.rule import kind_rules
    from crossover_lab.core.words.sweep import describe_pair

    def rows(family: str) -> list[SweepRow]:
        return [SweepRow(lane, "CPU", w, 0, 10**6 * w, 64, ms, ms * 0.98, ms * 1.02, 200, layers=2, family=family)
                for lane, series in (("cpu", [2.0, 3.0, 8.0]), ("cpu1", [1.0, 1.5, 16.0]))
                for w, ms in zip((8, 64, 512), series)]

    for family, unit in (("cnn", "filters"), ("transformer 4 heads", "d_model"), ("lstm", "units")):
        (points,) = group_rows(rows(family)).values()
        said = describe_pair(points, "cpu", "cpu1")
        assert f" {unit} (" in said and said.startswith("cpu is faster above about "), said
        (rule,) = kind_rules(rows(family))
        assert f" {unit} at batch 64" in rule.pairs[0].statement, rule.pairs[0].statement


@pytest.mark.parametrize("family", ["cnn", "rnn", "transformer"])
def test_a_model_in_another_family_keeps_its_cost_not_its_width(family):
    """A family switch in the Model panel keeps the run's length: the widths whose FLOPs per sample come nearest."""
    from crossover_lab.core.config import ModelSpec

    mlp = ModelSpec((512, 512))
    other = mlp.in_family(family)
    assert other.family == family and len(other.widths) == 2 and len(set(other.widths)) == 1
    assert 0.7 < other.flops_per_batch(1) / mlp.flops_per_batch(1) < 1.4
    assert other.in_family("mlp").flops_per_batch(1) == pytest.approx(mlp.flops_per_batch(1), rel=0.3)
    assert mlp.in_family("mlp") is mlp


def test_a_kind_of_model_is_a_value_with_parts_written_and_read_in_one_place():
    """Issue 37: a kind is no composite string parsed with startswith and split where it is read. ModelKind writes
    the text files hold ("transformer 4 heads", "saved NAME") and parses it back, parts and all."""
    from crossover_lab.core.config import FactoryModel, SavedModel, is_factory_kind, is_saved_kind
    from crossover_lab.core.families import ModelKind
    from crossover_lab.core.words.verdict import width_unit
    saved = ModelSpec(widths=(), family="saved", saved=SavedModel("/x/m.keras", "ab" * 32, 10, "my model"))
    factory = ModelSpec(widths=(64,), family="factory", factory=FactoryModel("/x/f.py", "ab" * 32, 10, "build"))
    cases = [(ModelSpec((64,)), "mlp", "mlp", ""), (ModelSpec((64,), family="cnn"), "cnn", "cnn", ""),
             (ModelSpec((64,), family="rnn", cell="gru"), "gru", "rnn", ""),
             (ModelSpec((64,), family="transformer", heads=1), "transformer 1 head", "transformer", "1 head"),
             (saved, "saved my model", "saved", "my model"), (factory, "factory build", "factory", "build")]
    for spec, text, family, detail in cases:
        kind = spec.model_kind
        assert spec.kind == str(kind) == text
        assert ModelKind.parse(text) == kind and kind.family == family and kind.detail == detail
        assert is_saved_kind(text) is (family == "saved") and is_factory_kind(text) is (family == "factory")
    assert [width_unit(t) for t in ("cnn", "transformer 4 heads", "lstm", "saved m")] == \
        ["filters", "d_model", "units", "units"]


def test_a_models_family_is_a_member_of_its_type_and_a_word_no_family_has_is_refused():
    """Issue 37: a family held as the type, not compared as a string; files and settings keep its word."""
    from crossover_lab.core.families import Family
    config = RunConfig(ModelSpec((64,), family="cnn"))
    assert config.model.family is Family.CNN and RunConfig.from_dict(config.to_dict()).model.family is Family.CNN
    assert json.loads(json.dumps(config.to_dict()))["model"]["family"] == "cnn"
    assert ModelSpec((64,)).family is Family.MLP
    with pytest.raises(ConfigError, match="model family 'mlpx': choose one of mlp, cnn, rnn, transformer"):
        ModelSpec((64,), family="mlpx")
