"""JAX lanes keep their compiled programs between lane processes, and every segment says where its came from."""
from __future__ import annotations

import ast
import os
import subprocess
import sys

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


@pytest.mark.lanes
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
        assert lane.started is not None and lane.started.settings.compile_cache_dir == str(tmp_path / "home" / "compiled")
        seen.append(lane.summary.compile_cache)
    assert seen == ["compiled", "cache"]
    assert any((tmp_path / "home" / "compiled").iterdir())
    monkeypatch.setenv("CROSSOVER_NO_COMPILE_CACHE", "1")
    pool = LanePool()
    try:
        lane = run_comparison(pool, [LaneSpec.parse("jax:cpu1")], CONFIG).lanes["jax:cpu1"]
    finally:
        pool.close()
    assert lane.summary.compile_cache == "" and lane.started.settings.compile_cache_dir == ""


ONE_LOOP_PROGRAM = """
import numpy as np
import jax.monitoring
from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
from crossover_lab.core.lane.backends import configure_process, import_keras
from crossover_lab.core.lane.model import build_model
from crossover_lab.core.lane.steps import steps_for
spec = LaneSpec.parse("jax:cpu1")
keras, _ = import_keras(spec, configure_process(spec)["threads"])
compiled = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, secs, **kw: compiled.append(name) if name == "/jax/core/compile/backend_compile_duration" else None)
model = build_model(keras, ModelSpec((8,)), TrainSpec(batch_size=16), jit=True)
model.fit(np.zeros((32, 784), "float32"), np.zeros((32,), "int32"), batch_size=16, epochs=1, verbose=0)
steps = steps_for(keras, model, spec)
loop = steps.device_loop()
xs, ys = steps.place(np.zeros((8, 16, 784), "float32")), steps.place(np.zeros((8, 16), "int32"))
counts = []
for k in (2, 4, 8, 2):
    state = steps.begin()
    before = len(compiled)
    loss, state = loop(state, xs, ys, k)
    steps.read(loss)
    steps.end(state)
    counts.append(len(compiled) - before)
print("compiles per K:", counts)
"""


@pytest.mark.lanes  # compiles real JAX programs: a test of realness (14 s), not of logic
def test_the_on_device_loop_is_one_program_for_every_window_of_k_steps():
    """K follows the first step's time (a power of two): a program per K was compiled again, not read from the
    cache, whenever a wobble moved K; the count of steps is an argument of one program now."""
    out = subprocess.run([sys.executable, "-c", ONE_LOOP_PROGRAM], capture_output=True, text=True, timeout=240,
                         env={**os.environ, "KERAS_BACKEND": "jax"})
    line = [l for l in out.stdout.splitlines() if l.startswith("compiles per K:")]
    assert line, out.stdout + out.stderr[-3000:]
    counts = ast.literal_eval(line[0].split(":", 1)[1].strip())
    assert counts[0] >= 1 and counts[1:] == [0, 0, 0], counts
