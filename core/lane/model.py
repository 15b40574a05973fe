"""Build and compile the model a ModelSpec names (an MLP, a CNN, an RNN or a transformer), on whichever Keras
backend the lane imported."""
from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np

from ..config import CLASSES, INPUT_DIM, ModelSpec, SavedModel, TrainSpec
from ..families import MLP_RATIO, SIDE
from . import factory, saved

if TYPE_CHECKING:
    from types import ModuleType

    from keras import KerasTensor, Layer, Model, Variable

_OPTIMIZERS = {"adam": "Adam", "nadam": "Nadam", "sgd": "SGD", "rmsprop": "RMSprop"}


def set_seed(keras: ModuleType, seed: int) -> None:
    """keras.utils.set_random_seed without TensorFlow in a JAX or torch lane: Keras seeds tf.random whenever
    TensorFlow is installed, which imports it (2-4 s, and its memory) into a lane that never uses it. The same
    seeds otherwise: Python's, NumPy's, Keras' global seed generator, and torch's on the torch backend."""
    backend = keras.backend.backend()
    try:
        from keras.src.backend.common import global_state
        from keras.src.random import seed_generator
        from keras.src.utils import rng_utils
    except ImportError:  # another Keras layout: the public call, TensorFlow and all
        keras.utils.set_random_seed(seed)
        return
    if backend == "tensorflow":
        keras.utils.set_random_seed(seed)
        return
    global_state.set_global_attribute(rng_utils.GLOBAL_RANDOM_SEED, seed)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    random.seed(seed)
    np.random.seed(seed)
    if backend == "torch":
        import torch  # pyright: ignore[reportMissingImports]  # an optional backend, not installed everywhere

        torch.manual_seed(seed)


def build_model(keras: ModuleType, spec: ModelSpec, train: TrainSpec, *, jit: bool, unroll: bool = False) -> Model:
    """The spec's family (core/families.py) on 784 inputs → 10 classes (softmax), compiled with explicit speed
    settings. `unroll`: an RNN's steps unrolled (a cost analysis needs them; training keeps Keras' loop)."""
    set_seed(keras, train.seed)
    optimizer = getattr(keras.optimizers, _OPTIMIZERS[train.optimizer])(learning_rate=train.learning_rate)
    user = spec.saved or spec.factory
    if user is not None:
        # A user's own file (core/lane/saved.py), or their function of the width (core/lane/factory.py: it runs
        # their code).
        model = saved.build(keras, user, train, jit=jit, optimizer=optimizer) if isinstance(user, SavedModel) \
            else factory.build(keras, user, spec.widths[0], train, jit=jit, optimizer=optimizer)
        if keras.backend.backend() == "tensorflow":
            _create_training_state(keras, model)
        return model
    inputs = keras.Input(shape=(INPUT_DIM,))
    x = _FAMILY_BODIES[spec.family](keras, spec, inputs, unroll)
    if spec.dropout > 0:
        x = keras.layers.Dropout(spec.dropout)(x)
    # The softmax stays float32 under mixed precision, as Keras recommends, so the loss is stable.
    outputs = keras.layers.Dense(CLASSES, activation="softmax", dtype="float32")(x)
    name = spec.family + "_" + "_".join(map(str, spec.widths))
    model = keras.Model(inputs, outputs, name=name)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit, steps_per_execution=train.steps_per_execution)
    if keras.backend.backend() == "tensorflow":
        _create_training_state(keras, model)
    return model


def _mlp(keras: ModuleType, spec: ModelSpec, x: KerasTensor, unroll: bool) -> KerasTensor:
    """Dense(w, act) → Dropout for each hidden width but the last, whose Dropout build_model adds."""
    for i, width in enumerate(spec.widths):
        x = keras.layers.Dense(width, activation=spec.activation)(x)
        if spec.dropout > 0 and i < len(spec.widths) - 1:
            x = keras.layers.Dropout(spec.dropout)(x)
    return x


def _cnn(keras: ModuleType, spec: ModelSpec, x: KerasTensor, unroll: bool) -> KerasTensor:
    x = keras.layers.Reshape((SIDE, SIDE, 1))(x)
    side = SIDE
    for filters in spec.widths:
        x = keras.layers.Conv2D(filters, 3, padding="same", activation=spec.activation)(x)
        if side >= 4:
            x = keras.layers.MaxPooling2D(2)(x)
            side //= 2
    return keras.layers.Flatten()(x)


def _rnn(keras: ModuleType, spec: ModelSpec, x: KerasTensor, unroll: bool) -> KerasTensor:
    """The rows as a sequence; tanh and sigmoid as Keras defaults them, so that a GPU lane can use cuDNN."""
    x = keras.layers.Reshape((SIDE, SIDE))(x)
    layer = keras.layers.LSTM if spec.cell == "lstm" else keras.layers.GRU
    for i, units in enumerate(spec.widths):
        x = layer(units, return_sequences=i < len(spec.widths) - 1, unroll=unroll)(x)
    return x


