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
from ..json_data import JsonError, parse_json
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


def _class_names(node: object) -> list[str]:
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
    return SavedModel(path=os.path.abspath(path), sha256=digest.hexdigest(), size_bytes=size,
                      name=os.path.splitext(os.path.basename(path))[0])
