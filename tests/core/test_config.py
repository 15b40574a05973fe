"""Validation of the specs, lane names, and the FLOP formula."""
from __future__ import annotations

import pytest

from crossover_lab.core.config import (ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec, parse_lanes,
                                       parse_widths)


def test_width_out_of_range_names_the_layer():
    with pytest.raises(ConfigError, match=r"width 0 in layer 2: widths must be 1-16384"):
        ModelSpec((64, 0))
    with pytest.raises(ConfigError, match="width 20000 in layer 1"):
        ModelSpec((20000,))


def test_layer_count_and_other_limits():
    with pytest.raises(ConfigError, match="9 hidden layers"):
        ModelSpec((8,) * 9)
    with pytest.raises(ConfigError, match="optimizer 'adamw'"):
        TrainSpec(optimizer="adamw")
    with pytest.raises(ConfigError, match="batch size 0"):
        TrainSpec(batch_size=0)
    with pytest.raises(ConfigError, match="dropout"):
        ModelSpec((8,), dropout=1.0)


def test_parse_widths_rejects_words():
    assert parse_widths("750, 150,50") == (750, 150, 50)
    with pytest.raises(ConfigError, match="width 'x' in layer 2"):
        parse_widths("10,x")


@pytest.mark.parametrize("text,name,kind,index,threads,backend", [
    ("cpu", "cpu", "cpu", 0, None, "tensorflow"),
    ("cpu1", "cpu1", "cpu", 0, 1, "tensorflow"),
    ("gpu", "gpu0", "gpu", 0, None, "tensorflow"),
    ("gpu1", "gpu1", "gpu", 1, None, "tensorflow"),
    ("jax:gpu", "jax:gpu0", "gpu", 0, None, "jax"),
    ("tensorflow:cpu", "cpu", "cpu", 0, None, "tensorflow"),
    ("torch:cpu1", "torch:cpu1", "cpu", 0, 1, "torch"),
])
def test_lane_names(text, name, kind, index, threads, backend):
    spec = LaneSpec.parse(text)
    assert (spec.name, spec.kind, spec.index, spec.threads, spec.backend) == (name, kind, index, threads, backend)


def test_bad_lanes():
    with pytest.raises(ConfigError, match="lane 'tpu'"):
        LaneSpec.parse("tpu")
    with pytest.raises(ConfigError, match="backend 'mxnet'"):
        LaneSpec.parse("mxnet:cpu")
    with pytest.raises(ConfigError, match="twins are numbered from 2"):
        LaneSpec.parse("cpu1#1")
    with pytest.raises(ConfigError, match="twins are numbered 2-16"):
        LaneSpec.parse("cpu1#17")


def test_a_lane_named_again_is_its_twin_the_same_device_named_apart():
    """Issue 57: `cpu1,cpu1` was refused ("lane listed twice"); it is cpu1 and its twin cpu1#2, a third cpu1#3."""
    assert [lane.name for lane in parse_lanes("cpu1,cpu1")] == ["cpu1", "cpu1#2"]
    assert [lane.name for lane in parse_lanes("cpu1, cpu1,cpu1")] == ["cpu1", "cpu1#2", "cpu1#3"]
    assert [lane.name for lane in parse_lanes("cpu1#2,cpu1#2,cpu1")] == ["cpu1#2", "cpu1#3", "cpu1"]
    assert [lane.name for lane in parse_lanes("jax:gpu,jax:gpu0")] == ["jax:gpu0", "jax:gpu0#2"]
    twin = LaneSpec.parse("cpu1#2")  # as a file's lane column names it
    assert (twin.name, twin.kind, twin.threads, twin.backend, twin.twin) == ("cpu1#2", "cpu", 1, "tensorflow", 2)
    assert twin.original == LaneSpec.parse("cpu1") and twin != LaneSpec.parse("cpu1")
    remote = parse_lanes("ssh://me@lab:2222/cpu,ssh://me@lab:2222/cpu")
    assert [lane.name for lane in remote] == ["ssh://me@lab:2222/cpu", "ssh://me@lab:2222/cpu#2"]
    assert LaneSpec.parse(remote[1].name) == remote[1] and remote[1].local.name == "cpu#2"
    with pytest.raises(ConfigError, match="two TensorFlow processes do not share one GPU evenly"):
        parse_lanes("gpu,gpu0")
    with pytest.raises(ConfigError, match="at most 15 twins"):
        parse_lanes(",".join(["cpu"] * 17))


def test_a_twin_has_a_colour_of_its_own():
    from crossover_lab.core.colours import FIXED, PALETTE, lane_hex

    for lane in list(FIXED) + ["cpu3", "vm/cpu1"]:
        twins = [lane_hex(f"{lane}#{k}") for k in (2, 3)]
        assert lane_hex(lane) not in twins and twins[0] != twins[1], lane
    # A machine label's "#" (two files of machines named alike) is no twin's: the name's palette colour, as before.
    assert lane_hex("vm#2/cpu") == PALETTE[sum(map(ord, "vm#2/cpu")) % len(PALETTE)]


def test_params_match_keras_count():
    # 784*750+750 + 750*150+150 + 150*50+50 + 50*50+50 + 50*10+10 (Keras's summary for the Q&A seed)
    assert ModelSpec((750, 150, 50, 50)).params == 784 * 750 + 750 + 750 * 150 + 150 + 150 * 50 + 50 + 50 * 50 + 50 + 50 * 10 + 10


def test_flop_formula():
    # 784→128→10, batch 32: first layer 4·784·128, second 6·128·10, per sample.
    assert ModelSpec((128,)).flops_per_batch(32) == (4 * 784 * 128 + 6 * 128 * 10) * 32
    # Doubling the batch doubles the work; widening grows it.
    m = ModelSpec((256, 256))
    assert m.flops_per_batch(64) == 2 * m.flops_per_batch(32)
    assert ModelSpec((512, 512)).flops_per_batch(32) > m.flops_per_batch(32)


def test_config_round_trip():
    cfg = RunConfig(ModelSpec((10, 20)), TrainSpec(batch_size=7, jit=True, samples=100))
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="unknown setting"):
        RunConfig.from_dict({"model": {"widths": [3], "colour": 1}})


def test_a_lanes_device_is_a_type_and_a_word_of_neither_is_refused():
    """Issue 37: what a lane trains on is DeviceKind, compared as members; names and files keep its word."""
    from crossover_lab.core.config import DeviceKind
    assert LaneSpec.parse("cpu1").kind is DeviceKind.CPU and LaneSpec.parse("jax:gpu0").kind is DeviceKind.GPU
    assert LaneSpec(kind="gpu", index=1).name == "gpu1" and LaneSpec(kind="gpu") == LaneSpec.parse("gpu0")
    with pytest.raises(ConfigError, match="lane kind 'tpu': choose cpu or gpu"):
        LaneSpec(kind="tpu")
