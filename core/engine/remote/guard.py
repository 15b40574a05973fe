"""What a remote lane may send, field by field: types down to the items of lists and dicts, finite non-negative
times, bounded numbers, texts, lists and dicts; and its text made safe to print.

The codec (core/messages.py) builds only registered classes and wire.check_types looks at each field's outer
type; this looks at every value, so a hostile or broken remote is refused with a sentence naming the field
(`BatchTiming.ms is -1.0: a time is never negative`) before any of it reaches the code that reads it: a
400-digit integer where a float belongs, a step of 1e300 ms, `"widths": ["evil"]`, a 15 MB dict.

Texts that arrive are returned with control characters escaped (ESC, BEL, CR, U+2028…, never a raw escape
sequence on the user's terminal); "\n" and "\t" stay, so a traceback reads as one.
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import json
import math
import re
import time
import types
import typing
from typing import TYPE_CHECKING, Callable, Mapping, TypeAlias

from ...messages import Wirable, field_types
from ...records import COUNT_SETTINGS, BatchTiming, RunSettings
from ...plain_text import printable

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# A field's declared type as typing.get_type_hints gives it: a class, a Union, tuple[int, ...], Any.
Hint: TypeAlias = "type | types.UnionType | types.GenericAlias | typing._SpecialForm | None"
ANY = typing.cast("Hint", typing.Any)  # a field of any plain data

MAX_TEXT = 64 << 10  # characters in one text (a traceback is a few thousand)
MAX_ITEMS = 200_000  # items in one list (a bundle of records is a few hundred)
MAX_KEYS = 512  # keys in one dict (a lane's settings, a machine's description)
MAX_DICT_BYTES = 256 << 10  # one dict as JSON: a hello's `machine` of 15 MB would be copied into every point
MAX_DEPTH = 24  # nesting of plain data inside a field
MAX_INT = 2 ** 53  # a count, a size, an index: beyond this it is no longer a count
MAX_WIRE_WIDTH = 2 ** 31  # a layer's width: far beyond any a lane can build, within what a file's JSON keeps exact
_WALL_CLOCK = ("at", "clock_at")  # fields that hold time.time()
MAX_MS = 1e12  # about 31 years: a time beyond it is damage, not a measurement
# What a remote lane may send over time (per message is bounded above). A lane reports at most one record per
# training step or call, bundled; the fastest steps are tens of microseconds. Beyond these it is a flood, and
# the app, which keeps every record, would grow without bound: the remote is cut off with a sentence.
MAX_EVENTS_PER_S = 50_000  # averaged over FLOOD_WINDOW_S
FLOOD_WINDOW_S = 5.0
MAX_EVENTS_PER_RUN = 5_000_000  # between two RunStarted: a run of five million steps is hours of 1 ms steps
# Fields that hold a time (ms or seconds), by name: finite where BatchTiming carries them, never negative.
_TIME = re.compile(r"^(ms|.*_ms|.*_s|seconds.*|start_s)$")
# BatchTiming.family: mlp, gru, transformer 4 heads; a user's model by its name or its function: saved my_cnn
_FAMILY_TEXT = re.compile(r"^(?:[a-z]{2,12}( \d{1,3} heads?)?|(?:saved|factory) [\w.\- ]{1,80})$")


class WireRefused(ValueError):
    """A message from a remote lane holds a value the app does not take; the text names the field."""


def checked(message: Wirable) -> Wirable:
    """`message` with its texts made printable, if every value in it fits its field; else WireRefused."""
    return _value(message, ANY, type(message).__name__, 0)


def _refuse(where: str, what: str) -> WireRefused:
    return WireRefused(f"{where} {what}")


def _value(value: Wirable, hint: Hint, where: str, depth: int) -> Wirable:
    if depth > MAX_DEPTH:
        raise _refuse(where, f"is nested more than {MAX_DEPTH} deep")
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        if dataclasses.is_dataclass(value) and type(value) in options:
            options = (type(value),)  # a message of one of the union's kinds: its own fields say what is wrong
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _value(value, option, where, depth)
            except WireRefused as exc:
                errors.append(str(exc))
        raise WireRefused(errors[0] if errors else f"{where} is empty")
    if isinstance(value, bool):
        if hint not in (bool, typing.Any, object):
            raise _refuse(where, f"is {value}, where {_name(hint)} belongs")
        return value
    if isinstance(value, int) or isinstance(value, float):
        return _number(value, hint, where)
    if isinstance(value, str) and isinstance(hint, type) and issubclass(hint, enum.Enum) and issubclass(hint, str):
        if value not in {member.value for member in hint}:  # a state as its name: one of its type's, or refused
            raise _refuse(where, f"is {printable(value[:40])!r}, not one of {', '.join(m.value for m in hint)}")
        return hint(value)
    if isinstance(value, str):
        if hint not in (str, typing.Any, object):
            raise _refuse(where, f"is a text, where {_name(hint)} belongs")
        if len(value) > MAX_TEXT:
            raise _refuse(where, f"is a text of {len(value):,} characters, more than the {MAX_TEXT:,} allowed")
        return printable(value)
    if value is None:
        if hint not in (type(None), typing.Any, object) and hint is not None:
            raise _refuse(where, f"is empty (null), where {_name(hint)} belongs")
        return None
    if isinstance(value, (list, tuple)):
        if origin not in (tuple, list) and hint not in (typing.Any, object):
            raise _refuse(where, f"is a list, where {_name(hint)} belongs")
        if len(value) > MAX_ITEMS:
            raise _refuse(where, f"is a list of {len(value):,} items, more than the {MAX_ITEMS:,} allowed")
        args = typing.get_args(hint)
        if origin is tuple and args and args[-1] is not Ellipsis and len(args) != len(value):
            raise _refuse(where, f"has {len(value)} items, where {len(args)} belong")
        if not args:
            item_hints: list[Hint] = [ANY] * len(value)
        elif origin is list or args[-1] is Ellipsis:
            item_hints = [args[0]] * len(value)  # list[X], tuple[X, ...]
        else:
            item_hints = list(args)  # tuple[X, Y]: one hint per item
        items = [_value(v, h, f"{where}[{i}]", depth + 1) for i, (v, h) in enumerate(zip(value, item_hints))]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        if origin is not dict and hint not in (typing.Any, object):
            raise _refuse(where, f"is a dict, where {_name(hint)} belongs")
        if len(value) > MAX_KEYS:
            raise _refuse(where, f"has {len(value):,} keys, more than the {MAX_KEYS} allowed")
        args = typing.get_args(hint)
        item_hint: Hint = args[1] if len(args) == 2 else ANY
        out: dict[str, Wirable] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _refuse(where, "has a key that is not a text")
            out[printable(key[:200])] = _value(item, item_hint, f"{where}.{printable(key[:40])}", depth + 1)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        if isinstance(hint, type) and hint not in (typing.Any, object) and not isinstance(value, hint):
            raise _refuse(where, f"is a {cls.__name__}, where {_name(hint)} belongs")
        hints: Mapping[str, Hint] = field_types(cls)
        changes: dict[str, Wirable] = {}
        for f in dataclasses.fields(value):
            here = f"{cls.__name__}.{f.name}"
            field_hint = hints[f.name]
            item = getattr(value, f.name)
            if isinstance(item, dict):
                _dict_size(item, here)
            changes[f.name] = item = _value(item, field_hint, here, depth + 1)
            if isinstance(item, (int, float)) and not isinstance(item, bool) and field_hint in (float, int) \
                    and _TIME.match(f.name):
                _time(item, here, finite=cls is BatchTiming)
        _fields_of(value, changes)
        return dataclasses.replace(value, **changes) if any(
            changes[k] is not getattr(value, k) for k in changes) else value
    raise _refuse(where, f"holds {type(value).__name__}, which is not plain data")


def _dict_size(value: dict, where: str) -> None:
    try:
        size = len(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        raise _refuse(where, "is not plain data") from None
    if size > MAX_DICT_BYTES:
        raise _refuse(where, f"is {size >> 10:,} kB of data, more than the {MAX_DICT_BYTES >> 10} kB allowed")


def _name(hint: Hint) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _number(value: int | float, hint: Hint, where: str) -> int | float:
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise _refuse(where, f"is a number of {len(str(abs(value)))} digits, more than a count or a time has")
        if hint is int or hint in (typing.Any, object):
            return value
        if hint is float:
            return value
        raise _refuse(where, f"is a number, where {_name(hint)} belongs")
    if hint is int:
        raise _refuse(where, f"is {value!r}, where a whole number belongs")
    if hint not in (float, typing.Any, object):
        raise _refuse(where, f"is a number, where {_name(hint)} belongs")
    if math.isinf(value):
        raise _refuse(where, f"is {value}, not a finite number")
    return value


def _time(value: int | float, where: str, finite: bool) -> None:
    if math.isnan(value):
        if finite:
            raise _refuse(where, "is NaN, where a measured time belongs")
        return  # a figure that could not be measured (a summary of no steps)
    if value < 0:
        raise _refuse(where, f"is {value!r}: a time is never negative")
    limit = MAX_MS if where.endswith("ms") else MAX_MS / 1000
    if value > limit:
        raise _refuse(where, f"is {value:.3g}, more than any time a lane measures ({limit:.0e})")


def _fields_of(value: DataclassInstance, fields: dict[str, Wirable]) -> None:
    """The rules of particular fields, beyond their types."""
    if isinstance(value, BatchTiming):
        for name in ("epoch", "batch", "step", "samples", "batches", "batch_size", "segment", "requests", "queued",
                     "backlog"):
            number = fields[name]
            if isinstance(number, int) and number < 0:
                raise _refuse(f"BatchTiming.{name}", f"is {number}: it counts, and is never negative")
        if not _FAMILY_TEXT.match(str(fields["family"])):
            raise _refuse("BatchTiming.family", "is not the name of a kind of model (such as lstm or cnn)")
        waits = fields["waits_ms"]
        if isinstance(waits, tuple):
            for wait in waits:
                if isinstance(wait, (int, float)):
                    _time(wait, "BatchTiming.waits_ms", finite=True)
    widths = fields.get("widths")
    if isinstance(widths, tuple) and any(isinstance(w, int) and not 1 <= w <= MAX_WIRE_WIDTH for w in widths):
        raise _refuse(f"{type(value).__name__}.widths", f"holds a width below 1 or above {MAX_WIRE_WIDTH:,}")
    for name in _WALL_CLOCK:  # time.time() stamps the files keep and overlaps compare: never NaN, inf or negative
        stamp = fields.get(name)
        if isinstance(stamp, float) and not (math.isfinite(stamp) and 0 <= stamp < 1e11):
            raise _refuse(f"{type(value).__name__}.{name}", f"is {stamp!r}, not a time of day")
    if isinstance(value, RunSettings):  # its counts are whole numbers by their type; never negative either
        for key in COUNT_SETTINGS:
            item = fields[key]
            if isinstance(item, int) and item < 0:
                raise _refuse(f"RunSettings.{key}", f"is {item}, not a count")


class FloodGate:
    """Counts the events a remote lane sends: a reason to cut it off when they come faster than MAX_EVENTS_PER_S
    over FLOOD_WINDOW_S, or more than MAX_EVENTS_PER_RUN in one run; "" while they do not."""

    def __init__(self, per_s: float = MAX_EVENTS_PER_S, window_s: float = FLOOD_WINDOW_S,
                 per_run: int = MAX_EVENTS_PER_RUN, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_s, self.window_s, self.per_run, self._clock = per_s, window_s, per_run, clock
        self._recent: collections.deque[tuple[float, int]] = collections.deque()
        self._in_window = 0
        self._in_run = 0

    def admit(self, events: int, new_run: bool = False) -> str:
        now = self._clock()
        if new_run:
            self._in_run = 0
        self._in_run += events
        self._recent.append((now, events))
        self._in_window += events
        while self._recent and self._recent[0][0] < now - self.window_s:
            self._in_window -= self._recent.popleft()[1]
        if self._in_window > self.per_s * self.window_s:
            return (f"sent {self._in_window:,} events within {self.window_s:g} s, more than the "
                    f"{int(self.per_s):,} per second a lane can measure")
        if self._in_run > self.per_run:
            return f"sent more than {self.per_run:,} events in one run"
        return ""
