"""Checking a user's training file (.npz) before anything is trained: shapes, sizes and values, with a sentence each.

`inspect_npz` reads the archive's array headers, then streams through the values a chunk at a
time, so a file larger than memory is refused by its declared size rather than loaded. The
same value rules (`check_arrays`) run again in the lane on the arrays it loaded. Arrays of
Python objects are never unpickled.
"""
from __future__ import annotations

import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ..config import CLASSES, INPUT_DIM
from .inputs import InputError, input_problem, open_regular

CHUNK_BYTES = 8 << 20
NEEDED = ("x_train", "y_train")


class DataError(RuntimeError):
    """The data source the user asked for cannot be used; the message says why."""


@dataclass(frozen=True)
class NpzInfo:
    samples: int
    x_dtype: str
    y_shape: tuple[int, ...]


def available_bytes() -> int:
    """The memory this process's lanes may still take: the machine's free memory, or what is left under the
    cgroup's limit (a container, a systemd slice) when that is less."""
    try:
        import psutil

        free = int(psutil.virtual_memory().available)
    except Exception:  # no psutil or no /proc: no limit rather than a wrong one
        free = 1 << 62
    left = cgroup_bytes_left()
    return free if left is None else min(free, left)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read(64).strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def cgroup_bytes_left(root: str = "/sys/fs/cgroup") -> int | None:
    """What is left under the tightest memory limit of this process's cgroup and those above it (v2, or v1's
    memory controller), or None where there is no limit."""
    where = {"v2": "", "v1": ""}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as fh:
            for line in fh.read(1 << 16).split("\n"):
                hierarchy, _, rest = line.partition(":")
                controllers, _, path = rest.partition(":")
                if hierarchy == "0" and not controllers:
                    where["v2"] = path.strip()
                elif "memory" in controllers.split(","):
                    where["v1"] = path.strip()
    except OSError:
        pass
    lefts = []
    for version, base, limit_name, usage_name in (("v2", root, "memory.max", "memory.current"),
                                                  ("v1", f"{root}/memory", "memory.limit_in_bytes",
                                                   "memory.usage_in_bytes")):
        parts = [part for part in where[version].split("/") if part and part != ".."]
        for depth in range(len(parts), -1, -1):
            folder = "/".join([base, *parts[:depth]])
            limit = _read_int(f"{folder}/{limit_name}")
            if limit is not None and limit < 1 << 60:  # v1 says "no limit" with a huge number, v2 with "max"
                lefts.append(max(0, limit - (_read_int(f"{folder}/{usage_name}") or 0)))
    return min(lefts) if lefts else None


def _header(fh: IO[bytes], path: str, name: str) -> tuple[tuple[int, ...], np.dtype]:
    try:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _fortran, dtype = read(fh)
    except ValueError as exc:
        raise DataError(f"{path}: {name} is not a NumPy array ({exc})") from None
    if dtype.hasobject:
        raise DataError(f"{path}: {name} holds Python objects; Crossover reads only numeric arrays "
                        "(it never unpickles a file). Save the arrays as numbers, e.g. np.asarray(x, 'float32').")
    return tuple(shape), dtype


