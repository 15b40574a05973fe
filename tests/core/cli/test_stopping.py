"""Stop signals in the command line: the first cancels, a second hurries, and none after the stop ends the process."""
from __future__ import annotations

import io
import os
import signal
import threading

import pytest

from crossover_lab.core.cli.stopping import STOP_SIGNALS, StopSignals


@pytest.fixture
def handlers_kept():
    """The test process's own handlers, as they were before the test."""
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def _signal_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    threading.Event().wait(0.05)  # Python runs the handler at the next bytecode of the main thread


def test_a_second_ctrl_c_after_the_stop_is_neither_an_exception_nor_another_exit_code(handlers_kept):
    said = io.StringIO()
    with StopSignals(said) as stop:
        _signal_self(signal.SIGINT)
        assert stop.cancel.is_set() and not stop.hurry.is_set()
        _signal_self(signal.SIGINT)  # while the work stops: it hurries
        assert stop.hurry.is_set() and "Ctrl-C again" in said.getvalue()
    # The command now prints its last lines on its way to exit 130, its files written: more stop signals landing
    # here, or while the interpreter shuts down (which puts Python handlers back to the default), are ignored.
    assert all(signal.getsignal(sig) == signal.SIG_IGN for sig in STOP_SIGNALS)
    _signal_self(signal.SIGINT)
    _signal_self(signal.SIGTERM)
    assert stop.exit_code == 130


def test_without_a_signal_the_handlers_are_given_back(handlers_kept):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with StopSignals(io.StringIO()) as stop:
        assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert stop.exit_code is None