def _transformer(keras: ModuleType, spec: ModelSpec, x: KerasTensor, unroll: bool) -> KerasTensor:
    d = spec.widths[0]
    x = keras.layers.Reshape((SIDE, SIDE))(x)
    x = keras.layers.Dense(d)(x)
    x = _position_embedding(keras)(x)
    for _ in spec.widths:
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.MultiHeadAttention(spec.heads, d // spec.heads)(h, h)
        x = keras.layers.Add()([x, h])
        h = keras.layers.LayerNormalization()(x)
        h = keras.layers.Dense(MLP_RATIO * d, activation=spec.activation)(h)
        h = keras.layers.Dense(d)(h)
        x = keras.layers.Add()([x, h])
    return keras.layers.GlobalAveragePooling1D()(x)


def _position_embedding(keras: ModuleType) -> Layer:
    """A learned vector per token position, added to the tokens (a layer of our own: Keras has none built in)."""

    class PositionEmbedding(keras.layers.Layer):
        def build(self, input_shape: tuple[int | None, ...]) -> None:
            self.table = self.add_weight(shape=tuple(input_shape[1:]), initializer="random_normal", name="table")

        def call(self, tokens: KerasTensor) -> KerasTensor:
            return tokens + self.table

    return PositionEmbedding()


_FAMILY_BODIES = {"mlp": _mlp, "cnn": _cnn, "rnn": _rnn, "transformer": _transformer}


def _create_training_state(keras: ModuleType, model: Model) -> None:
    """Create the optimizer's slots and the metrics' totals now, outside any traced function.

    Keras on TensorFlow (without a distribution strategy) leaves them to the first training step,
    whose tf.function then finds new variables and traces the whole step a second time: on one core
    0.3-0.5 s more before a model's first batch, which a width changed mid-run waits for. The other
    backends build them before their first step already. The steady steps run the same graph.
    """
    x = keras.ops.zeros((1, int(model.inputs[0].shape[-1])))  # a row of the model's features (784, or a file's)
    regression = getattr(model, "loss", None) == "mean_squared_error"  # a user's model with no softmax
    y = keras.ops.zeros((1, *model.outputs[0].shape[1:])) if regression else keras.ops.zeros((1,), dtype="int32")
    model.compute_metrics(x, y, model(x), sample_weight=None)
    model.reset_metrics()  # the one-sample batch above is not part of any epoch's accuracy
    model.optimizer.build(model.trainable_variables)


SHELF_MODELS = 4  # compiled models a lane keeps between runs
SHELF_PARAMS = 20_000_000  # and their parameters in all (one 16384-wide layer alone has 13 M)


class ModelShelf:
    """Compiled models a lane keeps between runs, so that a model timed again (a refinement measuring a
    bracket's end once more, a ramp or a drag coming back to a width) costs only its batches: no build and
    no trace of its step. A model taken from the shelf is reset to the weights and optimizer state it was
    built with, so a run on it trains exactly as on a new one; its first batches are still warm-up."""

    def __init__(self, keras: ModuleType, max_models: int = SHELF_MODELS, max_params: int = SHELF_PARAMS) -> None:
        self.keras, self.max_models, self.max_params = keras, max_models, max_params
        # key → (model, its initial state); oldest first
        self._models: dict[tuple, tuple[Model, list[np.ndarray]]] = {}

    def __len__(self) -> int:
        return len(self._models)

    def get(self, spec: ModelSpec, train: TrainSpec, *, jit: bool) -> tuple[Model, bool]:
        """A model for `spec` and `train`'s compile settings, and whether it came from the shelf."""
        key = self._key(spec, train, jit)
        if key in self._models:
            model, initial = self._models.pop(key)
            self._models[key] = (model, initial)  # the newest again
            set_seed(self.keras, train.seed)
            for variable, value in zip(self._state(model), initial):
                variable.assign(value)
            model.reset_metrics()
            return model, True
        model = build_model(self.keras, spec, train, jit=jit)
        if not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)  # its state is part of what a reuse resets
        self._models[key] = (model, [self.keras.ops.convert_to_numpy(v.value) for v in self._state(model)])
        while len(self._models) > 1 and (len(self._models) > self.max_models or self._params() > self.max_params):
            del self._models[next(iter(self._models))]
        return model, False

    def forget(self, spec: ModelSpec, train: TrainSpec, *, jit: bool) -> None:
        """Take a model off the shelf (one a failure may have left mid-step): the next get builds it anew."""
        self._models.pop(self._key(spec, train, jit), None)

    @staticmethod
    def _key(spec: ModelSpec, train: TrainSpec, jit: bool) -> tuple:
        return (spec, train.batch_size, train.optimizer, train.learning_rate, train.seed,
                train.steps_per_execution, train.mixed_precision, jit)

    def _params(self) -> int:
        return sum(model.count_params() for model, _ in self._models.values())

    @staticmethod
    def _state(model: Model) -> list[Variable]:
        """Everything a step changes: weights (the dropout's seed too) and the optimizer's slots and count."""
        return list(model.variables) + list(model.optimizer.variables)
