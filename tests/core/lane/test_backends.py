"""Keras backends per lane: each installed one trains on the device it names; missing ones say how to install."""
from __future__ import annotations

import importlib.util
import sys

import pytest
from helpers import wall_limit

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.engine.devices import backend_version, check_lanes, discover
from crossover_lab.core.engine.pool import run_comparison

TINY = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=50, samples=1000, data="synthetic"))
INSTALLED = [b for b in ("tensorflow", "jax", "torch") if backend_version(b) is not None]
PLACEMENT = {"tensorflow": "device:CPU:0", "jax": "cpu:0", "torch": "cpu"}
LABEL = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}
JIT_DEFAULT = {"tensorflow": False, "jax": True, "torch": False}


@pytest.mark.lanes
@pytest.mark.parametrize("backend", INSTALLED)
def test_backend_trains_on_the_cpu_it_names(pool, backend):
    spec = LaneSpec("cpu", threads=1, backend=backend)
    lane = run_comparison(pool, [spec], TINY).lanes[spec.name]
    assert lane.status == "completed", lane.failure
    settings = lane.started.settings.to_json()  # as the sidecar keeps it
    assert settings["backend"] == backend and settings["placement"].endswith(PLACEMENT[backend])
    assert settings["jit_compile"] is JIT_DEFAULT[backend] and settings["jit_source"] == f"{backend} default"
    assert lane.started.device.startswith("CPU (") and "1 thread" in lane.started.device
    assert len(lane.records) == 1000 // 50 and all(r.backend == backend for r in lane.records)
    assert lane.summary.n_batches == 20 - 5
    # Nothing the lane sent made this (parent) process import a framework.
    assert not {m.split(".")[0] for m in sys.modules} & {"tensorflow", "keras", "jax", "torch"}


@pytest.mark.lanes
@pytest.mark.parametrize("backend", INSTALLED)
def test_gpu_lane_without_gpu_fails_clearly(pool, backend):
    spec = LaneSpec("gpu", backend=backend)
    lane = run_comparison(pool, [spec], TINY).lanes[spec.name]
    assert lane.status == "failed" and lane.records == []
    assert lane.failure.startswith(f"No GPU is visible to {LABEL[backend]} (")


def test_jax_is_installed_for_ci():
    # CI installs the jax extra so the non-TensorFlow path is exercised on every push.
    assert "jax" in INSTALLED


def test_missing_backend_is_listed_with_its_install_command(monkeypatch):
    import crossover_lab.core.engine.devices as devices

    monkeypatch.setattr(devices, "backend_version", lambda b: None if b == "torch" else "1.0")
    options = [o for o in discover(None, ("torch",))]
    assert {o.name for o in options} >= {"torch:cpu", "torch:gpu0"}
    assert all(not o.available and o.reason == "PyTorch is not installed: pip install -e '.[torch]'" for o in options)
    problems = check_lanes([LaneSpec.parse("torch:cpu")], options)
    assert problems == ["torch:cpu: PyTorch is not installed: pip install -e '.[torch]'"]


def test_without_a_driver_no_backend_is_asked(monkeypatch):
    import crossover_lab.core.engine.devices as devices
    import crossover_lab.core.engine.lanes

    monkeypatch.setattr(devices, "nvidia_driver_present", lambda: False)
    monkeypatch.setattr(crossover_lab.core.engine.lanes.Lane, "start", lambda self: pytest.fail("a probe process was started"))
    options = {o.name: o for o in discover(None, ("tensorflow",))}
    assert options["cpu"].available and options["cpu1"].available
    assert not options["gpu0"].available and "no NVIDIA driver" in options["gpu0"].reason


