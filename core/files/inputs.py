"""Files Crossover reads (a CSV to analyze, a sidecar, a .npz to train on): regular files only, and never more than
a bound of them.

A fifo would hang the reader, /dev/zero (or a link to it) would fill the memory: each is refused with a
sentence before a byte is read. A file is opened without blocking and checked on the descriptor it is read
through, so it cannot be swapped for a fifo between the check and the read.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO

from ..config import ConfigError
from .atomic import kind_of

MAX_SIDECAR_BYTES = 256 << 20  # a sidecar of a long sweep is a few MB; a quarter of a GB is damage, or an attack


@dataclass
class RowsReading:
    """What reading a file of rows found besides its rows: how many lines, and why some were dropped."""

    path: str
    lines: int = 0
    dropped: Counter = field(default_factory=Counter)  # problem → rows

    def drop_note(self) -> str:
        """"…: dropped 3 of 120 rows: 2 whose median_ms is not a positive time…; 1 …", or "" when none were."""
        if not self.dropped:
            return ""
        reasons = "; ".join(f"{n} whose {problem}" for problem, n in self.dropped.most_common())
        return f"{self.path}: dropped {sum(self.dropped.values())} of {self.lines} rows: {reasons}"


class InputError(OSError):
    """A file to read is not a regular file (or cannot be opened); the message is a sentence naming it."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def input_problem(path: str | os.PathLike) -> str:
    """Why `path` cannot be read as a file, as a sentence, or "" when it is a regular file (or a link to one)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{os.fspath(path)} does not exist"
    except OSError as exc:
        return _unreadable(path, exc)
    return _kind_problem(path, mode)


def _unreadable(path: str | os.PathLike, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:  # the system's "too many levels of symbolic links" names neither the link nor a loop
        return (f"{os.fspath(path)} is a symbolic link that leads round in a loop (or through more links than the "
                "system follows): point it at a file")
    return f"cannot read {os.fspath(path)}: {exc.strerror or exc}"


def _kind_problem(path: str | os.PathLike, mode: int) -> str:
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISDIR(mode):
        return f"{os.fspath(path)} is a folder, not a file: name a file in it"
    return f"{os.fspath(path)} is {kind_of(mode)}, not a regular file: Crossover reads only regular files"


def check_input_file(path: str | os.PathLike) -> None:
    """ConfigError (exit 2 in the CLI) with the sentence of input_problem, when there is one."""
    problem = input_problem(path)
    if problem:
        raise ConfigError(problem)


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """`path` opened for reading in binary, if it is a regular file; else InputError with a sentence.

    Opened without blocking (a fifo with no writer would hang an ordinary open), then checked on the
    descriptor itself."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise InputError(errno.ENOENT, f"{os.fspath(path)} does not exist") from None
        raise InputError(exc.errno, _unreadable(path, exc)) from None
    try:
        problem = _kind_problem(path, os.fstat(fd).st_mode)
        if problem:
            raise InputError(errno.EINVAL, problem)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_text_bounded(path: str | os.PathLike, limit: int = MAX_SIDECAR_BYTES) -> str:
    """A regular file's text (UTF-8), if it is no longer than `limit` bytes; else InputError with a sentence.
    UnicodeDecodeError (a ValueError) when its bytes are not UTF-8."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InputError(errno.EFBIG, f"{os.fspath(path)} is longer than {limit >> 20} MB: it is not a file "
                                      "Crossover wrote (or it is damaged)")
    return data.decode("utf-8")


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of the file's bytes as they are now, read a MiB at a time (OSError when it cannot be read)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
