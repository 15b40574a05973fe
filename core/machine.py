"""This machine as the app sees it before any framework is imported: its processor and cores, each backend's
name, and how to install what is missing."""
from __future__ import annotations

import os
import platform

from .paths import install_hint

INSTALL_HINT = {
    "tensorflow": install_hint("", "tensorflow"),
    "jax": install_hint("jax", "jax"),
    "torch": install_hint("torch", "torch"),
}
GPU_HINT = {
    "tensorflow": f"install the gpu extra ({install_hint('gpu', repr('tensorflow[and-cuda]'))}) on a machine with "
                  "an NVIDIA driver",
    "jax": "install jax with CUDA (pip install 'jax[cuda12]') on a machine with an NVIDIA driver",
    "torch": "install a CUDA build of torch on a machine with an NVIDIA driver",
}
LABEL = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}


def cpu_model() -> str:
    """The processor's marketing name, from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def usable_cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return list(range(os.cpu_count() or 1))
