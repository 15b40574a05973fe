"""How batches reach the model: a description is recorded with every result, since it changes speed."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, TypeAlias

import numpy as np

from ..config import ConfigError, DeviceKind, LaneSpec

if TYPE_CHECKING:
    import tensorflow as tf

    from .steps import Tensor

Array: TypeAlias = "np.ndarray | Tensor"  # the training set in host memory, or resident on the lane's device
# What fit trains from: a tf.data pipeline (TensorFlow), else an endless iterator of (x, y) slices of the set.
Source: TypeAlias = "tf.data.Dataset | Iterator[tuple[Array, Array]]"


def steps_per_epoch(n_samples: int, batch_size: int) -> int:
    steps = n_samples // batch_size
    if steps < 1:
        raise ConfigError(f"{n_samples} samples is fewer than one batch of {batch_size}: "
                          "raise the sample limit or lower the batch size")
    return steps


def make_input(x: np.ndarray, y: np.ndarray, batch_size: int, spec: LaneSpec, feeding: str) -> tuple[Source, str]:
    """An endless source of (x, y) batches for fit(steps_per_epoch=…) and a sentence saying how it feeds.

    Pre-batched and repeated, so the epoch boundary costs no re-shuffle or iterator rebuild
    (with plain NumPy inputs Keras stalls 20-250 ms there, which is input pipeline, not training).
    """
    fresh, how = input_factory(x, y, batch_size, spec, feeding)
    return fresh(), how


def input_factory(x: np.ndarray, y: np.ndarray, batch_size: int, spec: LaneSpec,
                  feeding: str) -> tuple[Callable[[], Source], str]:
    """As make_input, for several fits from the first batch each: the pipeline (or the copy of the data on the
    device) is made once, and each call of the function gives a source that starts at batch 0."""
    steps = steps_per_epoch(len(y), batch_size)
    x, y = x[: steps * batch_size], y[: steps * batch_size]
    if spec.backend == "tensorflow":
        if feeding == "device":
            raise ConfigError("feeding 'device' (data resident on the device) needs the jax or torch backend")
        import tensorflow as tf

        # tf.data's autotuner runs a thread that the iterator's destructor waits for at the end of every
        # fit; on a busy machine that wait took 5-20 s after the last batch. A fixed prefetch needs no tuning.
        options = tf.data.Options()
        options.autotune.enabled = False
        with tf.device("/CPU:0"):
            ds = (tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True)
                  .cache().repeat().prefetch(2).with_options(options))
        return (lambda: ds), "host: tf.data from host memory, pre-batched, cached, repeated, prefetch 2, no autotune"
    if feeding == "device":
        xs, ys = _to_device(x, spec), _to_device(y, spec)
        how = "device: whole training set resident on the lane's device, sliced per batch"
    else:
        xs, ys = x, y
        how = "host: NumPy slices from host memory, copied per batch"
    return (lambda: _batches(xs, ys, batch_size, steps)), how


def _batches(x: Array, y: Array, batch_size: int, steps: int) -> Iterator[tuple[Array, Array]]:
    while True:
        for i in range(steps):
            sl = slice(i * batch_size, (i + 1) * batch_size)
            yield x[sl], y[sl]


def _to_device(a: np.ndarray, spec: LaneSpec) -> Tensor:
    if spec.backend == "jax":
        import jax

        platform = "cpu" if spec.kind == DeviceKind.CPU else "gpu"
        return jax.device_put(a, jax.devices(platform)[0 if spec.kind == DeviceKind.CPU else spec.index])
    import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

    device = "cpu" if spec.kind == DeviceKind.CPU else f"cuda:{spec.index}"
    return torch.as_tensor(a, device=device)
