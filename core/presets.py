"""The seeds' experiments and a few reference models, for the window's menu and the CLI's --preset."""
from __future__ import annotations

from dataclasses import dataclass

from .config import ModelSpec, RunConfig, TrainSpec


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    config: RunConfig
    source: str = ""


def _cfg(widths: tuple[int, ...], optimizer: str, batch: int, preprocessing: str = "scale",
         epochs: int = 10, family: str = "mlp", cell: str = "lstm", heads: int = 4) -> RunConfig:
    return RunConfig(ModelSpec(widths, dropout=0.2, activation="relu", family=family, cell=cell, heads=heads),
                     TrainSpec(batch_size=batch, epochs=epochs, optimizer=optimizer, preprocessing=preprocessing))


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("qa", "Q&A seed: 784-750-150-50-50-10, Nadam, batch 128",
           _cfg((750, 150, 50, 50), "nadam", 128, "l2"),
           "Keras slower on GPU than CPU for some networks (i7-6700K: CPU 103.7 s, GPU 29.5 s)"),
    Preset("qa-100", "Q&A seed, small: 784-100-10, Nadam, batch 128",
           _cfg((100,), "nadam", 128, "l2"),
           "the same question's 100-neuron network (GPU ≈ 20 s, CPU ≈ 15 s)"),
    Preset("blog-small", "Blog seed, small: 784-128-10, Adam, batch 32",
           _cfg((128,), "adam", 32), "Why is the GPU slower than the CPU? (CPU 52.4 s, GPU 122.8 s)"),
    Preset("blog-wide", "Blog seed, wide: 784-1000-1000-10, Adam, batch 32",
           _cfg((1000, 1000), "adam", 32), "the same post's wider model (CPU 390.0 s, GPU 224.4 s)"),
    Preset("tiny", "Tiny: 784-16-10, Adam, batch 128", _cfg((16,), "adam", 128, epochs=1)),
    Preset("huge", "Huge: 784-4096-4096-4096-10, Adam, batch 256", _cfg((4096, 4096, 4096), "adam", 256, epochs=1)),
    # Other families, each in the spirit of a thread that asked "why is my GPU slower?" about it.
    Preset("cnn-small", "CNN, small: cnn 32-64, Adam, batch 64", _cfg((32, 64), "adam", 64, epochs=2, family="cnn"),
           "a small Keras CNN on MNIST, the classic first GPU disappointment"),
    Preset("lstm", "LSTM: lstm 128, Adam, batch 32", _cfg((128,), "adam", 32, epochs=2, family="rnn"),
           "keras-team/keras#5242: an LSTM at 5 s per epoch on the CPU against 35 s on a GTX 1060"),
    Preset("transformer-tiny", "Transformer, tiny: 2 blocks of d_model 64, 4 heads, Adam, batch 32",
           _cfg((64, 64), "adam", 32, epochs=2, family="transformer"),
           "pytorch/pytorch#122973: a tiny transformer encoder slower on Apple's GPU than on its CPU"),
)}

@dataclass(frozen=True)
class SweepPreset:
    """A sweep that reproduces a seed's question over a range of widths: `layers` hidden layers, each
    `widths[i]` wide in turn, trained as `base` is."""

    layers: int
    widths: tuple[int, ...]
    base: RunConfig


SWEEP_PRESETS: dict[str, SweepPreset] = {
    "qa": SweepPreset(1, (25, 50, 100, 200, 400, 750, 1500), PRESETS["qa"].config),
    "blog": SweepPreset(2, (32, 128, 256, 512, 1000, 2000), PRESETS["blog-small"].config),
}


# The window's model before anything is chosen: the default MLP, trained for half a minute per lane (then it stops
# by itself), long enough for a class to watch both lines and drag a width; epochs enough that time, not the data,
# ends it on any machine. The Model panel shows the time limit; the CLI's `run` keeps whole epochs.
DEMO_SECONDS = 30.0
WINDOW_DEFAULT = RunConfig(train=TrainSpec(epochs=100, max_seconds=DEMO_SECONDS))
