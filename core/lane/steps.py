"""How each Keras backend takes one training step, holds its state and loops on the device: the anatomy's seams.

Runs in a lane process. Every rung uses the step Keras compiled for `fit` (`model.train_function`),
so they all run the same arithmetic; the on-device loop traces the same `model.train_step` into
one compiled call (JAX `lax.scan`, TensorFlow `tf.while_loop`, PyTorch a CUDA graph).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Mapping, TypeAlias, cast

import numpy as np

from ..config import DeviceKind, LaneSpec

if TYPE_CHECKING:
    from types import ModuleType

    import jax
    import tensorflow as tf
    import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere
    from keras import Model, Variable

# An array on the lane's device, of the backend the lane imported: a batch's x or y, a loss, K stacked batches.
# (torch.Tensor is checked where torch is installed; elsewhere the checker cannot know it.)
Tensor: TypeAlias = "jax.Array | tf.Tensor | torch.Tensor"
Batch: TypeAlias = "tuple[Tensor, Tensor]"  # (x, y) on the device
# What a loop of steps carries from one step to the next: on JAX the model's arrays (trainable, non-trainable,
# optimizer, metrics), which Keras' jitted step takes and gives back; the other backends keep it in the variables.
JaxState: TypeAlias = "tuple[list[jax.Array], list[jax.Array], list[jax.Array], list[jax.Array]]"
State: TypeAlias = "JaxState | None"
Logs: TypeAlias = "Mapping[str, Tensor]"  # what Keras' train step returns: metric name → value, "loss" among them
# loop(state, xs, ys, k) → (loss of the last step, state): k steps in one call on xs[0..k-1], xs stacked
# (N ≥ k, batch, 784). The count is an argument, not the stack's length: one program for every K, compiled once
# (and read back from JAX's persistent cache), where a K that moved with the first step's time made a new one.
DeviceLoop: TypeAlias = "Callable[[State, Tensor, Tensor, int], tuple[Tensor, State]]"
# Keras declares `model.train_function` None until `make_train_function` has set it; what it then holds, by backend:
JaxTrainFunction: TypeAlias = "Callable[[JaxState, Iterator[Batch]], tuple[Logs, JaxState]]"
TrainFunction: TypeAlias = "Callable[[Iterator[Batch]], Logs]"  # TensorFlow
TorchTrainFunction: TypeAlias = "Callable[[list[Batch]], Logs]"


class Unsupported(Exception):
    """A rung this backend cannot run on this device; the message is the sentence a user reads."""


class _One:
    """An iterator over one batch: Keras' compiled step takes an iterator (JAX, TensorFlow)."""

    __slots__ = ("batch",)

    def __init__(self, batch: Batch) -> None:
        self.batch: Batch | None = batch

    def __iter__(self) -> _One:
        return self

    def __next__(self) -> Batch:
        batch, self.batch = self.batch, None
        if batch is None:
            raise StopIteration
        return batch


class Steps:
    """One backend's step, state and placement for a compiled model (after its first `fit`)."""

    def __init__(self, keras: ModuleType, model: Model, spec: LaneSpec) -> None:
        self.keras, self.model, self.spec = keras, model, spec
        model.make_train_function()

    def variables(self) -> list[Variable]:
        m = self.model
        return list(m.trainable_variables) + list(m.non_trainable_variables) + list(m.optimizer.variables) \
            + list(m.metrics_variables)

    def snapshot(self) -> list[np.ndarray]:
        """Every weight, optimizer slot, metric and random-seed state, copied to the host."""
        return [np.array(self.keras.ops.convert_to_numpy(v.value)) for v in self.variables()]

    def restore(self, saved: list[np.ndarray]) -> None:
        for variable, value in zip(self.variables(), saved):
            variable.assign(value)

    def begin(self) -> State:
        """The state a loop of steps carries (JAX: the model's arrays; the others keep it in the variables)."""
        return None

    def end(self, state: State) -> None:
        """Write a loop's state back into the model's variables."""

    def step(self, state: State, batch: Batch) -> tuple[Tensor, State]:
        raise NotImplementedError

    def read(self, loss: Tensor) -> float:
        """The loss as a Python float: waits for the device to finish the step."""
        return float(self.keras.ops.convert_to_numpy(loss))

    def place(self, array: np.ndarray) -> Tensor:
        raise NotImplementedError

    def device_loop(self) -> DeviceLoop:
        raise NotImplementedError


