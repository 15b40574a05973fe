"""Model families beside the MLP, as arithmetic: their limits, parameters, FLOPs per training step and names.

Every family reads the same data (28×28 images as 784 values, 10 classes) and reshapes it inside the model
(core/lane/model.py builds them), so data, feeding, timing and the anatomy are the same for all. The width
slider moves each family's own width:

    mlp          hidden units of each Dense layer (ModelSpec's own arithmetic, unchanged)
    cnn          filters of each block: Conv2D 3×3 (padding same) + MaxPool 2×2 while the map is at least 4×4;
                 then Flatten, Dropout and Dense(10)
    rnn          units of each recurrent layer (LSTM or GRU) over the 28 image rows as 28 steps of 28 features;
                 the last layer's final state → Dropout → Dense(10)
    transformer  d_model of every encoder block (one width for all): the 28 rows as tokens, projected to
                 d_model, a learned position embedding, then pre-norm blocks of multi-head self-attention and
                 an MLP of 2·d_model, a mean over tokens, Dropout and Dense(10)

FLOPs count multiply-adds as 2 and take a training step as forward + backward: backward costs twice the
forward (gradients for the inputs and for the weights), except where no input gradient is needed (the first
layer's input is the data), where it costs the forward once more. Biases, activations, normalisation,
softmax, pooling and the optimizer update are left out (O(activations) or O(params), a few per cent at the
widths that matter); tests/core/test_families.py checks the counts against XLA's cost analysis of the compiled
JAX step.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from .plurals import plural


class Family(str, Enum):
    """A model's family (ModelSpec.family): one of Crossover's four, or a user's own model (a saved file, a factory).
    Files, settings and the command line hold its word ("mlp")."""

    MLP = "mlp"
    CNN = "cnn"
    RNN = "rnn"
    TRANSFORMER = "transformer"
    SAVED = "saved"  # a user's own saved Keras model (ModelSpec.saved)
    FACTORY = "factory"  # a user's own model factory, FILE.py:FUNCTION (ModelSpec.factory)

    def __str__(self) -> str:
        return self.value


FAMILIES = (Family.MLP, Family.CNN, Family.RNN, Family.TRANSFORMER)
CELLS = ("lstm", "gru")
SIDE, CHANNELS, CLASSES = 28, 1, 10  # the image: 28×28×1, read as 28 steps (or tokens) of 28 values
LAYER_LIMITS: dict[str, int] = {Family.MLP: 8, Family.CNN: 6, Family.RNN: 4, Family.TRANSFORMER: 6}
WIDTH_LIMITS: dict[str, int] = {Family.MLP: 16384, Family.CNN: 1024, Family.RNN: 4096, Family.TRANSFORMER: 2048}
GATES = {"lstm": 4, "gru": 3}
MLP_RATIO = 2  # the transformer block's MLP: d_model → 2·d_model → d_model


def problems(family: str, widths: tuple[int, ...], cell: str, heads: int) -> list[str]:
    """What is wrong with this family's settings, in words ([] when nothing is)."""
    if family not in FAMILIES:
        return [f"model family {family!r}: choose one of {', '.join(FAMILIES)}"]
    out = []
    most_layers, most_width = LAYER_LIMITS[family], WIDTH_LIMITS[family]
    if len(widths) > most_layers:
        out.append(f"{len(widths)} {layer_word(family)}s: a {family} takes 1-{most_layers}")
    wide = [w for w in widths if w > most_width]
    if wide:
        out.append(f"width {wide[0]}: a {family}'s {width_word(family)} must be at most {most_width:,}")
    if family == Family.RNN and cell not in CELLS:
        out.append(f"recurrent cell {cell!r}: choose lstm or gru")
    if family == Family.TRANSFORMER:
        if len(set(widths)) > 1:
            out.append(f"a transformer's blocks share one d_model (its residual connections add them): "
                       f"{'-'.join(map(str, widths))} are not all equal")
        if heads < 1 or any(w % heads for w in widths):
            out.append(f"{heads} attention heads: choose a number of heads that divides d_model ({widths[0]})")
    return out


def layer_word(family: str) -> str:
    return {"mlp": "hidden layer", "cnn": "block", "rnn": "recurrent layer", "transformer": "encoder block"}[family]


def width_word(family: str) -> str:
    return {"mlp": "units", "cnn": "filters", "rnn": "units", "transformer": "d_model"}[family]


def label(family: str, widths: tuple[int, ...], cell: str, heads: int) -> str:
    """The model's name wherever it is shown: "cnn 32-64", "lstm 128-128", "transformer 2×128 (4 heads)"."""
    if family == Family.CNN:
        return "cnn " + "-".join(map(str, widths))
    if family == Family.RNN:
        return f"{cell} " + "-".join(map(str, widths))
    return f"transformer {len(widths)}×{widths[0]} ({heads} {plural(heads, 'head')})"


