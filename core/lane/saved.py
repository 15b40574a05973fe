"""A user's own saved Keras model in a lane: loaded safely, inspected, counted, and wrapped to take flat rows.

`keras.saving.load_model(path, safe_mode=True)`: a file whose config holds code (a Lambda layer) is refused
by Keras itself, and its sentence is the answer; nothing in the file runs. The model must take one input of a
fully known shape; one that ends in a softmax is a classifier (trained on integer labels below its classes),
any other a regression (trained on real-valued targets of its output's size, by mean squared error).

The lane feeds every model flat rows (core/lane/data.py), so the saved model is wrapped: Input(features) →
Reshape(input_shape) → the saved model. The reshape moves no data. It is compiled with the run's optimizer,
learning rate, jit and steps per execution, and sparse categorical cross-entropy (mean squared error for a
regression): the settings that change speed are the run's, recorded as for every model, not whatever the file was compiled with.

FLOPs, forward, per sample, by a walk of the layers (nested models included), multiply-adds as 2:

    Dense                      2·in·units per position (every axis but the batch and the last)
    Conv1D/2D/3D               2·kernel volume·in channels/groups·filters per output position
    DepthwiseConv2D            2·kernel area·channels·multiplier per output position
    LSTM / GRU / SimpleRNN     gates·2·(in + units)·units per step (gates 4, 3, 1)
    MultiHeadAttention         the four projections, 2·T·d·h·k each, and the scores and the weighted sum, 2·T·S·h·k each
    Embedding, pooling, norms, activations, dropout, reshapes: counted as 0

Any other layer that holds weights is named in `flops_note` ("not counted: …"), so a count that leaves out
work says so.
"""
from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..config import ConfigError, SavedModel, TrainSpec
from ..files import inputs
from ..files.saved_model import available_memory, declared_params_bound, memory_problem, read_member
from ..json_data import JsonValue, parse_json

if TYPE_CHECKING:
    from types import ModuleType

    from keras import KerasTensor, Layer, Model, Optimizer

FREE = {"InputLayer", "Embedding", "Dropout", "SpatialDropout1D", "SpatialDropout2D", "Flatten", "Reshape",
        "Permute", "Activation", "ReLU", "Softmax", "LeakyReLU", "BatchNormalization", "LayerNormalization",
        "GroupNormalization", "UnitNormalization", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
        "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "GlobalAveragePooling1D",
        "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "Add", "Concatenate", "Multiply",
        "Rescaling", "Normalization", "ZeroPadding2D", "Cropping2D", "GaussianNoise", "Identity"}
GATES = {"LSTM": 4, "GRU": 3, "SimpleRNN": 1}


def _shape(tensor: KerasTensor) -> tuple[int, ...]:
    return tuple(int(d) if d is not None else 1 for d in tuple(tensor.shape)[1:])


def _prod(dims: tuple[int, ...] | list[int]) -> int:
    return math.prod(int(d) for d in dims)


