"""PySide6 regression guard: emitting bools and objects across threads must not leak or drop references.

PySide6 6.12.0 on Python 3.11 drops a reference to True on every Signal(bool) emit; after a few
thousand the interpreter frees True and crashes. pyproject pins PySide6 below 6.12 for that reason;
this test fails on a version that brings the bug back.

The emits run in a fresh interpreter (tests/gui/signal_probe.py): inside the test session other tests'
widgets and caches hold thousands of references to True and free them whenever the event loop or the
collector runs, which moved the count by 1,150 in a fresh clone's CI with no bug at all.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).with_name("signal_probe.py")
EMITS = 20_000
# The bug moves the count by one per emit (20,000 or more here); a fresh interpreter's own
# references to True come and go by a few at most.
TOLERANCE = 1000


def probe() -> dict:
    done = subprocess.run([sys.executable, str(PROBE), str(EMITS)], capture_output=True, text=True, timeout=300)
    # A dropped reference too many frees True and kills the interpreter: that is the bug, said as such.
    assert done.returncode == 0, f"the probe died (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_emits_keep_the_refcount_of_true_stable():
    moved = probe()
    queued, direct = moved["queued"], moved["direct"]
    assert queued["flags"] == EMITS and queued["payloads"] == EMITS, queued
    assert direct["flags"] == EMITS, direct
    assert abs(queued["after"] - queued["before"]) < TOLERANCE, f"queued emits moved the refcount of True: {queued}"
    assert abs(direct["after"] - direct["before"]) < TOLERANCE, f"direct emits moved the refcount of True: {direct}"
