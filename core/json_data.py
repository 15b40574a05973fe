"""JSON as the sidecars, the analysis output and the wire hold it: a type the checker follows, instead of Any.

Read-only containers, so that a `dict[str, float]` (or a `dict[str, Any]` from json.loads) passes as JSON."""
from __future__ import annotations

import json
import math
import re
from typing import Dict, Mapping, Sequence, TypeAlias, overload

import numpy as np

JsonValue: TypeAlias = "str | int | float | bool | None | Sequence[JsonValue] | Mapping[str, JsonValue]"
JsonObject: TypeAlias = Dict[str, JsonValue]  # one being built, or handed back to be extended


@overload
def json_clean(value: dict[str, JsonValue]) -> dict[str, JsonValue]: ...


@overload
def json_clean(value: JsonValue) -> JsonValue: ...


def json_clean(value: JsonValue) -> JsonValue:
    """JSON has no NaN: missing figures become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_clean(v) for v in value]
    return value


def finite_or_none(x: float | None) -> float | None:
    """A float as JSON holds a figure: itself where finite, null (None) where unknown (NaN) or unbounded. The one
    helper every writer of figures uses (analysis JSON, analyze --json, the anatomy's file)."""
    return x if x is not None and math.isfinite(x) else None


def as_map(x: JsonValue) -> Mapping[str, JsonValue]:
    """`x` as a JSON object, or an empty one where a file holds something else there (a reader never raises)."""
    return x if isinstance(x, Mapping) else {}


def as_seq(x: JsonValue) -> Sequence[JsonValue]:
    """`x` as a JSON array, or an empty one where a file holds something else there."""
    return x if isinstance(x, (list, tuple)) else ()


MAX_DEPTH = 64  # deeper than anything Crossover writes (a sidecar nests about 6 deep); what is deeper is damage


class JsonError(ValueError):
    """Text that is not JSON Crossover can read: not JSON, nested too deep, or too long; the message says which."""


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def nesting_depth(text: str | bytes) -> int:
    """How deep the arrays and objects of a JSON text nest, counted without parsing it (strings left out): so that
    a text nested 100,000 deep is refused before a recursive parser meets it. Linear in the text's length."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    codes = np.frombuffer(_STRINGS.sub(b'""', data), dtype=np.uint8)
    if codes.size == 0:
        return 0
    steps = ((codes == 0x5B) | (codes == 0x7B)).astype(np.int32) - ((codes == 0x5D) | (codes == 0x7D))
    return int(max(0, np.cumsum(steps).max()))


def parse_json(text: str | bytes, what: str, max_depth: int = MAX_DEPTH) -> JsonValue:
    """`text` parsed, if it is JSON no deeper than `max_depth`; else JsonError with a sentence naming `what`.
    The one reader of JSON that came from outside (files, the wire, a model's config): how much is read is the
    caller's bound (core/files/inputs.py read_text_bounded), how deep is this one's."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JsonError(f"{what} nests {depth} levels deep, more than the {max_depth} Crossover reads: it is damaged "
                        "or was not written by Crossover")
    try:
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JsonError(f"{what} is not JSON ({exc})") from None
    except ValueError:  # an integer of more than 4,300 digits: Python refuses to convert it, in no JSONDecodeError
        raise JsonError(f"{what} holds a number thousands of digits long: it is damaged or was not written by "
                        "Crossover") from None
    except (RecursionError, MemoryError):
        raise JsonError(f"{what} is too large or too deep to read") from None
