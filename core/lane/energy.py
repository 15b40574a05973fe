"""Energy counters, read, never guessed: RAPL for CPU lanes, NVML for GPU lanes, and why not where neither reads.

A meter is read at the steady boundary of a segment (the end of its last warm-up step) and at its last step,
from the step timer's callback, never inside a timed step (core/lane/timing.py). What it says is joules
counted by the hardware between the two reads; where no counter can be read the figures are NaN and the
meter's `note` says why and how to enable one. Nothing is estimated from a TDP.

CPU lanes: RAPL through the powercap tree (/sys/class/powercap, or $CROSSOVER_POWERCAP_ROOT): each package
domain (intel-rapl:N, named package-N) and its DRAM subdomain (intel-rapl:N:M, named dram) where there is
one. energy_uj wraps at max_energy_range_uj: a reading below the last is the range added. A lane runs on
some cores of a package but the counter is the package's: the lane is charged the whole package's energy
(of the packages its cores belong to, /sys/devices/system/cpu/cpuN/topology/physical_package_id; all
packages where that cannot be read), and the record says so (SHARED_NOTE).

GPU lanes: NVML through nvidia-ml-py (the optional extra gpu-energy, imported only here, lazily): the
device's total-energy counter (mJ) where it has one ("nvml-energy"), else its power (mW) sampled by a small
thread between the two reads and integrated ("nvml-power-samples"). The lane's GPU index is the
framework's: the Nth device CUDA makes visible. Where CUDA_VISIBLE_DEVICES lists devices, the Nth entry
names the NVML device (an index, or a UUID or its prefix); otherwise NVML's own index N is taken. CUDA
numbers devices fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, NVML by PCI bus: on a machine with
mixed GPUs and no CUDA_VISIBLE_DEVICES, set CUDA_DEVICE_ORDER=PCI_BUS_ID so the two agree.

The idle baseline: once per lane process, before its first segment, the device's mean power over
IDLE_S seconds ($CROSSOVER_IDLE_S shortens it, for tests), only where a counter reads.
"""
from __future__ import annotations

import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence, cast

from ..config import DeviceKind, LaneSpec

POWERCAP_ROOT_ENV = "CROSSOVER_POWERCAP_ROOT"
POWERCAP_ROOT = "/sys/class/powercap"
CPU_ROOT = "/sys/devices/system/cpu"
IDLE_ENV = "CROSSOVER_IDLE_S"
IDLE_S = 1.0  # the idle baseline's length
POWER_SAMPLE_S = 0.02  # how often the power-sample thread asks NVML (its own average window is longer)
SHARED_NOTE = "package energy: shared with anything else this CPU ran"
NOT_MEASURED = "not measured on this machine"
NVML_HINT = "install nvidia-ml-py (pip install 'crossover-lab[gpu-energy]')"

COUNTERS = ("rapl-package", "rapl-package+dram", "nvml-energy", "nvml-power-samples")


class Meter(Protocol):
    """An energy counter of the lane's device: `begin()` then `end()` gives the joules between the two."""

    counter: str  # one of COUNTERS, or "" where nothing is measured
    note: str  # the reason when nothing is measured, or what the figure covers (SHARED_NOTE)

    def begin(self) -> None: ...

    def end(self) -> float:
        """Joules since begin(); NaN when a read failed (or begin() was not called)."""
        ...


@dataclass
class Unmeasured:
    """No counter on this machine: every figure NaN, and why."""

    note: str
    counter: str = ""

    def begin(self) -> None:
        pass

    def end(self) -> float:
        return math.nan


# ---------------------------------------------------------------- RAPL


@dataclass(frozen=True)
class RaplDomain:
    name: str  # package-0, dram
    energy_path: Path
    max_range_uj: float  # NaN where unreadable: a wrap-around then gives NaN, never a guess


COUNTER_MAX = 2**64  # a counter's reading is a 64-bit number; more digits are no reading (ValueError)


def _read_int(path: Path) -> int:
    """A counter file's number: at most 32 bytes are read (a counter that is /dev/zero is read no further), and a
    number outside 0..2^64 is no reading (ValueError)."""
    with open(path, "rb") as fh:
        text = fh.read(32)
    value = int(text.decode("ascii").strip())
    if not 0 <= value < COUNTER_MAX:
        raise ValueError(f"{path}: {value} is no counter reading")
    return value


