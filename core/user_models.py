"""A user's own model, as a lane found it: a saved Keras file (`--model FILE.keras`) or a factory function
(`--model FILE.py:FUNCTION`), and the data shape Crossover's own models and MNIST have (INPUT_DIM values, CLASSES
labels), which decides what data a user's model can take. core/config.py's ModelSpec holds one of these."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .families import ModelKind
from .plurals import plural

INPUT_DIM, CLASSES = 784, 10


def is_saved_kind(kind: str) -> bool:
    """Whether a kind of model (ModelSpec.kind, a record's `family`) is a user's saved model: "saved NAME"."""
    return ModelKind.parse(kind).saved


@dataclass(frozen=True)
class SavedModel:
    """A user's own saved Keras model (`--model FILE.keras`), as a lane found it when it loaded the file.

    It has no width: its axis is batch size. A lane feeds it flat rows of `features` values (the data's own
    shape), reshaped to `input_shape` in front of the model, and trains it on integer labels below `classes`
    (its softmax output), or, a model whose output is no softmax, on `outputs` real-valued targets per sample
    by mean squared error (a regression; `classes` 0). FLOPs are counted by a walk of its layers in the lane (core/lane/saved.py), forward
    per sample; a training step counts 3x the forward pass (forward, then gradients for the inputs and the
    weights) less `input_flops` once: the first weighted layer reads the data, whose gradient no one needs (the
    rule Crossover's own MLP is counted by, so a user's model of the same layers has the same FLOPs).
    `flops_note` names layers whose work is not counted."""

    path: str  # absolute, on the machine that runs the lanes
    sha256: str
    size_bytes: int
    name: str = ""  # the model's own name, or the file's stem
    input_shape: tuple[int, ...] = ()  # one sample's, as the model takes it
    classes: int = 0  # units of the softmax output
    params: int = 0
    forward_flops: int = 0  # per sample; 0: not counted yet (before a lane inspected the file)
    flops_note: str = ""
    layers: int = 0
    outputs: int = 0  # a regression's values per sample (its output is no softmax); 0 for a classifier
    input_flops: int = 0  # forward FLOPs per sample of its first weighted layer (no input gradient in training)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_shape", tuple(int(d) for d in self.input_shape))

    @property
    def regression(self) -> bool:
        return self.classes == 0 and self.outputs > 0

    @property
    def head_words(self) -> str:
        """What it is trained to give: "5 classes", or "3 outputs (a regression, mean squared error)"."""
        if self.regression:
            return f"{self.outputs} {plural(self.outputs, 'output')} (a regression, mean squared error)"
        return f"{self.classes} classes"

    @property
    def features(self) -> int:
        """Values per sample: the data's rows are this long, and reshaped to input_shape in the lane."""
        size = 1
        for d in self.input_shape:
            size *= d
        return size

    @property
    def inspected(self) -> bool:
        return bool(self.input_shape) and (self.classes > 0 or self.outputs > 0)

    def data_problem(self, data: str) -> str:
        """Why `data` cannot feed this model (a sentence), or "": MNIST and a user's .npz hold rows of 784 values
        with labels 0-9, which fit only a classifier of 784 inputs and at least 10 classes (a regression needs
        real-valued targets: synthetic ones); auto and synthetic fit any."""
        if data in ("auto", "synthetic") or (self.features == INPUT_DIM and self.classes >= CLASSES):
            return ""
        if self.regression:
            return (f"{'MNIST' if data == 'mnist' else data} holds class labels, and {self.name or 'the model'} is a "
                    f"regression ({self.head_words}): use --data synthetic (real-valued targets of its own shape)")
        return (f"{'MNIST' if data == 'mnist' else data} holds rows of {INPUT_DIM} values (28x28) and labels "
                f"0-{CLASSES - 1}; {self.name or 'the model'} takes {'x'.join(map(str, self.input_shape))} = "
                f"{self.features} values and {self.classes} classes: use --data synthetic (data of the model's "
                "own shape), or data that fits it")


def is_factory_kind(kind: str) -> bool:
    """Whether a kind of model (ModelSpec.kind, a record's `family`) is a user's model factory: "factory FUNCTION"."""
    return ModelKind.parse(kind).factory


@dataclass(frozen=True)
class FactoryWidth:
    """The model a factory built at one width, as a lane found it (its shapes, classes, parameters and FLOPs)."""

    width: int
    model: SavedModel

    def __post_init__(self) -> None:
        if isinstance(self.model, Mapping):  # as read back from a file
            object.__setattr__(self, "model", SavedModel(**self.model))


@dataclass(frozen=True)
class FactoryModel:
    """A user's own model factory (`--model FILE.py:FUNCTION`): FUNCTION(width) returns a keras.Model. The app
    never imports the file; a lane does (it runs the user's code, as any script would), once per width it builds.
    `built` holds what a lane found at each width inspected so far: a width's figures are its own model's."""

    path: str  # absolute, on the machine that runs the lanes
    sha256: str
    size_bytes: int
    function: str
    built: tuple[FactoryWidth, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "built", tuple(FactoryWidth(**b) if isinstance(b, Mapping) else b
                                                for b in self.built))

    @property
    def file(self) -> str:
        return Path(self.path).name

    def at(self, width: int) -> SavedModel | None:
        """The model of this width as a lane found it; None before a lane inspected that width."""
        return next((b.model for b in self.built if b.width == width), None)

    def with_built(self, found: "tuple[FactoryWidth, ...] | list[FactoryWidth]") -> "FactoryModel":
        """This factory with `found` added (a width inspected again replaces its entry), kept in width order."""
        mine = {b.width: b for b in self.built} | {b.width: b for b in found}
        return dataclasses.replace(self, built=tuple(mine[w] for w in sorted(mine)))
