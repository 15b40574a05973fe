"""Per-backend set-up inside a lane process: environment, threads, placement checks, device names.

Everything here runs in the lane's own process, before (or right after) Keras is imported:
the environment decides which devices the backend can see, so it must be set first.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Iterator

from ..config import ConfigError, DeviceKind, LaneSpec, TrainSpec
from ..json_data import JsonValue
from ..machine import GPU_HINT, LABEL, cpu_model, usable_cores
from ..paths import COMPILE_CACHE_MAX_BYTES, compile_cache_dir
from ..plurals import plural

if TYPE_CHECKING:
    from types import ModuleType

    from keras import Model, Variable

# What each backend does when the config leaves jit unset; recorded with every result.
DEFAULT_JIT = {"tensorflow": False, "jax": True, "torch": False}


def resolve_jit(spec: LaneSpec, train: TrainSpec) -> tuple[bool, str]:
    """Whether the lane compiles its step with XLA/jit, and where that came from (recorded with every result)."""
    if train.jit is not None:
        return train.jit, "config"
    return DEFAULT_JIT[spec.backend], f"{spec.backend} default"


def set_precision(keras: ModuleType, spec: LaneSpec, mixed: bool) -> None:
    """The dtype policy for the next model: mixed float16 (GPU lanes only), else float32."""
    if mixed and spec.kind != DeviceKind.GPU:
        raise ConfigError("mixed precision is for GPU lanes: on a CPU it only slows training")
    keras.mixed_precision.set_dtype_policy("mixed_float16" if mixed else "float32")


class PlacementError(RuntimeError):
    """The run would not be on the device its lane names."""


def configure_process(spec: LaneSpec) -> dict[str, Any]:
    """Set the environment and CPU affinity for this lane; returns the resolved settings."""
    os.environ["KERAS_BACKEND"] = spec.backend
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    cores = usable_cores()
    threads = len(cores) if spec.threads is None else min(spec.threads, len(cores))
    settings: dict[str, Any] = {"backend": spec.backend, "threads": threads}
    if spec.kind == DeviceKind.CPU:
        # Hide every GPU: placement cannot drift to one, and XLA's "auto" cannot switch on.
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        if spec.backend == "jax":
            os.environ["JAX_PLATFORMS"] = "cpu"
            if threads == 1:
                # One Eigen thread; the affinity below keeps XLA's own pool on one core too.
                os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                           + " --xla_cpu_multi_thread_eigen=false").strip()
        if spec.threads is not None and hasattr(os, "sched_setaffinity"):
            # The last cores, so that a one-thread lane and the OS's first core don't collide.
            pinned = cores[-threads:]
            os.sched_setaffinity(0, pinned)
            settings["cpu_affinity"] = pinned
    else:
        if spec.backend == "jax":
            os.environ["JAX_PLATFORMS"] = "cuda"
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return settings


@contextlib.contextmanager
def _without(*names: str) -> Iterator[None]:
    """Imports of `names` fail inside (where not imported already): Python's documented way, None in sys.modules.
    They can still be imported afterwards, by a user's model file say."""
    blocked = [name for name in names if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # pyright: ignore[reportArgumentType]
    try:
        yield
    finally:
        for name in blocked:
            del sys.modules[name]


# What TensorFlow and Keras import when they can, for what a lane never uses: the JAX of TFLite's converter (0.4 s
# of a 4 s import) and the pandas of Keras's DataFrame slicing (0.3 s; a lane feeds arrays and tf.data).
NOT_FOR_LANES = ("jax", "pandas")


def _import_tensorflow() -> ModuleType:
    """TensorFlow, without what it imports for a lane's nothing (NOT_FOR_LANES)."""
    with _without(*NOT_FOR_LANES):
        import tensorflow as tf
    return tf


def import_keras(spec: LaneSpec, threads: int) -> tuple[ModuleType, dict[str, JsonValue]]:
    """Import Keras on the lane's backend and apply its thread budget; returns (keras, settings)."""
    settings: dict[str, JsonValue] = {}
    if spec.backend == "tensorflow":
        tf = _import_tensorflow()
        if spec.kind == DeviceKind.CPU:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1 if threads == 1 else 2)
        # A GPU lane must fail rather than quietly run an op on the CPU.
        tf.config.set_soft_device_placement(False)
        settings.update(tensorflow_version=tf.__version__,
                        intra_op_threads=tf.config.threading.get_intra_op_parallelism_threads(),
                        inter_op_threads=tf.config.threading.get_inter_op_parallelism_threads(),
                        soft_device_placement=False)
    elif spec.backend == "torch":
        import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

        if spec.kind == DeviceKind.CPU:
            torch.set_num_threads(threads)
        settings.update(torch_version=str(torch.__version__), torch_threads=int(torch.get_num_threads()))
    elif spec.backend == "jax":
        import jax

        settings.update(jax_version=jax.__version__, xla_flags=os.environ.get("XLA_FLAGS", ""),
                        compile_cache_dir=use_compile_cache(jax))
    with _without("pandas"):
        import keras

    settings["keras_version"] = keras.__version__
    return keras, settings


_CACHE_EVENTS = {"/jax/compilation_cache/cache_hits": "hits", "/jax/compilation_cache/cache_misses": "misses"}
_cache_counts = {"hits": 0, "misses": 0}


