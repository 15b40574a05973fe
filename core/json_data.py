"""JSON as the sidecars, the analysis output and the wire hold it: a type the checker follows, instead of Any.

Read-only containers, so that a `dict[str, float]` (or a `dict[str, Any]` from json.loads) passes as JSON."""
from __future__ import annotations

from typing import Dict, Mapping, Sequence, TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | None | Sequence[JsonValue] | Mapping[str, JsonValue]"
JsonObject: TypeAlias = Dict[str, JsonValue]  # one being built, or handed back to be extended


def as_map(x: JsonValue) -> Mapping[str, JsonValue]:
    """`x` as a JSON object, or an empty one where a file holds something else there (a reader never raises)."""
    return x if isinstance(x, Mapping) else {}


def as_seq(x: JsonValue) -> Sequence[JsonValue]:
    """`x` as a JSON array, or an empty one where a file holds something else there."""
    return x if isinstance(x, (list, tuple)) else ()