def wrapped_delta(a: int, b: int, max_range: float) -> float:
    """Microjoules from reading `a` to reading `b` of a counter that wraps at `max_range`. A reading below the last
    is a wrap only where the range added makes a step shorter than half the range (a counter that wrapped once);
    otherwise the counter went backwards, and the figure is unknown (NaN), never the range counted again."""
    if b >= a:
        return float(b - a)
    if not (math.isfinite(max_range) and max_range > 0 and a <= max_range):
        return math.nan
    step = b + max_range - a
    return step if step < max_range / 2 else math.nan


def package_ids(cores: Sequence[int], cpu_root: str | os.PathLike = CPU_ROOT) -> set[int] | None:
    """The physical packages of `cores`; None where any cannot be read (then every package is charged)."""
    out = set()
    for core in cores:
        try:
            out.add(_read_int(Path(cpu_root) / f"cpu{core}" / "topology" / "physical_package_id"))
        except (OSError, ValueError):
            return None
    return out or None


def _name(folder: Path) -> str:
    try:
        return (folder / "name").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _package_number(name: str) -> int | None:
    prefix, _, number = name.partition("-")
    return int(number) if prefix == "package" and number.isdigit() else None


class RaplMeter:
    """The sum of the chosen RAPL domains' counters (packages, and their DRAM where present)."""

    def __init__(self, domains: Sequence[RaplDomain], counter: str, note: str = SHARED_NOTE) -> None:
        self.domains, self.counter, self.note = tuple(domains), counter, note
        self._start: tuple[int, ...] | None = None

    def read(self) -> tuple[int, ...] | None:
        try:
            return tuple(_read_int(d.energy_path) for d in self.domains)
        except (OSError, ValueError):
            return None

    def begin(self) -> None:
        self._start = self.read()

    def end(self) -> float:
        start, now = self._start, self.read()
        self._start = None
        if start is None or now is None:
            return math.nan
        return sum(wrapped_delta(a, b, d.max_range_uj) for a, b, d in zip(start, now, self.domains)) / 1e6


def rapl_meter(cores: Sequence[int] | None = None, root: str | os.PathLike | None = None,
               cpu_root: str | os.PathLike = CPU_ROOT) -> RaplMeter | Unmeasured:
    """The packages (and DRAM) of `cores` (default: this process's), or why RAPL cannot be read here."""
    base = Path(root if root is not None else os.environ.get(POWERCAP_ROOT_ENV) or POWERCAP_ROOT)
    if root is None and POWERCAP_ROOT_ENV not in os.environ and not sys.platform.startswith("linux"):
        return Unmeasured(f"{NOT_MEASURED}: RAPL counters are read on Linux only (this is {sys.platform})")
    packages: list[tuple[int | None, Path]] = []
    try:
        folders = sorted(p for p in base.iterdir() if p.name.startswith("intel-rapl:") and p.name.count(":") == 1)
    except OSError:
        folders = []
    for folder in folders:
        number = _package_number(_name(folder))
        if number is not None:
            packages.append((number, folder))
    if not packages:
        return Unmeasured(f"{NOT_MEASURED}: {base} has no RAPL counters (a VM, or a CPU without RAPL)")
    if cores is None:
        try:
            cores = sorted(os.sched_getaffinity(0))
        except AttributeError:
            cores = []
    wanted = package_ids(cores, cpu_root) if cores else None
    chosen = [(n, f) for n, f in packages if wanted is None or n in wanted] or packages
    domains: list[RaplDomain] = []
    for number, folder in chosen:
        package = _domain(folder, f"package-{number}")
        try:
            _read_int(package.energy_path)
        except PermissionError:
            pattern = base / "intel-rapl:*" / "energy_uj"
            return Unmeasured(f"{NOT_MEASURED}: energy_uj is readable only by root: "
                              f"sudo chmod a+r {pattern} (until reboot)")
        except (OSError, ValueError) as exc:
            return Unmeasured(f"{NOT_MEASURED}: {package.energy_path} cannot be read ({type(exc).__name__})")
        domains.append(package)
        for sub in sorted(folder.glob(f"{folder.name}:*")):
            if _name(sub) == "dram" and _readable(sub / "energy_uj"):  # a DRAM counter left unreadable: package only
                domains.append(_domain(sub, "dram"))
    with_dram = any(d.name == "dram" for d in domains)
    return RaplMeter(domains, "rapl-package+dram" if with_dram else "rapl-package")


