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
    if keras.backend.backend() == "tensorflow":
        _create_training_state(keras, model)
    return model


def _create_training_state(keras: Any, model: Any) -> None:
    """Create the optimizer's slots and the metrics' totals now, outside any traced function.

    Keras on TensorFlow (without a distribution strategy) leaves them to the first training step,
    whose tf.function then finds new variables and traces the whole step a second time: on one core
    0.3-0.5 s more before a model's first batch, which a width changed mid-run waits for. The other
    backends build them before their first step already. The steady steps run the same graph.
    """
    x = keras.ops.zeros((1, INPUT_DIM))
    y = keras.ops.zeros((1,), dtype="int32")
    model.compute_metrics(x, y, model(x), sample_weight=None)
    model.reset_metrics()  # the one-sample batch above is not part of any epoch's accuracy
    model.optimizer.build(model.trainable_variables)
