"""Training data: MNIST from the Keras cache or a download, a user .npz, or a labelled synthetic stand-in."""
from __future__ import annotations

import os
import socket
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import CLASSES, INPUT_DIM, MNIST_TRAIN_SIZE, ConfigError
from ..files.inputs import InputError, file_sha256, open_regular
from ..files.npz_check import DataError, check_arrays, check_shapes
from ..plurals import plural

MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
DOWNLOAD_TIMEOUT_S = 10.0
SYNTHETIC_CHUNK = 2048  # rows of noise drawn at a time: a few MB, in the cache while it is worked on
SYNTHETIC_BYTES, MIN_SYNTHETIC = 256 << 20, 2048  # synthetic data of a saved model's own shape: at most this much


@dataclass(frozen=True)
class Dataset:
    """Flattened float32 inputs (N, 784), integer labels (N,) (a regression's float32 targets (N, outputs)), and
    where they came from."""

    x: np.ndarray
    y: np.ndarray
    source: str  # mnist | npz | synthetic
    description: str  # a sentence naming the file or why the fallback was used

    def __len__(self) -> int:
        return len(self.y)


def keras_cache_file() -> Path:
    """Where keras.datasets.mnist keeps its file ($KERAS_HOME, else ~/.keras)."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return Path(home) / "datasets" / "mnist.npz"


def _load_mnist() -> tuple[np.ndarray, np.ndarray, str]:
    """MNIST through keras.datasets; raises DataError with the reason when unavailable."""
    cached = keras_cache_file()
    if cached.exists() and file_sha256(cached) != MNIST_SHA256:
        # keras would delete a mismatching file; a user's file is never deleted here.
        raise DataError(f"the cached MNIST file {cached} does not match its checksum")
    import keras  # the lane process only: keras pulls in its backend

    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT_S)  # offline, a download must fail fast
    try:
        (x, y), _ = keras.datasets.mnist.load_data()
    except Exception as exc:  # keras raises a plain Exception when offline
        raise DataError(f"MNIST is not cached at {cached} and could not be downloaded ({exc})") from None
    finally:
        socket.setdefaulttimeout(previous)
    how = "from the Keras cache" if cached.exists() else "downloaded"
    return x.reshape(len(x), -1), y, f"MNIST {how} ({cached})"


def _load_npz(path: str, samples: int | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """The arrays of a user's file, checked (the app checked the file before too: it may have changed).

    Only a regular file is opened (never a fifo or a device), and only the first `samples` rows of each
    array are read: a file of millions of samples costs a quick run no more memory than its rows."""
    try:
        raw = open_regular(path)
    except InputError as exc:
        raise DataError(str(exc)) from None
    try:
        with raw, zipfile.ZipFile(raw) as archive:
            members = {name[:-4]: name for name in archive.namelist() if name.endswith(".npy")}
            if "x_train" not in members or "y_train" not in members:
                raise DataError(f"{path} has no x_train and y_train arrays (it has: {', '.join(sorted(members))})")
            x_shape, x = _first_rows(archive, members["x_train"], path, samples)
            y_shape, y = _first_rows(archive, members["y_train"], path, samples)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise DataError(f"{path} is not a readable NumPy archive ({type(exc).__name__})") from None
    check_shapes(path, x_shape, y_shape)  # the whole file's shapes, then the values of the rows read
    check_arrays(path, x, y)
    x = x.reshape(len(x), -1)
    if y.ndim == 2:  # one-hot labels, as in one of the seeds
        y = y.argmax(axis=1)
    return x, y.astype(np.int64), f"user file {os.path.abspath(path)}"


def _first_rows(archive: zipfile.ZipFile, member: str, path: str,
                samples: int | None) -> tuple[tuple[int, ...], np.ndarray]:
    """An array's whole shape, and its first `samples` rows (all without a limit), read from the archive."""
    with archive.open(member) as fh:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(fh)
        if dtype.hasobject:
            raise DataError(f"{path}: {member} holds Python objects; Crossover reads only numeric arrays")
        shape = tuple(int(n) for n in shape)
        if not shape:
            return shape, np.zeros((0,), dtype)
        rows = shape[0] if samples is None else min(samples, shape[0])
        if fortran and len(shape) > 1:  # column by column on disk: the first rows are not one stretch
            with archive.open(member) as again:
                whole = np.lib.format.read_array(again, allow_pickle=False)
            return shape, np.ascontiguousarray(whole[:rows])
        per_row = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        want = rows * per_row * dtype.itemsize
        data = fh.read(want)
        if len(data) < want:
            raise EOFError(f"{member} ends early")
        return shape, np.frombuffer(data, dtype=dtype).reshape((rows, *shape[1:])).copy()


