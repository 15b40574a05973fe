"""Data sources and their fallbacks: MNIST, a user .npz, synthetic MNIST-shaped data."""
from __future__ import annotations

import numpy as np
import pytest

from crossover_lab.core.lane import data
from crossover_lab.core.config import ConfigError
from crossover_lab.core.lane.data import DataError


def test_auto_falls_back_to_synthetic_and_says_why(monkeypatch):
    def offline():
        raise DataError("MNIST is not cached and could not be downloaded (no network)")

    monkeypatch.setattr(data, "_load_mnist", offline)
    ds = data.load("auto", samples=500)
    assert ds.source == "synthetic"
    assert "could not be downloaded" in ds.description
    assert ds.x.shape == (500, 784) and ds.x.dtype == np.float32
    assert ds.y.shape == (500,) and set(np.unique(ds.y)) == set(range(10))


def test_explicit_mnist_fails_clearly(monkeypatch):
    monkeypatch.setattr(data, "_load_mnist", lambda: (_ for _ in ()).throw(DataError("no MNIST here")))
    with pytest.raises(DataError, match="no MNIST here"):
        data.load("mnist")


def test_corrupt_cache_is_reported_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    cached = tmp_path / "datasets" / "mnist.npz"
    cached.parent.mkdir()
    cached.write_bytes(b"not an npz")
    ds = data.load("auto", samples=100)
    assert ds.source == "synthetic" and "checksum" in ds.description
    assert cached.read_bytes() == b"not an npz"  # keras would have deleted it


def test_synthetic_is_deterministic_and_learnable():
    x1, y1 = data.synthetic(1000, seed=3)
    x2, y2 = data.synthetic(1000, seed=3)
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert x1.dtype == np.uint8 and x1.shape == (1000, 784)
    # Learnable: a nearest-class-mean classifier is far better than chance (10%).
    xf = x1.astype(np.float32)
    means = np.stack([xf[y1 == c].mean(axis=0) for c in range(10)])
    pred = np.argmin(((xf[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    assert (pred == y1).mean() > 0.9


def test_user_npz_is_used(tmp_path):
    path = tmp_path / "mine.npz"
    x = np.random.default_rng(0).integers(0, 256, size=(300, 28, 28), dtype=np.uint8)
    y = np.arange(300) % 10
    np.savez(path, x_train=x, y_train=y)
    ds = data.load(str(path), preprocessing="l2")
    assert ds.source == "npz" and str(path) in ds.description
    assert ds.x.shape == (300, 784)
    np.testing.assert_allclose(np.linalg.norm(ds.x, axis=1), 1.0, rtol=1e-5)


def test_bad_npz_and_bad_source(tmp_path):
    path = tmp_path / "wrong.npz"
    np.savez(path, x_train=np.zeros((10, 5)), y_train=np.zeros(10))
    with pytest.raises(DataError, match="5 features"):
        data.load(str(path))
    with pytest.raises(ConfigError, match="data source 'cifar'"):
        data.load("cifar")


def test_scale_preprocessing():
    x = np.array([[0, 255, 51]], dtype=np.uint8)
    np.testing.assert_allclose(data.preprocess(x, "scale"), [[0.0, 1.0, 0.2]], rtol=1e-6)


@pytest.mark.parametrize("n, features, classes", [(5000, 784, 10), (2048, 20, 3), (7, 784, 10)])
def test_synthetic_drawn_in_chunks_is_the_same_bytes_as_one_draw(n, features, classes):
    # The data a stored result was measured on (seed 0) stays the same bytes: the noise of one draw of all rows,
    # as synthetic() made it before it drew SYNTHETIC_CHUNK rows at a time.
    rng = np.random.default_rng(0)
    prototypes = rng.integers(0, 256, size=(classes, features)).astype(np.float32)
    y = (np.arange(n) % classes).astype(np.int64)
    rng.shuffle(y)
    x = rng.standard_normal(size=(n, features), dtype=np.float32)
    x *= np.float32(60.0)
    x += prototypes[y]
    np.clip(x, 0, 255, out=x)
    got_x, got_y = data.synthetic(n, 0, features, classes)
    assert np.array_equal(got_y, y)
    assert got_x.dtype == np.uint8 and np.array_equal(got_x, x.astype(np.uint8))
