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

import time
from typing import TYPE_CHECKING, Any, Callable, TypeAlias, cast

import numpy as np

from ..config import DeviceKind, LaneSpec, TrainSpec
from .arrivals import OpenLoop, arrival_times
from .steps import Tensor, Unsupported
from ..plurals import plural

if TYPE_CHECKING:
    from types import ModuleType

    import jax
    import tensorflow as tf
    import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere
    from keras import Model

    from .timing import StepTimer

SPIN_S = 0.0005  # at an arrival rate, the last half millisecond before a request arrives is waited out on the clock
WEIGHT_STEPS = 3  # training steps before the first timed call (not timed)
PREDICT_FEEDING = "host: each call takes a NumPy slice of the data set in host memory; its answer comes back as NumPy"
Call = Callable[[np.ndarray], np.ndarray]
Input: TypeAlias = "np.ndarray | Tensor"  # a call's input: a host array, or one already on the device
JaxArrays: TypeAlias = "tuple[list[jax.Array], list[jax.Array]]"  # the model's trainable and non-trainable arrays


def train_weights(model: Model, x: np.ndarray, y: np.ndarray, batch_size: int) -> str:
    """A few training steps, not timed, so the calls answer with trained weights; what the sidecar records."""
    n = min(len(x), WEIGHT_STEPS * batch_size)
    fit: Any = model.fit  # Keras declares verbose a str ("auto"); 0 is its documented silent
    fit(x[:n], y[:n], batch_size=batch_size, epochs=1, verbose=0, shuffle=False)
    steps = -(-n // batch_size)
    return f"trained {steps} {plural(steps, 'step')} before the first call (not timed)"


class Forward:
    """The backend's compiled forward pass of a model, called directly (serve=compiled, and the anatomy of a call):
    `place` puts an input on the lane's device, calling gives the answer (on the device, maybe not ready yet),
    `to_host` waits for it and brings it back as NumPy, and `loop(k)` makes K forward passes one compiled call."""

    def __init__(self, model: Model, jit: bool) -> None:
        self.model, self.jit = model, jit

    def __call__(self, x: Input) -> Tensor:
        raise NotImplementedError

    def to_host(self, y: Tensor) -> np.ndarray:
        return np.asarray(y)

    def loop(self) -> Callable[[Tensor], Tensor]:
        """xs stacked (K, batch, …) → the sum of the K answers (a scalar, so nothing is left out as unused)."""
        raise Unsupported("no on-device loop of calls for this backend")


class JaxForward(Forward):
    def __init__(self, model: Model, jit: bool) -> None:
        super().__init__(model, jit)
        import jax

        def forward(trainable: list[jax.Array], non_trainable: list[jax.Array], x: jax.Array) -> jax.Array:
            return model.stateless_call(trainable, non_trainable, x, training=False)[0]

        self._forward = forward
        self._compiled = jax.jit(forward) if jit else forward
        self._state = self._read()

    def _read(self) -> JaxArrays:
        return ([v.value for v in self.model.trainable_variables], [v.value for v in self.model.non_trainable_variables])

    @property
    def state(self) -> JaxArrays:
        """The model's arrays. Keras' own calls (fit, predict_on_batch) donate them and hand the variables new
        ones: read them again when that happened (one flag of the first array, checked per call)."""
        held = self._state[0] or self._state[1]
        if held and held[0].is_deleted():
            self._state = self._read()
        return self._state

    def __call__(self, x: Input) -> Tensor:
        trainable, non_trainable = self.state
        return self._compiled(trainable, non_trainable, cast("jax.Array", x))  # jit takes NumPy as it takes arrays

    def loop(self) -> Callable[[Tensor], Tensor]:
        import jax
        import jax.numpy as jnp

        if not self.jit:
            raise Unsupported("jit is off: with no compiled call there is no on-device loop (turn jit on)")
        forward = self._forward

        def many(trainable: list[jax.Array], non_trainable: list[jax.Array], xs: jax.Array) -> jax.Array:
            def body(total: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
                return total + jnp.sum(forward(trainable, non_trainable, x)), None

            return jax.lax.scan(body, jnp.float32(0.0), xs)[0]

        compiled = jax.jit(many)
        return lambda xs: compiled(*self.state, cast("jax.Array", xs))


class TensorFlowForward(Forward):
    def __init__(self, model: Model, jit: bool) -> None:
        super().__init__(model, jit)
        import tensorflow as tf

        # The input's own shape (a row of pixels, a 28x28 image, a sequence of rows), any batch size.
        signature = [tf.TensorSpec((None, *model.inputs[0].shape[1:]), tf.float32)]
        # autograph off: the call has no Python control flow to convert, and autograph leaves its converted source
        # behind as /tmp/__autograph_generated_file*.py, one per trace, never removed.
        self._fn = tf.function(lambda x: model(x, training=False), input_signature=signature, jit_compile=jit,
                               autograph=False)

    def __call__(self, x: Input) -> Tensor:
        return self._fn(x)

    def to_host(self, y: Tensor) -> np.ndarray:
        return cast("tf.Tensor", y).numpy()

    def loop(self) -> Callable[[Tensor], Tensor]:
        import tensorflow as tf

        model = self.model

        def many(xs: tf.Tensor) -> tf.Tensor:
            def body(i: tf.Tensor, total: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
                return i + 1, total + tf.reduce_sum(tf.cast(model(xs[i], training=False), tf.float32))

            return tf.while_loop(lambda i, _total: i < tf.shape(xs)[0], body, (tf.constant(0), tf.constant(0.0)))[1]

        return tf.function(many, jit_compile=self.jit, reduce_retracing=True, autograph=False)


class TorchForward(Forward):
    def __init__(self, model: Model, jit: bool, device: str) -> None:
        super().__init__(model, jit)
        self.device = device

    def __call__(self, x: Input) -> Tensor:
        import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

        with torch.no_grad():
            return self.model(torch.as_tensor(x, device=self.device), training=False)

    def to_host(self, y: Tensor) -> np.ndarray:
        return cast("torch.Tensor", y).cpu().numpy()

    def loop(self) -> Callable[[Tensor], Tensor]:
        raise Unsupported("PyTorch has no compiled loop of forward passes here (a CUDA graph of calls is not built)")


def forward_for(model: Model, spec: LaneSpec, jit: bool) -> Forward:
    if spec.backend == "jax":
        return JaxForward(model, jit)
    if spec.backend == "tensorflow":
        return TensorFlowForward(model, jit)
    return TorchForward(model, jit, "cpu" if spec.kind == DeviceKind.CPU else f"cuda:{spec.index}")


def make_call(keras: ModuleType, model: Model, spec: LaneSpec, train: TrainSpec, jit: bool) -> Call:
    """One predict call, host array in, host array out, the way `train.serve` names."""
    if train.serve == "keras":
        return lambda x: np.asarray(model.predict_on_batch(x))
    forward = forward_for(model, spec, jit)
    return lambda x: forward.to_host(forward(x))


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


def serve_arrivals(model: Model, call: Call, x: np.ndarray, train: TrainSpec, timer: StepTimer) -> str:
    """Serve requests arriving on their own schedule (core/lane/arrivals.py) until it is done, the lane falls
    behind, or the timer stops it; returns which ("done", "behind", "stopped"). The warm-up calls come first,
    one after another (flagged warm-up, as for every task); the schedule starts after the last of them. Each
    request is `train.batch_size` samples; a call answers one request, or up to `train.max_batch` that queued."""
    assert train.arrival_rate is not None
    hooks: Any = timer
    hooks.set_model(model)
    model.stop_training = False
    size = train.batch_size
    rows = max(1, len(x) // size)
    hooks.on_train_begin()
    hooks.on_epoch_begin(0)
    i = 0
    while i < train.warmup_steps and not model.stop_training:
        hooks.on_train_batch_begin(i)
        call(x[(i % rows) * size:(i % rows + 1) * size])
        hooks.on_train_batch_end(i, {})
        i += 1
    loop = OpenLoop(arrival_times(train.arrival_rate, train.rate_requests, train.arrivals, train.seed),
                    max_batch=train.max_batch, clock=time.perf_counter, sleep=time.sleep,
                    stop=lambda: bool(model.stop_training), spin_s=SPIN_S)
    while (take := loop.take()) is not None:
        k = len(take.arrivals)
        first = (loop.answered_count - k) % rows
        batch = x[first * size:(first + k) * size] if first + k <= rows else \
            np.concatenate([x[((first + j) % rows) * size:((first + j) % rows + 1) * size] for j in range(k)])
        timer.take(take)
        hooks.on_train_batch_begin(i)
        call(batch)
        hooks.on_train_batch_end(i, {})
        loop.answered(time.perf_counter())
        i += 1
        if model.stop_training:
            loop.ended = "stopped"
            break
    hooks.on_epoch_end(0, {})
    hooks.on_train_end()
    return loop.ended