def _cnn_maps(widths: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Each block's (input channels, filters, map side before its pool)."""
    side, channels, out = SIDE, CHANNELS, []
    for filters in widths:
        out.append((channels, filters, side))
        channels = filters
        if side >= 4:
            side //= 2
    return out


def cnn_flat(widths: tuple[int, ...]) -> int:
    """Values into the classifier after the last block's pool."""
    side = SIDE
    for _ in widths:
        if side >= 4:
            side //= 2
    return side * side * widths[-1]


def params(family: str, widths: tuple[int, ...], cell: str, heads: int) -> int:
    """Trainable parameters, as Keras counts them for the model core/lane/model.py builds."""
    if family == Family.CNN:
        convs = sum(9 * c_in * c_out + c_out for c_in, c_out, _ in _cnn_maps(widths))
        return convs + cnn_flat(widths) * CLASSES + CLASSES
    if family == Family.RNN:
        total, d = 0, SIDE
        for u in widths:
            g = GATES[cell]
            # Keras' GRU keeps two bias vectors (reset_after=True); the LSTM one.
            total += g * (u * (d + u)) + (2 * g * u if cell == "gru" else g * u)
            d = u
        return total + widths[-1] * CLASSES + CLASSES
    d = widths[0]
    per_block = 4 * d * d + 4 * d + 2 * MLP_RATIO * d * d + MLP_RATIO * d + d + 2 * 2 * d  # attention, MLP, 2 norms
    return SIDE * d + d + SIDE * d + len(widths) * per_block + d * CLASSES + CLASSES


def forward_terms(family: str, widths: tuple[int, ...], cell: str, heads: int) -> list[tuple[int, bool]]:
    """Each layer's forward FLOPs per sample, and whether its input is the data (no input gradient)."""
    if family == Family.CNN:
        maps = [(2 * 9 * c_in * c_out * side * side, i == 0) for i, (c_in, c_out, side) in enumerate(_cnn_maps(widths))]
        return maps + [(2 * cnn_flat(widths) * CLASSES, False)]
    if family == Family.RNN:
        terms, d, steps, g = [], SIDE, SIDE, GATES[cell]
        for i, u in enumerate(widths):
            terms += [(2 * g * u * d * steps, i == 0), (2 * g * u * u * steps, False)]
            d = u
        return terms + [(2 * widths[-1] * CLASSES, False)]
    d, tokens = widths[0], SIDE
    block = (2 * 4 * tokens * d * d  # queries, keys, values and the output projection
             + 2 * 2 * tokens * tokens * d  # the scores and their weighted sum, over all heads
             + 2 * 2 * MLP_RATIO * tokens * d * d)  # the MLP's two layers
    return [(2 * tokens * SIDE * d, True)] + [(block, False)] * len(widths) + [(2 * d * CLASSES, False)]


def flops_per_sample(family: str, widths: tuple[int, ...], cell: str, heads: int, forward: bool = False) -> int:
    """FLOPs per sample of one training step (forward + backward; see the module's docstring), or with
    `forward` of one forward call (a predict)."""
    terms = forward_terms(family, widths, cell, heads)
    return sum(f if forward else (2 if first else 3) * f for f, first in terms)


SAVED, FACTORY = Family.SAVED.value, Family.FACTORY.value  # their words, as a kind of model begins


@dataclass(frozen=True)
class ModelKind:
    """A kind of model, as a value with parts: what a point belongs to beside its depth and batch size. Points of two
    kinds are never joined or crossed. `base` is "mlp", "cnn", "lstm", "gru", "transformer", SAVED or FACTORY;
    `detail` tells two of one base apart: a transformer's "4 heads", a saved model's name, a factory's function.
    Files and rows hold it as its text ("transformer 4 heads", "saved NAME"): str() writes it, `parse` is its one
    reader."""

    base: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.base} {self.detail}" if self.detail else self.base

    @classmethod
    def parse(cls, text: str) -> ModelKind:
        base, _, detail = text.strip().partition(" ")
        return cls(base, detail.strip())

    @property
    def family(self) -> str:
        """The family of FAMILIES ("rnn" for a cell), or SAVED or FACTORY; another base as it is."""
        return Family.RNN if self.base in CELLS else self.base

    @property
    def saved(self) -> bool:
        return self.base == SAVED

    @property
    def factory(self) -> bool:
        return self.base == FACTORY


def kind_of(family: str, cell: str = "lstm", heads: int = 4) -> ModelKind:
    """The kind of one of Crossover's families: "mlp", "cnn", "lstm", "gru", "transformer 4 heads"."""
    if family == Family.RNN:
        return ModelKind(cell)
    if family == Family.TRANSFORMER:
        return ModelKind(Family.TRANSFORMER, f"{heads} {plural(heads, 'head')}")
    return ModelKind(family)


def kind_word(family: str, cell: str = "lstm", heads: int = 4) -> str:
    """The kind of one of Crossover's families as files write it (kind_of's text)."""
    return str(kind_of(family, cell, heads))


def axis_words(kind: str, layers: int) -> str:
    """The map's and the sweep's width axis for a kind of model: "hidden width (2 layers", "filters (2 blocks"."""
    family = ModelKind.parse(kind).family
    if family not in FAMILIES:
        family = "mlp"
    word = {"mlp": "hidden width", "cnn": "filters", "rnn": f"{kind} units", "transformer": "d_model"}[family]
    layer = layer_word(family).replace("hidden ", "")
    return f"{word} ({layers} {plural(layers, layer)}"
