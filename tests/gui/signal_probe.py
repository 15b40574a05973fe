"""Emit True across threads (queued) and in one thread (direct) in a fresh interpreter; print the refcount moves.

Run by tests/gui/test_qt_signals.py in its own process, so that no other test's widgets, caches or pending
deletions hold or free references to True while it counts.
"""
from __future__ import annotations

import gc
import json
import sys

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

EMITS = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000


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


def settle(app: QCoreApplication) -> int:
    for _ in range(3):
        app.processEvents()
        gc.collect()
    return sys.getrefcount(True)


def queued(app: QCoreApplication) -> dict:
    receiver, emitter, thread = Receiver(), Emitter(), QThread()
    emitter.moveToThread(thread)
    emitter.flag.connect(receiver.on_flag)  # queued: the receiver lives in the main thread
    emitter.payload.connect(receiver.on_payload)
    thread.started.connect(emitter.run)
    before = settle(app)
    thread.start()
    poll = QTimer()
    poll.timeout.connect(lambda: (receiver.flags == EMITS and receiver.payloads == EMITS) and app.quit())
    poll.start(20)
    QTimer.singleShot(120_000, app.quit)  # never hang: the counts below then say what arrived
    app.exec()
    thread.wait(5000)
    return {"before": before, "after": settle(app), "flags": receiver.flags, "payloads": receiver.payloads}


def direct(app: QCoreApplication) -> dict:
    receiver, emitter = Receiver(), Emitter()
    emitter.flag.connect(receiver.on_flag)
    before = settle(app)
    for _ in range(EMITS):
        emitter.flag.emit(True)
    return {"before": before, "after": settle(app), "flags": receiver.flags}


if __name__ == "__main__":
    app = QCoreApplication([])
    print(json.dumps({"emits": EMITS, "queued": queued(app), "direct": direct(app)}))
