"""PySide6 regression guard: emitting bools and objects across threads must not leak or drop references.

PySide6 6.12.0 on Python 3.11 drops a reference to True on every Signal(bool) emit; after a few
thousand the interpreter frees True and crashes. pyproject pins PySide6 below 6.12 for that reason;
this test fails on a version that brings the bug back.
"""
from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, QThread, Signal, Slot

EMITS = 20_000
# Other objects (freed widgets, caches) hold a few hundred references to True that come and go;
# the bug moves the count by one per emit, 20000 or more here.
TOLERANCE = 1000


def settle(qapp) -> int:
    """Deliver pending events and collect garbage, then read the refcount of True."""
    for _ in range(3):
        qapp.processEvents()
        gc.collect()
    return sys.getrefcount(True)


class Emitter(QObject):
    flag = Signal(bool)
    payload = Signal(object)

    @Slot()
    def run(self) -> None:
        for _ in range(EMITS):
            self.flag.emit(True)
            self.payload.emit(True)
        QThread.currentThread().quit()


class Receiver(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.flags = self.payloads = 0

    @Slot(bool)
    def on_flag(self, value: bool) -> None:
        self.flags += value is True

    @Slot(object)
    def on_payload(self, value: object) -> None:
        self.payloads += value is True


def test_queued_emits_keep_the_refcount_of_true_stable(qtbot, qapp):
    receiver = Receiver()
    emitter = Emitter()
    thread = QThread()
    emitter.moveToThread(thread)
    emitter.flag.connect(receiver.on_flag)  # queued: the receiver lives in this (GUI) thread
    emitter.payload.connect(receiver.on_payload)
    thread.started.connect(emitter.run)
    before = settle(qapp)
    thread.start()
    qtbot.waitUntil(lambda: receiver.flags == EMITS and receiver.payloads == EMITS, timeout=60_000)
    thread.wait(5000)
    after = settle(qapp)
    assert abs(after - before) < TOLERANCE, f"refcount of True went from {before} to {after}"


def test_direct_emits_keep_the_refcount_of_true_stable(qtbot, qapp):
    receiver = Receiver()
    emitter = Emitter()
    emitter.flag.connect(receiver.on_flag)
    before = settle(qapp)
    for _ in range(EMITS):
        emitter.flag.emit(True)
    assert receiver.flags == EMITS
    assert abs(settle(qapp) - before) < TOLERANCE
