"""Which files hold a measurement, so that no output (a profile, a report, a rule file) ever replaces one.

A run's per-batch CSV and its sidecar, a sweep's CSV, its per-batch CSV and their sidecar are what Crossover
measured: each command that writes something else checks its output here before it writes, and refuses a path
that is one of them, or one of the command's own inputs, with a sentence.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from ..config import ConfigError
from ..plain_text import ONE_LINE, printable
from .inputs import InputError, open_regular
from .run_files import sidecar_path
from .sweeps.files import batches_path

_SIDECAR = re.compile(rb'"format"\s*:\s*"crossover-batches/')
_HEAD_BYTES = 64 << 10


def _head(path: Path) -> bytes:
    try:
        with open_regular(str(path)) as fh:
            return fh.read(_HEAD_BYTES)
    except (OSError, InputError):
        return b""


def measurement_kind(path: str | os.PathLike) -> str:
    """What measurement the file at `path` holds ("a run's per-batch CSV", "a sweep's CSV", "a run's sidecar"),
    or "" where it holds none (or nothing is there)."""
    head = _head(Path(path))
    if not head:
        return ""
    if _SIDECAR.search(head[:4096]):
        return "the sidecar of a measured run or sweep (its settings, machine and records' runs)"
    first = head.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip().split(",")
    columns = {c.strip() for c in first}
    if {"run_id", "step", "ms"} <= columns:
        return "a run's per-batch CSV (its measured steps)"
    if {"lane", "width", "flops_per_batch", "median_ms"} <= columns:
        return "a sweep's CSV (its measured points)"
    return ""


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except (OSError, RuntimeError):
        return False


def inputs_files(inputs: Iterable[str | os.PathLike]) -> list[Path]:
    """Each input and the files that belong to it: a CSV's sidecar, a sweep's per-batch CSV and its sidecar."""
    out: list[Path] = []
    for item in inputs:
        path = Path(item).expanduser()
        out.append(path)
        if path.suffix.lower() == ".csv":
            batches = batches_path(path)
            out += [sidecar_path(path), batches, batches.with_suffix(".json")]
    return out


def check_keeps_measurements(target: str | os.PathLike, what: str,
                             inputs: Iterable[str | os.PathLike] = ()) -> None:
    """ConfigError with a sentence where writing `target` would replace a measurement or an input of the same
    command (or a file that belongs to one); nothing where it would not."""
    path = Path(target).expanduser()
    shown = printable(os.fspath(target), ONE_LINE)
    for item in inputs_files(inputs):
        if _same(path, item):
            mine = "one of this command's inputs" if item in [Path(i).expanduser() for i in inputs] else \
                f"a file that belongs to an input ({printable(os.fspath(item), ONE_LINE)})"
            raise ConfigError(f"{what} {shown} is {mine}: writing there would replace what was measured; "
                              "choose another name")
    kind = measurement_kind(path)
    if kind:
        raise ConfigError(f"{what} {shown} is {kind}: Crossover never replaces a measurement with another file; "
                          "choose another name")
