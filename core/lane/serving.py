"""One forward call at a time, as a server makes it: the predict task's timed loop, in the lane process.

Each timed call takes a batch from host memory (a NumPy slice of the data set) and ends when the answer is a
NumPy array on the host: the copy to the device, the device's work and the copy back are all inside it. So
the clock is one call's latency, synced, begin to end (the step timer's `per_call` clock): the time between
calls (the loop, the slicing) is no call's time.

Two ways to call, each named in the records (TrainSpec.serve):

    keras     `model.predict_on_batch(x)`: what a Keras server calls, with Keras' own predict machinery
    compiled  the backend's compiled forward pass called directly (JAX: `jax.jit` of `stateless_call`;
              TensorFlow: a `tf.function` of the model with a fixed input signature; PyTorch: the module
              under `torch.no_grad`): the floor a server could reach with the same arithmetic

Weights: trained for WEIGHT_STEPS steps before the first call (never timed; the sidecar's `weights` says so),
so a call answers with a trained model's arithmetic, not an initialiser's. A model the lane kept from an
earlier run or segment keeps its weights.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..config import LaneSpec, TrainSpec

if TYPE_CHECKING:
    from types import ModuleType

    from keras import Model

    from .timing import StepTimer

WEIGHT_STEPS = 3  # training steps before the first timed call (not timed)
PREDICT_FEEDING = "host: each call takes a NumPy slice of the data set in host memory; its answer comes back as NumPy"
Call = Callable[[np.ndarray], np.ndarray]


def train_weights(model: Model, x: np.ndarray, y: np.ndarray, batch_size: int) -> str:
    """A few training steps, not timed, so the calls answer with trained weights; what the sidecar records."""
    n = min(len(x), WEIGHT_STEPS * batch_size)
    fit: Any = model.fit  # Keras declares verbose a str ("auto"); 0 is its documented silent
    fit(x[:n], y[:n], batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
    steps = -(-n // batch_size)
    return f"trained {steps} step{'s' if steps != 1 else ''} before the first call (not timed)"


def make_call(keras: ModuleType, model: Model, spec: LaneSpec, train: TrainSpec, jit: bool) -> Call:
    """One predict call, host array in, host array out, the way `train.serve` names."""
    if train.serve == "keras":
        return lambda x: np.asarray(model.predict_on_batch(x))
    backend = spec.backend
    if backend == "jax":
        import jax

        def forward(trainable: Any, non_trainable: Any, x: Any) -> Any:
            return model.stateless_call(trainable, non_trainable, x, training=False)[0]

        compiled = jax.jit(forward) if jit else forward
        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]
        return lambda x: np.asarray(compiled(trainable, non_trainable, x))
    if backend == "tensorflow":
        import tensorflow as tf

        signature = [tf.TensorSpec((None, int(model.inputs[0].shape[-1])), tf.float32)]
        fn = tf.function(lambda x: model(x, training=False), input_signature=signature, jit_compile=jit)
        return lambda x: fn(tf.constant(x)).numpy()
    import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

    device = "cpu" if spec.kind == "cpu" else f"cuda:{spec.index}"

    def torch_call(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.as_tensor(x, device=device), training=False).cpu().numpy()

    return torch_call


def serve(model: Model, call: Call, x: np.ndarray, batch_size: int, timer: StepTimer, steps_per_epoch: int) -> None:
    """Time calls until the timer stops them (budget, steady seconds, a stop or a new model): the timer's hooks
    around each call, as `fit` would call them around a step. Batches cycle through the data set in order."""
    hooks: Any = timer  # the timer is a keras Callback: these are its hooks
    hooks.set_model(model)
    model.stop_training = False
    batches = max(1, len(x) // batch_size)
    hooks.on_train_begin()
    epoch = 0
    hooks.on_epoch_begin(epoch)
    i = 0
    while not model.stop_training:
        if i and i % steps_per_epoch == 0:
            hooks.on_epoch_end(epoch, {})
            epoch += 1
            hooks.on_epoch_begin(epoch)
        start = (i % batches) * batch_size
        batch = x[start:start + batch_size]
        hooks.on_train_batch_begin(i % steps_per_epoch)
        call(batch)
        hooks.on_train_batch_end(i % steps_per_epoch, {})
        i += 1
    hooks.on_epoch_end(epoch, {})
    hooks.on_train_end()