def synthetic(n: int, seed: int = 0, features: int = INPUT_DIM, classes: int = CLASSES) -> tuple[np.ndarray, np.ndarray]:
    """MNIST-shaped uint8 images of 10 learnable classes: a fixed prototype per class plus noise (or rows of
    another length and number of classes, for a saved model's own shapes)."""
    rng = np.random.default_rng(seed)
    prototypes = rng.integers(0, 256, size=(classes, features)).astype(np.float32)
    y = (np.arange(n) % classes).astype(np.int64)
    rng.shuffle(y)
    # Noise of standard deviation 60 drawn in float32, SYNTHETIC_CHUNK rows at a time, into the uint8 rows: the
    # same bytes as one draw of all rows (the generator's stream runs on across calls; a test holds it), in 0.5 s
    # for MNIST's 60,000 rows, not the 0.7-1.1 s of one 188 MB float32 array a lane paged in before its first step.
    x = np.empty((n, features), dtype=np.uint8)
    for start in range(0, n, SYNTHETIC_CHUNK):
        rows = slice(start, min(start + SYNTHETIC_CHUNK, n))
        noise = rng.standard_normal(size=(rows.stop - start, features), dtype=np.float32)
        noise *= np.float32(60.0)
        noise += prototypes[y[rows]]
        np.clip(noise, 0, 255, out=noise)
        x[rows] = noise
    return x, y


def synthetic_regression(n: int, seed: int = 0, features: int = INPUT_DIM,
                         outputs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Rows of `features` uint8 values and `outputs` real-valued targets per row that a model can learn: a fixed
    random linear map of the scaled row, plus a little noise (float32, about unit variance)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(n, features), dtype=np.uint8)
    w = rng.normal(0.0, 1.0, size=(features, outputs)).astype(np.float32) / np.float32(np.sqrt(features / 12.0))
    y = (x.astype(np.float32) / 255.0 - 0.5) @ w + rng.normal(0.0, 0.1, size=(n, outputs)).astype(np.float32)
    return x, y.astype(np.float32)


def preprocess(x: np.ndarray, how: str) -> np.ndarray:
    """`scale`: /255 (the blog's seed); `l2`: each row to unit L2 norm (the Q&A's seed)."""
    x = x.astype(np.float32)
    if how == "scale":
        return x / np.float32(255.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, np.float32(1e-12))


def load(data: str = "auto", samples: int | None = None, preprocessing: str = "scale",
         seed: int = 0, features: int = INPUT_DIM, classes: int = CLASSES, outputs: int = 0) -> Dataset:
    """Load the named source; `auto` means MNIST if it can be had, else synthetic (and says why). A model of
    other shapes (a saved model's `features` values per sample, `classes` classes) takes MNIST and a user's
    .npz only where they fit it, and synthetic data of its own shape for `auto`; a regression (`classes` 0,
    `outputs` targets per sample) takes synthetic real-valued targets only."""
    if classes == 0 and outputs > 0:
        if data not in ("auto", "synthetic"):
            raise ConfigError(f"data source {data!r} holds class labels: a regression takes --data synthetic")
        most = max(MIN_SYNTHETIC, SYNTHETIC_BYTES // (4 * (features + outputs)))
        n = min(samples or MNIST_TRAIN_SIZE, most)
        x, y = synthetic_regression(n, seed, features, outputs)
        return Dataset(preprocess(x, preprocessing), y, "synthetic",
                       f"synthetic regression data of the model's shape ({features} values, {outputs} real-valued "
                       f"{plural(outputs, 'target')} a linear map of them, seed {seed})")
    if (features, classes) != (INPUT_DIM, CLASSES):
        # MNIST's 784 pixels and labels 0-9 fit this model or not (the caller refused other data that does not
        # fit: SavedModel.data_problem); auto falls back to synthetic data of the model's shape.
        fits = features == INPUT_DIM and classes >= CLASSES
        if data == "synthetic" or (data == "auto" and not fits):
            # As many samples as MNIST has, or as fit in SYNTHETIC_BYTES of float32 rows (a big input would
            # otherwise fill the memory of every lane before the first step).
            most = max(MIN_SYNTHETIC, SYNTHETIC_BYTES // (4 * features))
            n = min(samples or MNIST_TRAIN_SIZE, most)
            x, y = synthetic(n, seed, features, classes)
            why = "as asked" if data == "synthetic" else f"MNIST does not fit the model's {features} values and {classes} classes"
            cut = f"; {n:,} samples, the most that fit {SYNTHETIC_BYTES >> 20} MiB" if n < (samples or MNIST_TRAIN_SIZE) else ""
            return Dataset(preprocess(x, preprocessing), y.astype(np.int32), "synthetic",
                           f"synthetic data of the model's shape ({features} values, {classes} classes, seed {seed}), "
                           f"{why}{cut}")
    if data in ("auto", "mnist"):
        try:
            x, y, desc = _load_mnist()
            source = "mnist"
        except DataError as exc:
            if data == "mnist":
                raise
            n = samples or MNIST_TRAIN_SIZE
            x, y = synthetic(n, seed)
            source, desc = "synthetic", f"synthetic MNIST-shaped data (seed {seed}): {exc}"
    elif data == "synthetic":
        x, y = synthetic(samples or MNIST_TRAIN_SIZE, seed)
        source, desc = "synthetic", f"synthetic MNIST-shaped data (seed {seed}), as asked"
    elif data.endswith(".npz"):
        x, y, desc = _load_npz(data, samples)
        source = "npz"
    else:
        raise ConfigError(f"data source {data!r}: choose auto, mnist, synthetic or a path ending in .npz")
    if samples is not None:
        x, y = x[:samples], y[:samples]
    return Dataset(preprocess(x, preprocessing), y.astype(np.int32), source, desc)