def _readable(path: Path) -> bool:
    try:
        _read_int(path)
    except (OSError, ValueError):
        return False
    return True


def _domain(folder: Path, name: str) -> RaplDomain:
    try:
        max_range = float(_read_int(folder / "max_energy_range_uj"))
    except (OSError, ValueError):
        max_range = math.nan
    return RaplDomain(name, folder / "energy_uj", max_range)


# ---------------------------------------------------------------- NVML


class NvmlHandle(Protocol):
    """pynvml's device handle: opaque (a ctypes pointer), only handed back to pynvml."""


class _Nvml(Protocol):
    """The few calls of pynvml (nvidia-ml-py) used here."""

    def nvmlInit(self) -> None: ...
    def nvmlDeviceGetCount(self) -> int: ...
    def nvmlDeviceGetHandleByIndex(self, index: int) -> NvmlHandle: ...
    def nvmlDeviceGetHandleByUUID(self, uuid: str | bytes) -> NvmlHandle: ...
    def nvmlDeviceGetTotalEnergyConsumption(self, handle: NvmlHandle) -> int: ...
    def nvmlDeviceGetPowerUsage(self, handle: NvmlHandle) -> int: ...
    def nvmlDeviceGetTemperature(self, handle: NvmlHandle, sensor: int) -> int: ...


def nvml_target(index: int, visible: str | None) -> int | str:
    """The NVML device of the framework's GPU `index`: CUDA_VISIBLE_DEVICES's entry there (an NVML index, or a
    UUID), else NVML's index `index` (see the module's docstring for the order)."""
    if visible is None or not visible.strip():
        return index
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if index >= len(entries):
        raise IndexError(f"GPU {index} is not among CUDA_VISIBLE_DEVICES={visible}")
    entry = entries[index]
    return int(entry) if entry.isdigit() else entry


def read_celsius(read_c: Callable[[], int] | None) -> float:
    """A GPU's temperature now (°C), NaN where it cannot be read: read at both ends of an energy window, since a
    GPU that heats up slows itself down, and a figure says what it rests on."""
    if read_c is None:
        return math.nan
    try:
        return float(read_c())
    except Exception:  # an NVMLError: unknown
        return math.nan


class NvmlEnergyMeter:
    counter = "nvml-energy"

    def __init__(self, read_mj: Callable[[], int], note: str = "", read_c: Callable[[], int] | None = None) -> None:
        self._read, self.note = read_mj, note
        self._start: int | None = None
        self.temperature: Callable[[], float] = lambda: read_celsius(read_c)

    def _now(self) -> int | None:
        try:
            return int(self._read())
        except Exception:  # an NVMLError of any kind: this reading is unknown
            return None

    def begin(self) -> None:
        self._start = self._now()

    def end(self) -> float:
        start, now = self._start, self._now()
        self._start = None
        return (now - start) / 1000.0 if start is not None and now is not None and now >= start else math.nan


class PowerSampleMeter:
    """The device's power (mW), sampled every `interval` s by a thread between begin() and end(), integrated
    (trapezoids over the samples, the first and the last taken at begin and end)."""

    counter = "nvml-power-samples"

    def __init__(self, read_mw: Callable[[], int], interval: float = POWER_SAMPLE_S, note: str = "",
                 read_c: Callable[[], int] | None = None) -> None:
        self._read, self.interval, self.note = read_mw, interval, note
        self.temperature: Callable[[], float] = lambda: read_celsius(read_c)
        self._samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed = False

    def _sample(self) -> None:
        try:
            self._samples.append((time.perf_counter(), float(self._read()) / 1000.0))
        except Exception:  # an NVMLError: the integral is unknown
            self._failed = True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def begin(self) -> None:
        self._samples, self._failed = [], False
        self._stop.clear()
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="crossover-power-samples", daemon=True)
        self._thread.start()

    def end(self) -> float:
        if self._thread is None:
            return math.nan
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._sample()
        if self._failed or len(self._samples) < 2:
            return math.nan
        s = self._samples
        return sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in zip(s, s[1:]))