class JaxSteps(Steps):
    def begin(self) -> JaxState:
        # Keras' jitted step donates its state: the variables must let go of the arrays, as fit does.
        return self.model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                         optimizer_variables=True, metrics_variables=True,
                                         purge_model_variables=True)

    def end(self, state: State) -> None:
        assert state is not None, "a JAX loop carries its state from begin() to end()"
        trainable, non_trainable, optimizer, metrics = state
        self.model._jax_state = {"trainable_variables": trainable, "non_trainable_variables": non_trainable,
                                 "optimizer_variables": optimizer, "metrics_variables": metrics}
        self.model._jax_state_synced = False
        self.model.jax_state_sync()

    def step(self, state: State, batch: Batch) -> tuple[Tensor, State]:
        assert state is not None, "a JAX step takes the state begin() gave"
        logs, state = cast("JaxTrainFunction", self.model.train_function)(state, _One(batch))
        return logs["loss"], state

    def place(self, array: np.ndarray) -> jax.Array:
        import jax

        # To the lane's device (the keras.device scope sets JAX's default device), uncommitted as fit's
        # own batches are: a committed array would make jit compile the step a second time.
        return jax.device_put(array)

    def device_loop(self) -> DeviceLoop:
        import jax

        if not self.model.jit_compile:
            raise Unsupported("jit is off: with no compiled step there is no on-device loop (turn jit on)")
        model = self.model

        import jax.numpy as jnp

        def loop(state: JaxState, xs: jax.Array, ys: jax.Array, k: jax.Array) -> tuple[jax.Array, JaxState]:
            def body(i: jax.Array, carry: tuple[JaxState, jax.Array]) -> tuple[JaxState, jax.Array]:
                logs, state = model.train_step(carry[0], (xs[i], ys[i]))
                return state, jnp.asarray(logs["loss"], jnp.float32)

            state, loss = jax.lax.fori_loop(0, k, body, (state, jnp.zeros((), jnp.float32)))
            return loss, state

        compiled = jax.jit(loop, donate_argnums=0)
        return lambda state, xs, ys, k: compiled(state, xs, ys, jnp.int32(k))


class TensorFlowSteps(Steps):
    def step(self, state: State, batch: Batch) -> tuple[Tensor, State]:
        # With a Python iterator, Keras' train_function calls its compiled one-step function directly.
        return cast("TrainFunction", self.model.train_function)(_One(batch))["loss"], None

    def place(self, array: np.ndarray) -> tf.Tensor:
        import tensorflow as tf

        # Under the lane's keras.device scope: identity makes the copy to that device now, not per step.
        return tf.identity(tf.convert_to_tensor(array))

    def device_loop(self) -> DeviceLoop:
        import tensorflow as tf

        model = self.model

        def loop(xs: tf.Tensor, ys: tf.Tensor, k: tf.Tensor) -> tf.Tensor:
            def body(i: tf.Tensor, _loss: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
                logs = model.train_step((xs[i], ys[i]))
                return i + 1, tf.cast(logs["loss"], tf.float32)

            return tf.while_loop(lambda i, _loss: i < k, body, (tf.constant(0), tf.constant(0.0)))[1]

        compiled = tf.function(loop, jit_compile=bool(model.jit_compile), reduce_retracing=True)
        return lambda state, xs, ys, k: (compiled(xs, ys, tf.constant(k, tf.int32)), state)


class TorchSteps(Steps):
    def step(self, state: State, batch: Batch) -> tuple[Tensor, State]:
        return cast("TorchTrainFunction", self.model.train_function)([batch])["loss"], None

    def place(self, array: np.ndarray) -> torch.Tensor:
        import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

        return torch.as_tensor(array, device="cpu" if self.spec.kind == DeviceKind.CPU else f"cuda:{self.spec.index}")

    def device_loop(self) -> DeviceLoop:
        if self.spec.kind != DeviceKind.GPU:
            raise Unsupported("PyTorch has no on-device loop on a CPU: it needs a CUDA graph, which needs a GPU")
        import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

        model = self.model
        graphs: dict[tuple[int, int, int], tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}

        def loop(state: State, xs: torch.Tensor, ys: torch.Tensor, k: int) -> tuple[torch.Tensor, State]:
            key = (xs.data_ptr(), ys.data_ptr(), k)
            if key not in graphs:
                # The recipe of torch.cuda.graphs: warm up on a side stream, then capture K steps once.
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        model.train_step((xs[0], ys[0]))
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                last: torch.Tensor | None = None
                with torch.cuda.graph(graph):
                    for i in range(k):
                        last = model.train_step((xs[i], ys[i]))["loss"]
                assert last is not None, "a window holds K >= 1 steps"
                graphs[key] = (graph, last)
            graph, loss = graphs[key]
            graph.replay()
            return loss, state

        return loop


def steps_for(keras: ModuleType, model: Model, spec: LaneSpec) -> Steps:
    return {"jax": JaxSteps, "tensorflow": TensorFlowSteps, "torch": TorchSteps}[spec.backend](keras, model, spec)
