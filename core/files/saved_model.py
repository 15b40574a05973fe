"""A user's saved Keras model file, checked before any lane loads it: a regular `.keras` file (a zip holding
`config.json`), within a size bound, with no code in its config; named by its SHA-256 in every record.

Keras loads it in the lane with safe mode on (core/lane/saved.py), which refuses a Lambda layer; this check
says so earlier, with the layer's name, before a lane is asked.
"""
from __future__ import annotations

import hashlib
import os
import zipfile

from ..config import ConfigError, SavedModel
from ..json_data import JsonError, JsonValue, parse_json
from .inputs import InputError, open_regular

MAX_MODEL_BYTES = 4 << 30  # a model file this big would not fit a lane on the machines Crossover is for
CODE_LAYERS = ("Lambda", "TFOpLambda", "SlicingOpLambda")  # layers whose config is code


MAX_CONFIG_BYTES = 16 << 20  # a model's config.json: a few KB for a few layers; tens of MB is no model


def read_member(archive: zipfile.ZipFile, name: str, path: str, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """One member of the archive, never more than `limit` bytes of it, whatever its header declares (a 645 KB file
    can hold 600 MB of spaces): ConfigError past the bound."""
    with archive.open(name) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(f"{path}: its {name} is longer than {limit >> 20} MB, more than any model's description; "
                          "it is damaged or not a model Keras saved")
    return data


def _class_names(node: JsonValue) -> list[str]:
    """Every class_name in the config, walked without recursion (its depth is bounded by parse_json anyway)."""
    found, todo = [], [node]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if "class_name" in item:
                found.append(str(item["class_name"]))
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


# The sizes a layer's config declares, and the dimension its output then has (None: not one a bound can follow).
_SIZE_KEYS = ("units", "filters", "output_dim", "input_dim", "num_heads", "key_dim", "value_dim")
BYTES_PER_PARAM = 16  # a float32 weight, its gradient and Adam's two moments: what training one needs


def declared_params_bound(config: JsonValue) -> int:
    """An upper bound on the parameters a model's config.json declares, from its layers' sizes alone, read before
    anything is built. Layers are taken in config order; each with a size (Dense units, Conv filters, Embedding
    output_dim, …) counts size × (its input's size × its kernel's area + its own size + 1), 4 times for a
    recurrent layer; its input's size is the previous sized layer's, the input's whole shape at first, and the
    largest size declared anywhere after a layer whose output a bound cannot follow (a Flatten, a Reshape, a
    pooling). Never below the true count for the layers Keras ships; above it where a shape is not followed. A
    48 KB file declaring Dense(300000) took a lane to 3.3 GB as it was built: what would not fit is refused from
    this bound, before any lane builds it."""
    layers: list[dict] = []
    todo: list[JsonValue] = [config]
    while todo:  # walked without recursion, in config order (parse_json bounded its depth)
        item = todo.pop(0)
        if isinstance(item, dict):
            inner = item.get("config")
            if "class_name" in item and isinstance(inner, dict):
                layers.append({"class_name": item["class_name"], **inner})
            todo.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            todo.extend(v for v in item if isinstance(v, (dict, list)))

    def count(x: JsonValue) -> int | None:
        return min(x, CAP) if isinstance(x, int) and not isinstance(x, bool) and x > 0 else None

    sizes = [n for layer in layers for k in _SIZE_KEYS if (n := count(layer.get(k))) is not None]
    inputs = []
    for layer in layers:
        shape = layer.get("batch_shape") or layer.get("batch_input_shape")
        if isinstance(shape, list):
            product = 1
            for d in shape:
                product = min(product * (count(d) or 1), CAP)
            inputs.append(product)
    widest = max(sizes + inputs, default=1)
    # What a Flatten can hold at most: every input position times the most channels any layer makes (a conv net
    # never grows the input's positions here; one that upsamples is bounded by its declared sizes too).
    flat = min(max(inputs, default=1) * max(sizes, default=1), CAP)
    total, previous = 0, max(inputs, default=widest)
    for layer in layers:
        kind = str(layer.get("class_name", ""))
        if kind in _UNFOLLOWED:
            previous = max(widest, flat)
            continue
        if kind == "MultiHeadAttention":  # its query, key, value and output projections
            heads, key = count(layer.get("num_heads")) or 1, count(layer.get("key_dim")) or widest
            value = count(layer.get("value_dim")) or key
            total = min(total + heads * (2 * key + value) * (previous + 1) + heads * value * (previous + 1),
                        CAP * CAP)
            continue
        if kind == "Embedding":  # a table: its vocabulary × its output
            vocabulary, out = count(layer.get("input_dim")) or widest, count(layer.get("output_dim")) or widest
            total, previous = min(total + vocabulary * out, CAP * CAP), out
            continue
        size = next((n for k in ("units", "filters", "output_dim") if (n := count(layer.get(k))) is not None), None)
        if size is None:
            continue
        kernel = layer.get("kernel_size")
        area = 1
        for k in kernel if isinstance(kernel, list) else [kernel]:
            area = min(area * (count(k) or 1), CAP)
        gates = 4 if kind in ("LSTM", "GRU", "SimpleRNN", "ConvLSTM2D", "Bidirectional") else 1
        total = min(total + gates * size * (previous * area + size + 1), CAP * CAP)
        previous = size
    return total


CAP = 1 << 40  # no size is counted above this (a declared 10^400 is a number, not a layer)
_UNFOLLOWED = ("Flatten", "Reshape", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
               "GlobalMaxPooling2D", "Concatenate", "Permute", "RepeatVector")


def memory_problem(params: int, name: str, available: int) -> str:
    """Why a model of up to `params` parameters cannot be built here (a sentence), or ""."""
    need = params * BYTES_PER_PARAM
    if need <= available:
        return ""
    return (f"{name} declares layers that may hold up to {params:,} parameters: about {need / 2**30:,.1f} GiB to "
            f"train, more than the {available / 2**30:,.1f} GiB this machine has free; Crossover does not build it")


def available_memory() -> int:
    """Bytes of memory free for a new process here (psutil's available)."""
    import psutil

    return int(psutil.virtual_memory().available)


def check_saved_model(path: str) -> SavedModel:
    """The file as a SavedModel not yet inspected (its path, hash and size), or a ConfigError that says why not."""
    if not path.endswith(".keras"):
        raise ConfigError(f"--model {path}: a saved Keras 3 model ends in .keras (model.save('name.keras'))")
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_MODEL_BYTES:
                raise ConfigError(f"{path} is {size / 2**30:.1f} GiB: more than the {MAX_MODEL_BYTES >> 30} GiB "
                                  "a model file may be")
            digest = hashlib.sha256()
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
            fh.seek(0)
            try:
                with zipfile.ZipFile(fh) as archive:
                    config = parse_json(read_member(archive, "config.json", path), f"{path}'s config.json")
            except JsonError as exc:
                raise ConfigError(str(exc)) from None
            except (zipfile.BadZipFile, KeyError, ValueError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path} is not a saved Keras 3 model (a .keras zip holding config.json): "
                                  f"{exc}") from None
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    code = sorted(set(_class_names(config)) & set(CODE_LAYERS))
    if code:
        raise ConfigError(f"{os.path.basename(path)} holds code ({', '.join(code)} layer), which Crossover does not "
                          "run: Keras' safe mode refuses it. Save the model without it.")
    problem = memory_problem(declared_params_bound(config), os.path.basename(path), available_memory())
    if problem:
        raise ConfigError(problem)
    return SavedModel(path=os.path.abspath(path), sha256=digest.hexdigest(), size_bytes=size,
                      name=os.path.splitext(os.path.basename(path))[0])
