"""The command line's default output streams, looked up when written to."""
from __future__ import annotations

import sys
from typing import TextIO, cast


class _Current:
    """sys.stdout (or stderr) as it is when written to, not as it was when this module was imported: a default
    `out` that follows a redirection (pytest's capture, contextlib.redirect_stdout) instead of writing to a
    stream that has since been replaced or closed."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> object:
        return getattr(getattr(sys, self._name), attr)


STDOUT = cast(TextIO, _Current("stdout"))
STDERR = cast(TextIO, _Current("stderr"))