def _layer_flops(layer: Layer) -> int | None:
    """Forward FLOPs per sample of one layer, or None when this walk does not know the layer."""
    kind = type(layer).__name__
    if kind in FREE:
        return 0
    try:
        given = layer.input
        tensors = list(given) if isinstance(given, (list, tuple)) else [given]
        inp, out = _shape(tensors[0]), _shape(cast("KerasTensor", layer.output))
    except (AttributeError, ValueError):
        return None
    if kind == "Dense":
        return 2 * _prod(inp[:-1]) * inp[-1] * int(layer.units)
    if kind in ("Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2D"):
        last = layer.data_format == "channels_last"
        channels, positions = (inp[-1], _prod(out[:-1])) if last else (inp[0], _prod(out[1:]))
        kernel = _prod(list(layer.kernel_size))
        if kind == "DepthwiseConv2D":
            return 2 * kernel * channels * int(layer.depth_multiplier) * positions
        groups = int(getattr(layer, "groups", 1) or 1)
        return 2 * kernel * (channels // groups) * int(layer.filters) * positions
    if kind in GATES:
        steps, features, units = inp[0], inp[-1], int(layer.units)
        return GATES[kind] * 2 * (features + units) * units * steps
    if kind == "MultiHeadAttention":
        t, d = inp[0], inp[-1]
        kv = _shape(tensors[1]) if len(tensors) > 1 else inp
        s_len, d_kv = kv[0], kv[-1]
        h, k = int(layer.num_heads), int(layer.key_dim)
        v = int(layer.value_dim or k)
        projections = 2 * t * d * h * k + 2 * s_len * d_kv * h * k + 2 * s_len * d_kv * h * v + 2 * t * h * v * d
        return projections + 2 * t * s_len * h * k + 2 * t * s_len * h * v
    return None


def _walk(model: Model) -> list[Layer]:
    out = []
    for layer in model.layers:
        if hasattr(layer, "layers") and type(layer).__name__ in ("Functional", "Sequential", "Model"):
            out += _walk(layer)
        else:
            out.append(layer)
    return out


def count_flops(model: Model) -> tuple[int, str]:
    """(forward FLOPs per sample, a note naming the weighted layers not counted, "" when none)."""
    total, missed = 0, []
    for layer in _walk(model):
        flops = _layer_flops(layer)
        if flops is None:
            if layer.weights:
                missed.append(type(layer).__name__)
            continue
        total += flops
    note = f"not counted: {', '.join(sorted(set(missed)))}" if missed else ""
    return total, note


def first_weighted_flops(model: Model) -> int:
    """Forward FLOPs per sample of the first layer with weights (in the model's order): it reads the data, so a
    training step needs no gradient for its input, only for its weights (2x its forward pass, not 3x)."""
    for layer in _walk(model):
        if layer.weights:
            return _layer_flops(layer) or 0
    return 0


SAFE_KERAS = (3, 11, 3)  # safe mode could be bypassed below (CVE-2025-1550, -8747, -9906, -9905)


def keras_too_old(version: str) -> str:
    """Why this Keras must not load a user's model file ("" when it may): a lane on another machine may run an
    older Keras than the one pyproject.toml asks for here."""
    try:
        parts = tuple(int(p) for p in version.split("+")[0].split(".")[:3])
    except ValueError:
        return ""  # a development build names itself otherwise: its own safe mode is the one in its source
    if parts < SAFE_KERAS:
        return (f"this lane's Keras is {version}, whose safe mode a model file can get around (CVE-2025-1550, "
                f"CVE-2025-8747, CVE-2025-9906): Crossover loads a saved model only with Keras "
                f"{'.'.join(map(str, SAFE_KERAS))} or later (pip install -U keras there)")
    return ""


def load(keras: ModuleType, path: str) -> Model:
    """The file's model, loaded with safe_mode (a Lambda layer or other code is refused, never run), uncompiled,
    and only by a Keras whose safe mode holds."""
    old = keras_too_old(str(getattr(keras, "__version__", "")))
    if old:
        raise ConfigError(old)
    # What it declares must fit this machine's memory before Keras builds it (a lane on another machine checks its
    # own; the app checked its own before any lane started).
    try:
        with zipfile.ZipFile(path) as archive:
            declared = parse_json(read_member(archive, "config.json", path), f"{Path(path).name}'s config.json")
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ConfigError(f"{Path(path).name} could not be read as a Keras model: {exc}") from None
    problem = memory_problem(declared_params_bound(declared), Path(path).name, available_memory())
    if problem:
        raise ConfigError(problem)
    try:
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    except ValueError as exc:
        text = str(exc)
        if "safe_mode" in text or "Lambda" in text:
            raise ConfigError(f"{Path(path).name} holds code (a Lambda layer or a custom function), which Crossover "
                              "does not run: safe mode refused it. Save the model without it.") from None
        raise ConfigError(f"{Path(path).name} could not be loaded as a Keras model: {text.splitlines()[0]}") from None


def _head(model: Model, what: str = "the saved model") -> tuple[int, int]:
    """(classes, 0) for a model that ends in a softmax (a classifier, trained on integer labels), else (0, the
    values it outputs per sample): a regression, trained on real-valued targets by mean squared error."""
    layer = model.layers[-1]
    while hasattr(layer, "layers") and layer.layers:
        layer = layer.layers[-1]
    activation = getattr(getattr(layer, "activation", None), "__name__", "")
    dims = tuple(model.outputs[0].shape)[1:]
    if not dims or any(d is None for d in dims):
        raise ConfigError(f"{what}'s output shape {tuple(model.outputs[0].shape)} is not fully known")
    if type(layer).__name__ == "Softmax" or activation == "softmax":
        return int(dims[-1]), 0
    return 0, _prod([int(d) for d in dims])


def describe(model: Model, path: str, sha256: str, size_bytes: int, what: str = "the saved model") -> SavedModel:
    """What a lane finds in a model (loaded from a file, or built by a user's function): one input of a fully
    known shape, a softmax over its classes, its parameters and FLOPs; a ConfigError naming `what` otherwise."""
    if len(model.inputs) != 1 or len(model.outputs) != 1:
        raise ConfigError(f"{what} has {len(model.inputs)} inputs and {len(model.outputs)} outputs: "
                          "Crossover feeds one input and trains one output")
    dims = tuple(model.inputs[0].shape)[1:]
    if any(d is None for d in dims) or not dims:
        raise ConfigError(f"{what}'s input shape {tuple(model.inputs[0].shape)} is not fully known: "
                          "build it on a keras.Input of a fixed shape")
    classes, outputs = _head(model, what)
    flops, note = count_flops(model)
    return SavedModel(path=path, sha256=sha256, size_bytes=size_bytes, name=printable(str(model.name)),
                      input_shape=tuple(int(d) for d in dims), classes=classes, params=int(model.count_params()),
                      forward_flops=flops, flops_note=note, layers=len(_walk(model)), outputs=outputs,
                      input_flops=first_weighted_flops(model))


def inspect(keras: ModuleType, path: str, sha256: str, size_bytes: int) -> SavedModel:
    """What a lane found in the file: its shapes, classes, parameters and FLOPs."""
    return describe(load(keras, path), path, sha256, size_bytes)


def file_sha256(path: str) -> str:
    """The file's SHA-256 as it is now; a ConfigError when it cannot be read any more."""
    try:
        return inputs.file_sha256(path)
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read any more: {exc.strerror or exc}") from None


def _nested(layer: Layer) -> list[Layer]:
    """`layer` and every layer inside it, depth first (a model's own name is a scope as its layers' are)."""
    out = [layer]
    for sub in getattr(layer, "layers", None) or []:
        out += _nested(sub)
    return out


# A name TensorFlow takes as a root scope and in its optimizer's slot names (its own patterns are a little wider).
SCOPE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.-]*")


