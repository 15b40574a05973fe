"""A user's model factory in a lane: FILE.py imported, FUNCTION(width) called, its model checked and counted.

This runs the user's code, in the lane process only, as any script would (the app never imports the file):
the module is imported from its path each time a model is built, with its folder first on sys.path, after
the file's SHA-256 is checked to be the one the app read. What FUNCTION returns must be a keras.Model with one
input of a fully known shape and a softmax output (core/lane/saved.py's checks); it is wrapped behind a reshape
of flat rows and compiled with the run's settings, as a saved model is. Its FLOPs are the layer walk's
(core/lane/saved.py: count_flops, checked against XLA's cost analysis for Crossover's own families); a layer
with weights that the walk does not know is named in the note.

An exception raised by the file or the function becomes a ConfigError naming the file, the function, the width
and the exception's last line: the lane lives on.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, cast

from ..config import ConfigError, FactoryModel, SavedModel, TrainSpec
from . import saved

if TYPE_CHECKING:
    from types import ModuleType

    from keras import Model, Optimizer


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1]}" if text else type(exc).__name__


def _function(factory: FactoryModel) -> Callable[[int], object]:
    """FUNCTION from a fresh import of the file, checked to be the one the app read (its SHA-256)."""
    if saved.file_sha256(factory.path) != factory.sha256:
        raise ConfigError(f"{factory.file} changed since it was checked (its SHA-256 differs): run the command again")
    name = f"crossover_factory_{factory.sha256[:16]}"
    spec = importlib.util.spec_from_file_location(name, factory.path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{factory.file} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(factory.path).parent)
    sys.modules[name] = module  # dataclasses and pickling look a class's module up while it is defined
    sys.path.insert(0, folder)  # the file's own imports find its neighbours, as a script's would
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"importing {factory.file} raised {_last_line(exc)}") from None
    finally:
        sys.modules.pop(name, None)
        if folder in sys.path:
            sys.path.remove(folder)
    function = getattr(module, factory.function, None)
    if not callable(function):
        raise ConfigError(f"{factory.file} has no function {factory.function} once imported")
    return function


def _call(keras: ModuleType, factory: FactoryModel, width: int) -> Model:
    """FUNCTION(width), checked to be a keras.Model."""
    function = _function(factory)
    call = f"{factory.function}({width}) in {factory.file}"
    try:
        model = function(width)
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"{call} raised {_last_line(exc)}") from None
    if not isinstance(model, keras.Model):
        raise ConfigError(f"{call} returned {type(model).__name__}, not a keras.Model")
    return cast("Model", model)


def inspect(keras: ModuleType, factory: FactoryModel, width: int) -> SavedModel:
    """The model FUNCTION(width) builds, as this lane finds it: its shapes, classes, parameters and FLOPs."""
    model = _call(keras, factory, width)
    found = saved.describe(model, factory.path, factory.sha256, factory.size_bytes,
                           f"the model {factory.function}({width}) returned")
    if found.forward_flops <= 0:
        raise ConfigError(f"{factory.function}({width}) in {factory.file}: the walk of its layers counts no FLOPs "
                          f"({found.flops_note or 'no layer it counts'}), and Crossover's map needs them")
    return found


def build(keras: ModuleType, factory: FactoryModel, width: int, train: TrainSpec, *, jit: bool,
          optimizer: Optimizer) -> Model:
    """FUNCTION(width) behind a reshape of flat rows, compiled with the run's settings; refused when the model
    is not the one inspected at this width (its input, classes or parameters differ)."""
    figures = factory.at(width)
    if figures is None:
        raise ConfigError(f"{factory.function}({width}) has not been inspected: its figures are not known")
    inner = _call(keras, factory, width)
    what = f"the model {factory.function}({width}) returned"
    now = saved.describe(inner, factory.path, factory.sha256, factory.size_bytes, what)
    if (now.input_shape, now.classes, now.params) != (figures.input_shape, figures.classes, figures.params):
        raise ConfigError(f"{what} is not the one inspected at width {width} (input, classes or parameters "
                          "differ): does the function depend on more than its width?")
    return saved.wrap(keras, inner, figures, train, jit=jit, optimizer=optimizer,
                      name=f"factory_{factory.function}_{width}")
