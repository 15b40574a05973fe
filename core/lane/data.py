"""Training data: MNIST from the Keras cache or a download, a user .npz, or a labelled synthetic stand-in."""
from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import CLASSES, INPUT_DIM, ConfigError
from ..files.npz_check import DataError, check_arrays

MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
MNIST_TRAIN_SIZE = 60_000
DOWNLOAD_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Dataset:
    """Flattened float32 inputs (N, 784), integer labels (N,), and where they came from."""

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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _load_mnist() -> tuple[np.ndarray, np.ndarray, str]:
    """MNIST through keras.datasets; raises DataError with the reason when unavailable."""
    cached = keras_cache_file()
    if cached.exists() and _sha256(cached) != MNIST_SHA256:
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


def _load_npz(path: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The arrays of a user's file, checked (the app checked the file before too: it may have changed)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            if "x_train" not in npz or "y_train" not in npz:
                raise DataError(f"{path} has no x_train and y_train arrays (it has: {', '.join(npz.files)})")
            x, y = npz["x_train"], npz["y_train"]
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{path} is not a readable NumPy archive ({type(exc).__name__})") from None
    check_arrays(path, x, y)
    x = x.reshape(len(x), -1)
    if y.ndim == 2:  # one-hot labels, as in one of the seeds
        y = y.argmax(axis=1)
    return x, y.astype(np.int64), f"user file {os.path.abspath(path)}"


def synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """MNIST-shaped uint8 images of 10 learnable classes: a fixed prototype per class plus noise."""
    rng = np.random.default_rng(seed)
    prototypes = rng.integers(0, 256, size=(CLASSES, INPUT_DIM)).astype(np.float32)
    y = (np.arange(n) % CLASSES).astype(np.int64)
    rng.shuffle(y)
    noise = rng.normal(0.0, 60.0, size=(n, INPUT_DIM)).astype(np.float32)
    x = np.clip(prototypes[y] + noise, 0, 255).astype(np.uint8)
    return x, y


def preprocess(x: np.ndarray, how: str) -> np.ndarray:
    """`scale`: /255 (the blog's seed); `l2`: each row to unit L2 norm (the Q&A's seed)."""
    x = x.astype(np.float32)
    if how == "scale":
        return x / np.float32(255.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, np.float32(1e-12))


def load(data: str = "auto", samples: int | None = None, preprocessing: str = "scale",
         seed: int = 0) -> Dataset:
    """Load the named source; `auto` means MNIST if it can be had, else synthetic (and says why)."""
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
        x, y, desc = _load_npz(data)
        source = "npz"
    else:
        raise ConfigError(f"data source {data!r}: choose auto, mnist, synthetic or a path ending in .npz")
    if samples is not None:
        x, y = x[:samples], y[:samples]
    return Dataset(preprocess(x, preprocessing), y.astype(np.int32), source, desc)