def _renamed(config: JsonValue, names: dict[str, str]) -> JsonValue:
    """`config` with every string that is one of `names` replaced by its new name (a layer's name, and each
    reference to it: the inbound nodes' keras_history, the input and output layers)."""
    if isinstance(config, dict):
        return {key: _renamed(value, names) for key, value in config.items()}
    if isinstance(config, (list, tuple)):
        return [_renamed(value, names) for value in config]
    return names.get(config, config) if isinstance(config, str) else config


def scoped(model: Model) -> Model:
    """`model` with names TensorFlow takes as scopes: a name is cosmetic, and "my model" or a layer "my dense"
    (names Keras saves) makes TensorFlow refuse the model and its optimizer's slots ("'my model' is not a valid
    scope name"). A model whose names all pass is returned as it is; any other is rebuilt from its own config
    (already loaded in safe mode) with each such name in letters, digits and underscores, and given its weights.
    A ConfigError when it cannot be rebuilt so (a subclassed model), saying what to rename."""
    layers = _nested(model)
    bad = sorted({str(layer.name) for layer in layers if not SCOPE_NAME.fullmatch(str(layer.name))})
    if not bad:
        return model
    taken = {str(layer.name) for layer in layers}
    names: dict[str, str] = {}
    for old in bad:
        base = re.sub(r"[^A-Za-z0-9_]", "_", old)[:64]
        new = base = base if base[:1].isalnum() else f"layer{base}"
        count = 1
        while new in taken:
            new, count = f"{base}_{count}", count + 1
        taken.add(new)
        names[old] = new
    shown = ", ".join(repr(printable(name)) for name in bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    try:
        config = _renamed(model.get_config(), names)
        rebuilt = type(model).from_config(config)
        rebuilt.set_weights(model.get_weights())
    except Exception as exc:  # noqa: BLE001: a model that cannot be rebuilt from its config is a sentence
        raise ConfigError(f"the model's names {shown} are not names TensorFlow takes as scopes, and the model could "
                          f"not be rebuilt under new ones ({type(exc).__name__}): rename them with letters, digits "
                          "and underscores, and save it again") from None
    return rebuilt


def wrap(keras: ModuleType, inner: Model, figures: SavedModel, train: TrainSpec, *, jit: bool, optimizer: Optimizer,
         name: str) -> Model:
    """`inner` behind a reshape of flat rows of `figures.features` values, compiled with the run's settings; its
    names made ones TensorFlow takes (`scoped`)."""
    inner = scoped(inner)
    inputs = keras.Input(shape=(figures.features,))
    x = keras.layers.Reshape(figures.input_shape)(inputs) if len(figures.input_shape) > 1 else inputs
    out = inner(x)
    if figures.regression:  # its targets come as flat rows of `outputs` values, as its inputs do
        out = keras.layers.Reshape((figures.outputs,))(out) if len(tuple(out.shape)) > 2 else out
        model = keras.Model(inputs, out, name=name)
        model.compile(optimizer=optimizer, loss="mean_squared_error", metrics=["mean_absolute_error"],
                      jit_compile=jit, steps_per_execution=train.steps_per_execution)
        return model
    model = keras.Model(inputs, out, name=name)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit, steps_per_execution=train.steps_per_execution)
    return model


def build(keras: ModuleType, saved: SavedModel, train: TrainSpec, *, jit: bool, optimizer: Optimizer) -> Model:
    """The saved model behind a reshape of flat rows, compiled with the run's settings; refused when the file is
    no longer the one that was inspected (its SHA-256 differs): its figures would describe another model."""
    if file_sha256(saved.path) != saved.sha256:
        raise ConfigError(f"{Path(saved.path).name} changed since it was opened (its SHA-256 differs): open it again")
    inner = load(keras, saved.path)
    return wrap(keras, inner, saved, train, jit=jit, optimizer=optimizer, name=scope_name(inner.name))


def printable(name: str) -> str:
    """A model's own name as Crossover shows it: control characters (a terminal's escapes) as "?", 128 at most."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", name)[:128]


def scope_name(name: str) -> str:
    """A name TensorFlow takes as a root scope for the wrapping model: the saved model's own name in ASCII letters,
    digits and underscores ("my model" and "modèle_1" are names Keras saves, and TensorFlow's scopes refuse)."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", str(name))[:64]
    return f"saved_{safe or 'model'}"
