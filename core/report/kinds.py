"""How the report and the rule name a kind of model and a group of sweep points (one curve per lane): `analyze`'s
group label (core/files/sweeps/rows.py row_groups) in a reader's words.

A saved model (`--model FILE.keras`, family "saved NAME") has no width: its sweep writes the one width NO_WIDTH
(0) and runs along batch size. So it is "your saved model NAME", never "saved NAME · width 0" nor "width 0,
N hidden layers" (its layers are its own, not hidden layers of a width), and its axis is said to be batch size.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..analysis.points import SweepPoint
from ..config import SAVED, is_saved_kind
from ..families import ModelKind
from ..files.sweeps.rows import SweepRow, curve_point, row_groups

ALONG_BATCH = "along batch size"


def saved_words(kind: str) -> str:
    """"your saved model mine.keras" for the family "saved mine.keras" ("your saved model" when it names none)."""
    parts = ModelKind.parse(kind)
    name = parts.detail if parts.saved else kind
    return f"your saved model {name}" if name else "your saved model"


def _batches(rows: Sequence[SweepRow]) -> str:
    sizes = sorted({r.batch_size for r in rows if r.batch_size})
    if not sizes:
        return ""
    return f" {sizes[0]:,}" if len(sizes) == 1 else f" {sizes[0]:,}–{sizes[-1]:,}"


def saved_model_words(rows: Sequence[SweepRow]) -> str:
    """A saved model's points as a reader names them: "your saved model mine.keras (6 layers), along batch size
    1–1,024"."""
    kind = rows[0].family if rows else SAVED
    layers = sorted({r.layers for r in rows if r.layers})
    depth = (f" ({'/'.join(map(str, layers))} layer{'' if layers == [1] else 's'})" if layers else "")
    return f"{saved_words(kind)}{depth}, {ALONG_BATCH}{_batches(rows)}"


def group_words(label: str, rows: Sequence[SweepRow], batch_axis: bool) -> str:
    """`analyze`'s label of a group in words: its kind of model "saved NAME" is "your saved model NAME", and its
    size "width W" of a group along batch size says so ("along batch size" for a saved model, whose one width
    is no width; "width 256, along batch size" for a model of Crossover's own). "all" stays "all"."""
    if label == "all":
        return label
    width = f"width {rows[0].width:,}" if rows else None
    saved = bool(rows) and is_saved_kind(rows[0].family)
    out = []
    for part in label.split(" · "):
        if is_saved_kind(part):
            out.append(saved_words(part))
        elif batch_axis and part == width:
            out.append(ALONG_BATCH if saved else f"{part}, {ALONG_BATCH}")
        else:
            out.append(part)
    return " · ".join(out)


def worded_groups(rows: Iterable[SweepRow]) -> dict[str, tuple[list[SweepRow], bool]]:
    """row_groups (the groups `analyze` makes), each under group_words' label; a label that two groups would share
    keeps `analyze`'s own."""
    groups = row_groups(rows)
    words = {label: group_words(label, mine, axis) for label, (mine, axis) in groups.items()}
    taken = list(words.values())
    return {(words[label] if taken.count(words[label]) == 1 else label): group for label, group in groups.items()}


def worded_points(rows: Iterable[SweepRow]) -> dict[str, list[SweepPoint]]:
    """group_rows' curves (along batch size a point's x is its batch size), each under group_words' label."""
    return {label: [curve_point(r, axis) for r in mine] for label, (mine, axis) in worded_groups(rows).items()}
