"""What this machine offers: CPU, GPUs and installed backends, and the lanes they make possible.

`host_info()` never imports a framework (the GUI calls it at start-up). `discover()` asks a
lane process per installed backend which GPUs that backend can really use.
"""
from __future__ import annotations

import importlib.metadata
import glob
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from ..machine import GPU_HINT, INSTALL_HINT, LABEL, Gpu, HostInfo, cpu_model, usable_cores
from ..config import BACKENDS, OPTIMIZER_SLOTS, DeviceKind, LaneSpec, RunConfig, Task
from ..files.npz_check import available_bytes
from ..json_data import JsonValue
from ..messages import Probed
from .. import APP_VERSION
from ..plurals import plural

if TYPE_CHECKING:
    from .conductor import Lanes

_DIST = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


@dataclass(frozen=True)
class LaneOption:
    """A lane the user may pick, or may not and why (`reason`)."""

    spec: LaneSpec
    device: str
    available: bool
    reason: str = ""

    @property
    def name(self) -> str:
        return self.spec.name


def backend_version(backend: str) -> str | None:
    """The installed version, read from package metadata without importing the package."""
    if importlib.util.find_spec(backend) is None:
        return None
    try:
        return importlib.metadata.version(_DIST[backend])
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def nvidia_gpus() -> list[dict[str, str]]:
    """GPUs the NVIDIA driver reports (name, driver, memory), or [] where there is no driver."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run([exe, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            gpus.append({"name": parts[0], "driver": parts[1], "memory": parts[2]})
    return gpus


def host_info() -> dict[str, JsonValue]:
    """The machine and software a result was measured with, as a sidecar holds it (HostInfo.to_json; read back
    with HostInfo.from_json): for the JSON sidecars and About."""
    import numpy

    try:
        keras_version: str | None = importlib.metadata.version("keras")
    except importlib.metadata.PackageNotFoundError:
        keras_version = None
    return HostInfo(APP_VERSION, platform.node(), platform.python_version(), platform.platform(), cpu_model(),
                    len(usable_cores()), tuple(Gpu(g["name"], g["driver"], g["memory"]) for g in nvidia_gpus()),
                    numpy.__version__, keras_version,
                    tuple((b, backend_version(b)) for b in BACKENDS)).to_json()


def cpu_options(backend: str, available: bool, reason: str = "") -> list[LaneOption]:
    cores = len(usable_cores())
    model = cpu_model()
    options = [LaneOption(LaneSpec("cpu", backend=backend), f"CPU ({model}, {cores} threads)", available, reason)]
    if cores > 1:
        options.append(LaneOption(LaneSpec("cpu", threads=1, backend=backend), f"CPU ({model}, 1 thread)",
                                  available, reason))
    return options


def not_installed_reason(backend: str) -> str:
    return f"{LABEL[backend]} is not installed: {INSTALL_HINT[backend]}"


def nvidia_driver_present() -> bool:
    """Any sign of an NVIDIA driver: its tool, its device nodes, or its /proc entry."""
    return bool(shutil.which("nvidia-smi") or os.path.exists("/proc/driver/nvidia/version")
                or glob.glob("/dev/nvidia[0-9]*"))


def discover(pool: Lanes | None = None, backends: tuple[str, ...] = BACKENDS, timeout: float = 120.0,
             cancel: threading.Event | None = None) -> list[LaneOption]:
    """Every lane this machine could offer, available or not (with the reason).

    A GPU lane process is started per installed backend to ask it for its GPUs; with `pool`
    (a core.engine.pool.LanePool) that process stays and serves the first GPU lane's runs. With no
    NVIDIA driver at all no backend can see a GPU, so none is asked (a framework import each
    costs seconds of CPU). `cancel` (a threading.Event) stops between and during probes.
    """
    from .lanes import Lane

    options: list[LaneOption] = []
    driver = nvidia_driver_present()
    for backend in backends:
        if cancel is not None and cancel.is_set():
            break
        if backend_version(backend) is None:
            reason = not_installed_reason(backend)
            options += cpu_options(backend, False, reason)
            options.append(LaneOption(LaneSpec("gpu", backend=backend), "GPU", False, reason))
            continue
        options += cpu_options(backend, True)
        spec = LaneSpec("gpu", 0, backend=backend)
        if not driver:
            options.append(LaneOption(spec, "GPU", False, f"No GPU is visible to {LABEL[backend]}: no NVIDIA "
                                      f"driver on this machine (no nvidia-smi); {GPU_HINT[backend]}"))
            continue
        lane = pool.get(spec) if pool is not None else Lane(spec)
        try:
            answer = lane.probe(timeout, cancel)
        finally:
            if pool is None:
                lane.close()
        gpus = list(answer.gpus) if isinstance(answer, Probed) else []
        if not gpus:
            why = answer.error if isinstance(answer, Probed) else answer.reason
            reason = f"No GPU is visible to {LABEL[backend]}: {GPU_HINT[backend]}" + (f" ({why})" if why else "")
            options.append(LaneOption(spec, "GPU", False, reason))
            if pool is not None:
                lane.close()  # a lane that can never run should not hold a framework in memory
        for i, name in enumerate(gpus):
            options.append(LaneOption(LaneSpec("gpu", i, backend=backend), f"GPU:{i} ({name})", True))
    return options


def unprobed_options(backends: tuple[str, ...] = BACKENDS) -> list[LaneOption]:
    """What is known without starting a process: CPU lanes per backend, GPU lanes not yet looked for."""
    options: list[LaneOption] = []
    for backend in backends:
        installed = backend_version(backend) is not None
        reason = "" if installed else not_installed_reason(backend)
        options += cpu_options(backend, installed, reason)
        options.append(LaneOption(LaneSpec("gpu", backend=backend), "GPU", False,
                                  "looking for GPUs…" if installed else reason))
    return options


def lane_problems(specs: list[LaneSpec], pool: Lanes | None = None) -> list[str]:
    """Why any of `specs` cannot run here (empty when all can); only backends asked for a GPU are probed.

    Lanes on other machines are not checked here: they say what is wrong when they connect, and
    the lanes on this machine run regardless."""
    specs = [s for s in specs if not s.host]
    gpu_backends = tuple(sorted({s.backend for s in specs if s.kind == DeviceKind.GPU}))
    cpu_backends = tuple(sorted({s.backend for s in specs} - set(gpu_backends)))
    options = (discover(pool, gpu_backends) if gpu_backends else []) + unprobed_options(cpu_backends)
    return check_lanes(specs, options)


def check_lanes(specs: list[LaneSpec], options: list[LaneOption]) -> list[str]:
    """Reasons why any of `specs` cannot run here (empty when all can)."""
    by_name = {o.name: o for o in options}
    cores = len(usable_cores())
    problems = []
    for spec in specs:
        if spec.kind == DeviceKind.CPU and spec.threads is not None and spec.threads > cores:
            problems.append(f"{spec.name}: this machine has {cores} usable CPU {plural(cores, 'core')}: "
                            f"choose cpu1-cpu{cores}, or cpu for all of them")
            continue
        option = by_name.get(spec.original.name)  # a twin runs where its lane does
        if option is not None:
            if not option.available:
                problems.append(f"{spec.name}: {option.reason}")
        elif spec.kind == DeviceKind.CPU:  # another thread budget: fine wherever the backend is installed
            if backend_version(spec.backend) is None:
                problems.append(f"{spec.name}: {not_installed_reason(spec.backend)}")
        else:
            gpus = [o for o in options if o.spec.backend == spec.backend and o.spec.kind == DeviceKind.GPU]
            usable = [o for o in gpus if o.available]
            none = next((o for o in gpus if not o.available), None)
            reason = (none.reason if none is not None and not usable
                      else f"{LABEL[spec.backend]} sees {len(usable)} GPU(s)")
            problems.append(f"{spec.name}: {reason}")
    return problems


def memory_problem(configs: Sequence[RunConfig], lanes: Sequence[LaneSpec], free: int | None = None) -> str:
    """Why the largest model of a run or sweep would not fit this machine's memory on its local CPU lanes (each
    builds its own copy, so together they need it that many times over), as a sentence; "" when it fits. A GPU
    lane's memory is its device's, a remote lane's its machine's: those are not checked here."""
    local = [lane for lane in lanes if not lane.host and lane.kind == DeviceKind.CPU]
    gpus = [lane for lane in lanes if not lane.host and lane.kind == DeviceKind.GPU]
    if not (local or gpus) or not configs:
        return ""
    config = max(configs, key=lambda c: c.model.min_memory_bytes(c.train.batch_size, c.train.optimizer))
    need = config.model.min_memory_bytes(config.train.batch_size, config.train.optimizer)
    what = (f"to train with {config.train.optimizer} (weights, gradients and "
            f"{OPTIMIZER_SLOTS[config.train.optimizer]} optimizer slots per weight, float32"
            f"{'; a predict run trains its weights a few steps first' if config.train.task == Task.PREDICT else ''})")
    if local:
        have = available_bytes() if free is None else free
        if need * len(local) > have:
            return (f"model {config.model.label()} needs at least {need / 2**30:.1f} GiB {what}"
                    f"{f' in each of {len(local)} lanes' if len(local) > 1 else ''} on this machine, and "
                    f"{have / 2**30:.1f} GiB is free (within any cgroup limit): lower the widths or the layers")
    listed = nvidia_gpus() if gpus else []
    for lane in gpus:  # a GPU lane holds its copy in its device's memory, which the driver reports
        total = gpu_memory_bytes(lane.index, listed)
        if total is not None and need > total:
            return (f"model {config.model.label()} needs at least {need / 2**30:.1f} GiB {what} on {lane.name}, "
                    f"whose GPU has {total / 2**30:.1f} GiB in all: lower the widths or the layers")
    return ""


def gpu_memory_bytes(index: int, gpus: Sequence[Mapping[str, str]]) -> int | None:
    """The memory of GPU `index` as nvidia-smi lists it ("143771 MiB"), or None where it is not known."""
    if not 0 <= index < len(gpus):
        return None
    found = re.match(r"\s*(\d+)\s*MiB", gpus[index].get("memory", ""))
    return int(found.group(1)) << 20 if found else None