@pytest.mark.lanes
def test_a_cancelled_probe_returns_at_once(monkeypatch):
    import threading
    import time

    import crossover_lab.core.engine.devices as devices

    monkeypatch.setattr(devices, "nvidia_driver_present", lambda: True)
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    t0 = time.monotonic()
    options = discover(None, ("tensorflow",), cancel=cancel)
    assert time.monotonic() - t0 < wall_limit(4.0)  # a TensorFlow import alone takes longer here, loaded alike
    assert not next(o for o in options if o.name == "gpu0").available


SEEDED = """
import sys
import numpy as np
from crossover_lab.core.lane.backends import configure_process, import_keras
from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
from crossover_lab.core.lane.model import build_model
spec = LaneSpec.parse(sys.argv[1])
keras, _ = import_keras(spec, configure_process(spec)["threads"])
ours = [np.asarray(keras.ops.convert_to_numpy(v.value)) for v in
        build_model(keras, ModelSpec((64,)), TrainSpec(seed=3), jit=False).weights]
print("tensorflow imported:", "tensorflow" in sys.modules)
keras.utils.set_random_seed(3)  # Keras' own call (it imports TensorFlow wherever it is installed)
ref = keras.Sequential([keras.Input(shape=(784,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dropout(0.2),
                        keras.layers.Dense(10, activation="softmax", dtype="float32")])
print("same first weights:", all(np.array_equal(a, keras.ops.convert_to_numpy(b.value)) for a, b in zip(ours, ref.weights)))
"""


@pytest.mark.lanes
@pytest.mark.parametrize("backend", [b for b in INSTALLED if b != "tensorflow"])
def test_a_model_is_seeded_as_keras_seeds_it_without_importing_tensorflow_into_another_backends_lane(backend):
    import os
    import subprocess

    out = subprocess.run([sys.executable, "-c", SEEDED, f"{backend}:cpu1"], capture_output=True, text=True, timeout=180,
                         env={**os.environ, "KERAS_BACKEND": backend})
    lines = out.stdout.splitlines()
    assert "tensorflow imported: False" in lines and "same first weights: True" in lines, out.stdout + out.stderr[-2000:]


TF_WITHOUT_JAX = """
import sys
from crossover_lab.core.config import LaneSpec
from crossover_lab.core.lane.backends import configure_process, import_keras
spec = LaneSpec.parse("cpu1")
keras, _ = import_keras(spec, configure_process(spec)["threads"])
print("jax imported:", "jax" in sys.modules, keras.backend.backend())
import jax  # a user's model file may still
print("jax after:", jax.__name__)
"""


@pytest.mark.lanes  # imports TensorFlow and JAX in a process of its own (half a minute under load)
@pytest.mark.skipif("jax" not in INSTALLED, reason="JAX is not installed")
def test_a_tensorflow_lane_does_not_import_jax_but_its_user_still_can():
    import subprocess

    out = subprocess.run([sys.executable, "-c", TF_WITHOUT_JAX], capture_output=True, text=True, timeout=180)
    assert out.stdout.splitlines() == ["jax imported: False tensorflow", "jax after: jax"], out.stdout + out.stderr[-2000:]


TF_WITHOUT_PANDAS = """
import sys
from crossover_lab.core.config import LaneSpec
from crossover_lab.core.lane.backends import configure_process, import_keras
spec = LaneSpec.parse("cpu1")
keras, _ = import_keras(spec, configure_process(spec)["threads"])
print("pandas imported:", "pandas" in sys.modules, keras.backend.backend())
import pandas  # a user's model file may still
print("pandas after:", pandas.__name__)
"""


@pytest.mark.lanes  # imports TensorFlow and pandas in a process of its own
@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_a_tensorflow_lane_does_not_import_pandas_but_its_user_still_can():
    """Keras imports pandas where it can, for DataFrames a lane never feeds: 0.3 s of each lane's start, which the
    first Start after launch waits for (issue 55)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", TF_WITHOUT_PANDAS], capture_output=True, text=True, timeout=180)
    assert out.stdout.splitlines() == ["pandas imported: False tensorflow", "pandas after: pandas"], \
        out.stdout + out.stderr[-2000:]
