"""Build and compile the MLP from a ModelSpec, on whichever Keras backend the lane imported."""
from __future__ import annotations

from typing import Any

from crossover_lab.core.config import CLASSES, INPUT_DIM, ModelSpec, TrainSpec

_OPTIMIZERS = {"adam": "Adam", "nadam": "Nadam", "sgd": "SGD", "rmsprop": "RMSprop"}


def build_model(keras: Any, spec: ModelSpec, train: TrainSpec, *, jit: bool) -> Any:
    """784 → Dense(w, act) → Dropout … → Dense(10, softmax), compiled with explicit speed settings."""
    keras.utils.set_random_seed(train.seed)
    layers: list[Any] = [keras.Input(shape=(INPUT_DIM,))]
    for width in spec.widths:
        layers.append(keras.layers.Dense(width, activation=spec.activation))
        if spec.dropout > 0:
            layers.append(keras.layers.Dropout(spec.dropout))
    # The softmax stays float32 under mixed precision, as Keras recommends, so the loss is stable.
    layers.append(keras.layers.Dense(CLASSES, activation="softmax", dtype="float32"))
    model = keras.Sequential(layers, name="mlp_" + "_".join(map(str, spec.widths)))
    optimizer = getattr(keras.optimizers, _OPTIMIZERS[train.optimizer])(learning_rate=train.learning_rate)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit, steps_per_execution=train.steps_per_execution)
    return model