def _load_nvml() -> _Nvml | None:
    try:
        import pynvml  # pyright: ignore[reportMissingImports]  # nvidia-ml-py: the optional extra gpu-energy
    except ImportError:
        return None
    return cast("_Nvml", pynvml)


def nvml_meter(index: int, nvml: _Nvml | None = None) -> Meter:
    """The NVML counter of GPU `index` (the framework's numbering), or why there is none."""
    if nvml is None:
        loaded = _load_nvml()
        if loaded is None:
            return Unmeasured(f"{NOT_MEASURED}: {NVML_HINT}")
        nvml = loaded
    try:
        nvml.nvmlInit()
        target = nvml_target(index, os.environ.get("CUDA_VISIBLE_DEVICES"))
        handle = nvml.nvmlDeviceGetHandleByIndex(target) if isinstance(target, int) else \
            nvml.nvmlDeviceGetHandleByUUID(target)
    except Exception as exc:  # NVMLError (no driver, no such device) or a CUDA_VISIBLE_DEVICES it cannot map
        return Unmeasured(f"{NOT_MEASURED}: NVML cannot read GPU {index} ({type(exc).__name__}: {exc})")
    def celsius() -> int:
        return nvml.nvmlDeviceGetTemperature(handle, 0)  # NVML_TEMPERATURE_GPU, the die

    try:
        nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        return NvmlEnergyMeter(lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(handle), read_c=celsius)
    except Exception:  # NVMLError_NotSupported: a GPU older than Volta
        pass
    try:
        nvml.nvmlDeviceGetPowerUsage(handle)
        return PowerSampleMeter(lambda: nvml.nvmlDeviceGetPowerUsage(handle), read_c=celsius)
    except Exception as exc:
        return Unmeasured(f"{NOT_MEASURED}: GPU {index} reports neither energy nor power to NVML "
                          f"({type(exc).__name__})")


# ---------------------------------------------------------------- the lane's meter and its idle baseline


def meter_for(spec: LaneSpec, cores: Sequence[int] | None = None) -> Meter:
    """The meter of the lane's device: NVML for a GPU lane, RAPL for a CPU lane."""
    if spec.kind == DeviceKind.GPU:
        return nvml_meter(spec.index)
    return rapl_meter(cores)


def idle_seconds() -> float:
    try:
        value = float(os.environ.get(IDLE_ENV, IDLE_S))
    except ValueError:
        value = IDLE_S
    return value if math.isfinite(value) and value >= 0 else IDLE_S


def idle_watts(meter: Meter, seconds: float | None = None) -> float:
    """The device's mean power while this process does nothing for `seconds`; NaN, at once, without a counter."""
    if not meter.counter:
        return math.nan
    seconds = idle_seconds() if seconds is None else seconds
    if seconds <= 0:
        return math.nan
    start = time.perf_counter()
    meter.begin()
    time.sleep(seconds)
    joules = meter.end()
    elapsed = time.perf_counter() - start
    return joules / elapsed if math.isfinite(joules) and elapsed > 0 else math.nan


class LaneEnergy:
    """One lane process's meter and idle baseline, made and measured once (the first segment asks)."""

    def __init__(self) -> None:
        self._meter: Meter | None = None
        self._key: str | None = None
        self._idle: float | None = None

    def meter(self, spec: LaneSpec) -> Meter:
        if self._meter is None or self._key != spec.name:
            self._meter, self._key, self._idle = meter_for(spec), spec.name, None
        return self._meter

    def idle_w(self, spec: LaneSpec) -> float:
        meter = self.meter(spec)
        if self._idle is None:
            self._idle = idle_watts(meter)
        return self._idle


LANE_ENERGY = LaneEnergy()  # per process: a lane process has one device
