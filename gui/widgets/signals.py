"""Quiet changes: a block of code in which some widgets' signals are held back."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject


@contextmanager
def signals_blocked(*objects: QObject) -> Iterator[None]:
    """Block the signals of `objects` for the length of the block; each goes back to what it was after, so a block
    inside another leaves the outer one's widgets blocked."""
    was = [o.blockSignals(True) for o in objects]
    try:
        yield
    finally:
        for o, blocked in zip(objects, was):
            o.blockSignals(blocked)