def _chunks(fh: IO[bytes], dtype: np.dtype, count: int):
    per = max(1, CHUNK_BYTES // max(dtype.itemsize, 1))
    left = count
    while left > 0:
        n = min(per, left)
        data = fh.read(n * dtype.itemsize)
        if len(data) < n * dtype.itemsize:
            raise EOFError("the array ends early")
        yield np.frombuffer(data, dtype=dtype)
        left -= n


def check_shapes(path: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> int:
    """The number of samples, if the shapes fit the model (N×784 or N×28×28 inputs; N labels or N×10 one-hot)."""
    if not x_shape or x_shape[0] == 0:
        raise DataError(f"{path}: x_train holds no samples")
    samples = x_shape[0]
    features = int(np.prod(x_shape[1:])) if len(x_shape) > 1 else 1
    if features != INPUT_DIM:
        raise DataError(f"{path}: inputs have {features} features; the model takes {INPUT_DIM} (28×28)")
    if y_shape[:1] != x_shape[:1]:
        raise DataError(f"{path}: {samples} inputs but {y_shape[0] if y_shape else 0} labels")
    if not (len(y_shape) == 1 or (len(y_shape) == 2 and y_shape[1] == CLASSES)):
        raise DataError(f"{path}: labels must be one class number per sample, or one-hot rows of {CLASSES}")
    return samples


def check_labels(path: str, y: np.ndarray, one_hot: bool) -> None:
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise DataError(f"{path}: some labels are NaN or infinite")
    if one_hot:
        return
    if y.dtype.kind == "f" and not (y == np.round(y)).all():
        raise DataError(f"{path}: labels are fractions ({y.dtype}); they must be whole class numbers 0-{CLASSES - 1}")
    if y.dtype.kind not in "iuf":
        raise DataError(f"{path}: labels are {y.dtype}; they must be class numbers 0-{CLASSES - 1}")
    if y.size and (y.min() < 0 or y.max() >= CLASSES):
        raise DataError(f"{path}: labels must be 0-{CLASSES - 1} (found {y.min():g} to {y.max():g})")


def check_inputs(path: str, x: np.ndarray) -> None:
    if x.dtype.kind not in "iuf":
        raise DataError(f"{path}: inputs are {x.dtype}; they must be numbers")
    if x.dtype.kind == "f" and not np.isfinite(x).all():
        raise DataError(f"{path}: some input values are NaN or infinite")


def check_arrays(path: str, x: np.ndarray, y: np.ndarray) -> None:
    """The lane's check of loaded arrays (the same rules inspect_npz applies while streaming)."""
    check_shapes(path, tuple(x.shape), tuple(y.shape))
    check_inputs(path, x)
    check_labels(path, y, y.ndim == 2)


def inspect_npz(path: str, loaders: int = 1) -> NpzInfo:
    """Refuse, with a sentence, any file the lanes could not train on; never loads it whole.

    Only a regular file is read (a fifo would hang, /dev/zero fill the memory); its arrays must fit in the
    memory there is (the cgroup's limit where there is one) as many times as `loaders` lanes load them."""
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{path} is a folder, not a .npz file")
    problem = input_problem(p)
    if problem:
        raise DataError(problem if "does not exist" not in problem else f"data file {path} does not exist")
    if not os.access(p, os.R_OK):
        raise DataError(f"data file {path} cannot be read (permission denied)")
    try:
        fh = open_regular(p)
    except InputError as exc:
        raise DataError(str(exc)) from None
    with fh:
        return _inspect_open(path, fh, max(1, loaders))


def _inspect_open(path: str, raw: IO[bytes], loaders: int) -> NpzInfo:
    if not zipfile.is_zipfile(raw):
        raw.seek(0)
        started_as_zip = raw.read(4) == b"PK\x03\x04"
        if started_as_zip:  # the archive's end is missing: a copy or a download cut short
            raise DataError(f"{path} is damaged (truncated or corrupt): its archive directory is missing")
        raise DataError(f"{path} is not a NumPy archive (.npz): save one with "
                        "numpy.savez(path, x_train=…, y_train=…)")
    raw.seek(0)
    try:
        with zipfile.ZipFile(raw) as archive:
            members = {name[:-4]: name for name in archive.namelist() if name.endswith(".npy")}
            missing = [n for n in NEEDED if n not in members]
            if missing:
                raise DataError(f"{path} has no {' and '.join(missing)} array (it has: "
                                f"{', '.join(sorted(members)) or 'none'})")
            with archive.open(members["x_train"]) as fh:
                x_shape, x_dtype = _header(fh, path, "x_train")
                with archive.open(members["y_train"]) as yh:
                    y_shape, y_dtype = _header(yh, path, "y_train")
                    n = check_shapes(path, x_shape, y_shape)
                    declared = int(np.prod(x_shape)) * x_dtype.itemsize + int(np.prod(y_shape)) * y_dtype.itemsize
                    check_fits(path, n, declared, loaders)
                    y = np.concatenate(list(_chunks(yh, y_dtype, int(np.prod(y_shape)))))
                    check_labels(path, y, len(y_shape) == 2)
                for chunk in _chunks(fh, x_dtype, int(np.prod(x_shape))):
                    check_inputs(path, chunk)
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise DataError(f"{path} is damaged (truncated or corrupt): {exc}") from None
    return NpzInfo(n, str(x_dtype), y_shape)


def check_fits(path: str, samples: int, declared: int, loaders: int) -> None:
    """DataError when `loaders` lanes each loading `declared` bytes (and converting them to float32: twice
    as much) would not fit in the memory there is: the archive's declared size, not its size on disk, counts
    (a small zip can declare gigabytes)."""
    need, have = declared * 2 * loaders, available_bytes()
    if need > have:
        lanes = f", for each of {loaders} lanes that load it" if loaders > 1 else ""
        raise DataError(f"{path}: x_train declares {samples:,} samples ({declared / 2**30:.1f} GiB{lanes}), more "
                        f"than this machine's free memory ({have / 2**30:.1f} GiB, within any cgroup limit; the whole "
                        "array is read before a sample limit applies): save fewer samples in the file, or run fewer "
                        "lanes at once")


_CHECKED: dict[tuple[str, int, int], str] = {}


def data_file_problem(path: str) -> str:
    """"" when a .npz can be trained on, else why not; each version of a file is read once (the window
    asks on every edit of the model)."""
    try:
        st = os.stat(path)
        key: tuple[str, int, int] | None = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _CHECKED:
        return _CHECKED[key]
    try:
        inspect_npz(path)
        problem = ""
    except DataError as exc:
        problem = str(exc)
    if key is not None:
        _CHECKED[key] = problem
    return problem
