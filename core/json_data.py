"""JSON as the sidecars, the analysis output and the wire hold it: a type the checker follows, instead of Any.

Read-only containers, so that a `dict[str, float]` (or a `dict[str, Any]` from json.loads) passes as JSON."""
from __future__ import annotations

from typing import Dict, Mapping, Sequence, TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | None | Sequence[JsonValue] | Mapping[str, JsonValue]"
JsonObject: TypeAlias = Dict[str, JsonValue]  # one being built, or handed back to be extended
