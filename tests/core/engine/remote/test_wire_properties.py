"""The wire from a remote lane, property-based (issue 20): whatever JSON a hostile or broken remote puts in any field
of any message, the decoder gives a message typed as declared, or refuses the line with a ValueError (which the
channel turns into a sentence). Never another exception, never a value that would break a reader downstream.

Every registered message is built from its type hints (core/messages.py's registry and the wire's own), then one
field at any depth of its JSON is replaced by an arbitrary JSON value (huge integers, NaN and infinities, deep
nesting, control characters, unknown tags), or the whole line is arbitrary JSON or bytes.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crossover_lab.core import messages
from crossover_lab.core.analysis import anatomy  # noqa: F401  # registers the anatomy's point and its reply
from crossover_lab.core.engine.remote import wire
from crossover_lab.core.messages import Bundle, to_wire

REGISTRY = dict(messages._REGISTRY)  # every class the decoder may build (the wire module registers its own)
assert {"RemoteHello", "DevicesListed", "Refused", "BatchTiming", "AnatomyMeasured"} <= set(REGISTRY)


def _sample(tp: typing.Any) -> typing.Any:
    """A plain valid value of a type hint: enough to build each message once."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in (int, float, bool, str, type(None)):
        return {int: 1, float: 1.0, bool: False, str: "cpu", type(None): None}[tp]
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in args if a is not type(None)))
    if origin is tuple:
        return tuple(_sample(a) for a in (args[:1] if args[-1] is Ellipsis else args))
    if origin in (dict, typing.Mapping) or tp is dict or origin is list:
        return {} if origin is not list else []
    if dataclasses.is_dataclass(tp):
        return _build(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp))  # a state: its first member
    return 1  # Any


def _build(cls: type) -> typing.Any:
    hints = typing.get_type_hints(cls)
    required = {f.name: _sample(hints[f.name]) for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return cls(**required)


SAMPLES = [_build(cls) for cls in REGISTRY.values()]
EVENTS = typing.get_args(typing.get_args(typing.get_type_hints(Bundle)["events"])[0])  # what a bundle carries
SAMPLES.append(Bundle(tuple(s for s in SAMPLES if type(s) in EVENTS)))
WIRES = [to_wire(s) for s in SAMPLES]


def _same(a: typing.Any, b: typing.Any) -> bool:
    """Equal JSON data, a NaN equal to a NaN (a figure that could not be measured, such as a summary of no steps)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _floats(node: typing.Any) -> list[float]:
    if isinstance(node, float):
        return [node]
    if isinstance(node, dict):
        return [f for v in node.values() for f in _floats(v)]
    return [f for v in node for f in _floats(v)] if isinstance(node, list) else []


def test_every_sample_is_a_valid_message():
    for sample, data in zip(SAMPLES, WIRES):
        assert _same(to_wire(wire.decode(json.dumps(data).encode())), to_wire(sample))


def _paths(node: typing.Any, here: tuple = ()) -> list[tuple]:
    """Every place in a message's JSON a value sits at (a dict key or a list index), the tag included."""
    found = [here] if here else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, here + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _paths(value, here + (i,))
    return found


def _replaced(node: typing.Any, path: tuple, value: typing.Any) -> typing.Any:
    if not path:
        return value
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[path[0]] = _replaced(copy[path[0]], path[1:], value)
    return copy


SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-10 ** 600, max_value=10 ** 600)
           | st.floats() | st.text(max_size=40) | st.sampled_from(["", "\u2028", "\x85", "\x1b[2J", "\x00", "nan",
                                                                    "@", "cpu", "gpu", "tensorflow", "x" * 70_000]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8) | st.just("@"), inner, max_size=4)
                    | st.fixed_dictionaries({"@": st.sampled_from(sorted(REGISTRY) + ["Nope", "RunJob"])}), max_leaves=12)


def _typed_as_declared(obj: typing.Any) -> None:
    """What a reader may rely on: no infinity got through, and the message writes again as JSON that decodes equal."""
    data = to_wire(obj)
    assert not any(math.isinf(f) for f in _floats(data))
    assert _same(to_wire(wire.decode(json.dumps(data).encode())), data)


def _decodes_or_refuses(line: bytes) -> None:
    try:
        message = wire.decode(line)
    except ValueError:
        return  # a refusal: the channel says it in a sentence naming the field
    assert type(message).__name__ in REGISTRY or isinstance(message, (list, dict, str, int, float, bool, type(None)))
    _typed_as_declared(message)


# A sample of 300 in the fast set; the whole 1,500 in `make test`'s second set (marked `thorough`).
ANY_FIELD = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=300, **ANY_FIELD)
@given(st.data())
def test_any_value_in_any_field_gives_a_typed_message_or_a_refusal(data):
    _any_value_in_any_field(data)


@pytest.mark.thorough
@settings(max_examples=1500, **ANY_FIELD)
@given(st.data())
def test_any_value_in_any_field_gives_a_typed_message_or_a_refusal_thoroughly(data):
    _any_value_in_any_field(data)


def _any_value_in_any_field(data) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(WIRES) - 1), label="message")
    paths = _paths(WIRES[i])
    if not paths:
        return
    path = data.draw(st.sampled_from(paths), label="field")
    value = data.draw(JSON, label="value")
    _decodes_or_refuses(json.dumps(_replaced(WIRES[i], path, value)).encode())


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(JSON)
def test_any_json_line_gives_a_typed_message_or_a_refusal(value):
    _decodes_or_refuses(json.dumps(value).encode())


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_typed_message_or_a_refusal(line):
    _decodes_or_refuses(line)


WRONG = (None, True, 0, -1, 1.5, 10 ** 400, float("nan"), float("inf"), "", "x", "\u2028", [], [1], {}, {"@": "RunJob"})


def test_every_field_with_every_wrong_kind_of_value_gives_a_typed_message_or_a_refusal():
    """Exhaustive where the property test samples: each place in each message, each kind of JSON value."""
    tried = 0
    for data in WIRES:
        for path in _paths(data):
            for value in WRONG:
                _decodes_or_refuses(json.dumps(_replaced(data, path, value)).encode())
                tried += 1
    assert tried > 5000
