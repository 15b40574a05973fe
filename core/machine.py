"""This machine as the app sees it before any framework is imported: its processor and cores, each backend's
name, and how to install what is missing."""
from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from typing import Mapping

from .json_data import JsonObject, JsonValue
from .paths import install_hint
from .plain_text import ONE_LINE, printable

MAX_HOST_TEXT = 400  # characters of one text of a sidecar's host kept
MAX_GPUS = 64  # GPUs (and backends) of one host kept

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


_BRAND_NOISE = (r"\((?:R|TM|tm)\)", r"\s+\d+-Core\b", r"\s+(?:CPU|Processor)\b", r"\s*@\s*[\d.]+\s*[GM]Hz")


def short_device_name(text: str) -> str:
    """A device's words as a narrow panel shows them, the full name left to its tooltip: a processor's marketing
    name without its trademarks, core count, clock and the words CPU and Processor after it ("CPU (Intel(R)
    Xeon(R) Platinum 8480+ CPU @ 2.00GHz, 2 threads)" → "CPU (Intel Xeon Platinum 8480+, 2 threads)")."""
    for pattern in _BRAND_NOISE:
        text = re.sub(pattern, "", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def usable_cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return list(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class Gpu:
    """A GPU as the NVIDIA driver names it."""

    name: str
    driver: str
    memory: str


@dataclass(frozen=True)
class HostInfo:
    """The machine and software a result was measured with. Written into every sidecar as `to_json()` gives it
    (core/engine/devices.py host_info makes it), and read back by `from_json` alone, any earlier sidecar's too:
    About, `devices`, the report's machine table, a file's machine name and a picture's title read these fields."""

    app_version: str = ""
    machine: str = ""  # names the machine when sweeps from several are compared
    python: str = ""
    platform: str = ""
    cpu: str = ""
    cpu_cores: int | None = None
    gpus: tuple[Gpu, ...] = ()
    numpy: str = ""
    keras: str | None = None  # None: not installed
    backends: tuple[tuple[str, str | None], ...] = ()  # (backend, version), None where not installed

    def to_json(self) -> JsonObject:
        return {"app_version": self.app_version, "machine": self.machine, "python": self.python,
                "platform": self.platform, "cpu": self.cpu, "cpu_cores": self.cpu_cores,
                "gpus": [{"name": g.name, "driver": g.driver, "memory": g.memory} for g in self.gpus],
                "numpy": self.numpy, "keras": self.keras, "backends": {k: v for k, v in self.backends}}

    @classmethod
    def of_sidecar(cls, sidecar: JsonValue) -> HostInfo:
        """The host a Crossover sidecar names (a run's, a sweep's, an autosave's): the one reader of its "host"."""
        return cls.from_json(sidecar.get("host") if isinstance(sidecar, Mapping) else None)

    @classmethod
    def from_json(cls, d: JsonValue) -> HostInfo:
        """A sidecar's "host" (or a remote machine's answer) as written by any version; what is missing or of the
        wrong kind reads as unknown, never as a made-up value."""
        if not isinstance(d, Mapping):
            return cls()

        def text(key: str) -> str:
            v = d.get(key)
            return clean(str(v)) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else ""

        def clean(v: str) -> str:  # a sidecar or a profile is someone's file: its texts are shown, never obeyed
            return printable(str(v)[:MAX_HOST_TEXT], ONE_LINE)

        cores = d.get("cpu_cores")
        gpus = d.get("gpus")
        backends = d.get("backends")
        keras = d.get("keras")
        return cls(text("app_version"), text("machine"), text("python"), text("platform"), text("cpu"),
                   cores if isinstance(cores, int) and not isinstance(cores, bool) else None,
                   tuple(Gpu(*(clean(str(g.get(key) or "")) for key in ("name", "driver", "memory")))
                         for g in gpus[:MAX_GPUS] if isinstance(g, Mapping)) if isinstance(gpus, list) else (),
                   text("numpy"), clean(keras) if isinstance(keras, str) else None,
                   tuple((clean(k), clean(v) if isinstance(v, str) else None)
                         for k, v in list(backends.items())[:MAX_GPUS])
                   if isinstance(backends, Mapping) else ())