def use_compile_cache(jax: ModuleType) -> str:
    """Turn on JAX's persistent compilation cache in the app's data folder (every program, however quick to
    compile: warm-up is flagged as before, since the first steps still touch memory for the first time), and count
    its hits and misses. Returns the folder, or "" when off (CROSSOVER_NO_COMPILE_CACHE, or it cannot be made)."""
    if os.environ.get("CROSSOVER_NO_COMPILE_CACHE"):
        return ""
    folder = compile_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", str(folder))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        try:  # JAX bounds the cache's size only with filelock (the jax extra brings it)
            import filelock  # noqa: F401  # pyright: ignore[reportUnusedImport]

            jax.config.update("jax_compilation_cache_max_size", COMPILE_CACHE_MAX_BYTES)
        except ImportError:
            print("compilation cache without a size limit: pip install filelock", file=sys.stderr)
    except (OSError, AttributeError, ValueError) as exc:  # an older JAX without a setting, or no folder
        print(f"compilation cache off: {exc}", file=sys.stderr)
        return ""

    def count(event: str, **_kwargs: object) -> None:
        key = _CACHE_EVENTS.get(event)
        if key:
            _cache_counts[key] += 1

    jax.monitoring.register_event_listener(count)
    return str(folder)


def compile_cache_counts() -> tuple[int, int]:
    """(hits, misses) of the persistent compilation cache in this lane so far."""
    return _cache_counts["hits"], _cache_counts["misses"]


def compile_cache_word(before: tuple[int, int], after: tuple[int, int]) -> str:
    """Where a segment's programs came from, between two compile_cache_counts(): see RunSummary.compile_cache."""
    hits, misses = after[0] - before[0], after[1] - before[1]
    return "both" if hits and misses else "cache" if hits else "compiled" if misses else ""


def require_device(spec: LaneSpec, threads: int) -> str:
    """Check the lane's device exists for its backend; returns its name or raises PlacementError."""
    if spec.kind == DeviceKind.CPU:
        return f"CPU ({cpu_model()}, {threads} {plural(threads, 'thread')})"
    names = gpu_names(spec.backend)
    if not names:
        raise PlacementError(f"No GPU is visible to {LABEL[spec.backend]} ({GPU_HINT[spec.backend]}).")
    if spec.index >= len(names):
        raise PlacementError(f"GPU {spec.index} does not exist: {LABEL[spec.backend]} sees {len(names)} GPU(s).")
    return f"GPU:{spec.index} ({names[spec.index]})"


def gpu_names(backend: str) -> list[str]:
    """Names of the GPUs the (already configured) backend can use, in index order."""
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        return [tf.config.experimental.get_device_details(g).get("device_name", g.name) for g in gpus]
    if backend == "jax":
        import jax

        try:
            return [d.device_kind for d in jax.devices("gpu")]
        except Exception:  # no CUDA plugin: RuntimeError, or a bare AssertionError with JAX_PLATFORMS=cuda
            return []
    import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def keras_device(spec: LaneSpec) -> str:
    if spec.kind == DeviceKind.CPU:
        # On torch, "cpu:0" differs from a new tensor's "cpu": Keras would then copy every
        # weight with .to() and train the copies' non-leaf tensors (no gradients reach them).
        return "cpu" if spec.backend == "torch" else "cpu:0"
    return f"gpu:{spec.index}"


def variable_device(model: Model, backend: str) -> str:
    """Where the model's first weight lives, as the backend names it."""
    return variable_device_of(model.weights[0], backend)


def verify_placement(model: Model, spec: LaneSpec) -> str:
    """Raise PlacementError unless every weight lives on the lane's device; returns where it is."""
    wanted_gpu = spec.kind == DeviceKind.GPU
    for weight in model.weights:
        where = variable_device_of(weight, spec.backend)
        on_gpu = "gpu" in where.lower() or "cuda" in where.lower()
        if on_gpu != wanted_gpu or (wanted_gpu and _device_index(where) != spec.index):
            raise PlacementError(
                f"weight {weight.path} is on {where}, not on the lane's {keras_device(spec)}: "
                "the run was stopped rather than mislabelled.")
    return variable_device(model, spec.backend)


def _device_index(where: str) -> int | None:
    """The index in ".../device:GPU:1", "gpu:1" or "cuda:1" (exactly: GPU:11 is not GPU:1)."""
    tail = where.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def variable_device_of(weight: Variable, backend: str) -> str:
    value = weight.value
    if backend == "tensorflow":
        return value.device
    if backend == "jax":
        return ",".join(f"{d.platform}:{d.id}" for d in value.devices())
    return str(value.device)


def warm_framework(keras: ModuleType, spec: LaneSpec) -> dict[str, JsonValue]:
    """Two training steps of a tiny model on the lane's device, as the lane starts: the framework's once-a-process
    costs (its runtime's thread pools, the first trace and compile of a training step: 0.6-2.5 s of a TensorFlow
    lane's first step here) are paid before the first run rather than in it. The runs' own warm-up batches are
    kept and marked apart as before; this only shortens the wait for them. Returns the setting recorded with every
    point: the seconds it took, or why it could not be done (a lane then pays those costs in its first run)."""
    import numpy as np

    started = time.perf_counter()
    try:
        with keras.device(keras_device(spec)):
            model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"),
                                      keras.layers.Dense(2)])
            model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            x, y = np.zeros((4, 8), dtype="float32"), np.zeros((4,), dtype="int32")
            for _ in range(2):
                model.train_on_batch(x, y)
        del model
        keras.backend.clear_session()
    except Exception as exc:  # a device that cannot train says so in its first run, in that run's own words
        return {"framework_warmed": f"no: {type(exc).__name__}: {str(exc)[:200]}"}
    return {"framework_warmed_s": round(time.perf_counter() - started, 3)}
