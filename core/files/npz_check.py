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

CHUNK_BYTES = 8 << 20
NEEDED = ("x_train", "y_train")


class DataError(RuntimeError):
    """The data source the user asked for cannot be used; the message says why."""


@dataclass(frozen=True)
class NpzInfo:
    samples: int
    x_dtype: str
    y_shape: tuple[int, ...]


def _available_bytes() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # no psutil or no /proc: no limit rather than a wrong one
        return 1 << 62


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


def inspect_npz(path: str) -> NpzInfo:
    """Refuse, with a sentence, any file the lanes could not train on; never loads it whole."""
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{path} is a folder, not a .npz file")
    if not p.exists():
        raise DataError(f"data file {path} does not exist")
    if not os.access(p, os.R_OK):
        raise DataError(f"data file {path} cannot be read (permission denied)")
    if not zipfile.is_zipfile(p):
        with open(p, "rb") as fh:
            started_as_zip = fh.read(4) == b"PK\x03\x04"
        if started_as_zip:  # the archive's end is missing: a copy or a download cut short
            raise DataError(f"{path} is damaged (truncated or corrupt): its archive directory is missing")
        raise DataError(f"{path} is not a NumPy archive (.npz): save one with "
                        "numpy.savez(path, x_train=…, y_train=…)")
    try:
        with zipfile.ZipFile(p) as archive:
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
                    declared = int(np.prod(x_shape)) * x_dtype.itemsize
                    if declared * 2 > _available_bytes():  # loaded, then converted to float32
                        raise DataError(f"{path}: x_train declares {n:,} samples ({declared / 2**30:.1f} GiB), more "
                                        "than this machine's free memory (the whole array is read before a sample "
                                        "limit applies): save fewer samples in the file")
                    y = np.concatenate(list(_chunks(yh, y_dtype, int(np.prod(y_shape)))))
                    check_labels(path, y, len(y_shape) == 2)
                for chunk in _chunks(fh, x_dtype, int(np.prod(x_shape))):
                    check_inputs(path, chunk)
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise DataError(f"{path} is damaged (truncated or corrupt): {exc}") from None
    return NpzInfo(n, str(x_dtype), y_shape)


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
