"""JAX lanes keep their compiled programs between lane processes, and every segment says where its came from."""
from __future__ import annotations

import pytest

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.engine.devices import backend_version
from crossover_lab.core.engine.pool import LanePool, run_comparison
from crossover_lab.core.lane.backends import compile_cache_word

pytestmark = pytest.mark.skipif(backend_version("jax") is None, reason="JAX is not installed")
CONFIG = RunConfig(ModelSpec((48,)), TrainSpec(batch_size=32, samples=320, data="synthetic"))


def test_the_word_for_a_segment_is_what_the_counts_say():
    assert compile_cache_word((0, 0), (0, 0)) == ""
    assert compile_cache_word((1, 2), (1, 5)) == "compiled"
    assert compile_cache_word((1, 2), (4, 2)) == "cache"
    assert compile_cache_word((0, 0), (2, 1)) == "both"


@pytest.mark.slow
def test_a_second_lane_process_reads_the_program_the_first_one_compiled(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))  # the lanes inherit it: a cache of their own
    seen = []
    for _ in range(2):  # two lane processes, one after the other: the second starts with the first one's cache
        pool = LanePool()
        try:
            lane = run_comparison(pool, [LaneSpec.parse("jax:cpu1")], CONFIG).lanes["jax:cpu1"]
        finally:
            pool.close()
        assert lane.status == "completed", lane.failure
        assert lane.started is not None and lane.started.settings["compile_cache_dir"] == str(tmp_path / "home" / "compiled")
        seen.append(lane.summary.compile_cache)
    assert seen == ["compiled", "cache"]
    assert any((tmp_path / "home" / "compiled").iterdir())
    monkeypatch.setenv("CROSSOVER_NO_COMPILE_CACHE", "1")
    pool = LanePool()
    try:
        lane = run_comparison(pool, [LaneSpec.parse("jax:cpu1")], CONFIG).lanes["jax:cpu1"]
    finally:
        pool.close()
    assert lane.summary.compile_cache == "" and lane.started.settings["compile_cache_dir"] == ""
