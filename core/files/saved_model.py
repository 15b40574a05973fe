"""A user's saved Keras model file, checked before any lane loads it: a regular `.keras` file (a zip holding
`config.json`), within a size bound, with no code in its config; named by its SHA-256 in every record.

Keras loads it in the lane with safe mode on (core/lane/saved.py), which refuses a Lambda layer; this check
says so earlier, with the layer's name, before a lane is asked.
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile

from ..config import ConfigError, SavedModel
from .inputs import InputError, open_regular

MAX_MODEL_BYTES = 4 << 30  # a model file this big would not fit a lane on the machines Crossover is for
CODE_LAYERS = ("Lambda", "TFOpLambda", "SlicingOpLambda")  # layers whose config is code


def _class_names(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["class_name"])] if "class_name" in node else []
        return found + [name for value in node.values() for name in _class_names(value)]
    if isinstance(node, list):
        return [name for value in node for name in _class_names(value)]
    return []


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
                    config = json.loads(archive.read("config.json"))
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
    return SavedModel(path=os.path.abspath(path), sha256=digest.hexdigest(), size_bytes=size,
                      name=os.path.splitext(os.path.basename(path))[0])
