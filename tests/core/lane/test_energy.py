"""Energy counters, read, never guessed: RAPL from a powercap tree the test writes, NVML where a GPU reports,
the sentence where nothing reads, and a real lane whose joules travel to the summary, the CSV and analyze."""
from __future__ import annotations

import builtins
import math
import os
import time
from pathlib import Path

import pytest

from helpers import FakePowercap, cli, wall_limit
from crossover_lab.core.lane import energy
from crossover_lab.core.lane.energy import (NVML_HINT, SHARED_NOTE, NvmlEnergyMeter, PowerSampleMeter, RaplMeter,
                                            Unmeasured, idle_watts, nvml_meter, nvml_target, rapl_meter,
                                            wrapped_delta)
from crossover_lab.core.records import RunSummary


@pytest.fixture
def tree(tmp_path, monkeypatch):
    fake = FakePowercap(tmp_path / "powercap", packages=2, dram=True)
    monkeypatch.setenv(energy.POWERCAP_ROOT_ENV, str(fake.root))
    yield fake
    fake.stop()


def test_package_and_dram_joules_come_out_as_written(tree, tmp_path):
    meter = rapl_meter(cores=[0], cpu_root=tmp_path / "no-topology")  # unreadable topology: every package
    assert isinstance(meter, RaplMeter)
    assert meter.counter == "rapl-package+dram" and meter.note == SHARED_NOTE
    assert [d.name for d in meter.domains] == ["package-0", "dram", "package-1", "dram"]
    tree.set("package-0", 1_000_000)
    meter.begin()
    tree.set("package-0", 3_500_000)  # 2.5 J
    tree.set("dram-0", 250_000)  # 0.25 J
    tree.set("package-1", 1_000_000)  # 1 J
    assert meter.end() == pytest.approx(3.75)


def test_a_wrap_around_adds_the_counters_range(tree):
    meter = rapl_meter(cores=[])
    assert isinstance(meter, RaplMeter)
    tree.set("package-0", tree.max_range - 2_000_000)
    meter.begin()
    tree.set("package-0", 1_000_000)  # wrapped: 2 J to the top, 1 J after
    assert meter.end() == pytest.approx(3.0)
    assert wrapped_delta(16, 4, 20) == 8 and math.isnan(wrapped_delta(16, 4, math.nan))
    assert math.isnan(wrapped_delta(10, 4, 20))  # 14 of a range of 20: a counter that went backwards, not a wrap


def test_the_lanes_package_only_where_its_cores_topology_reads(tree, tmp_path):
    topology = tmp_path / "cpu" / "cpu3" / "topology"
    topology.mkdir(parents=True)
    (topology / "physical_package_id").write_text("1\n")
    meter = rapl_meter(cores=[3], cpu_root=tmp_path / "cpu")
    assert isinstance(meter, RaplMeter)
    assert [d.energy_path.parent.name for d in meter.domains] == ["intel-rapl:1", "intel-rapl:1:0"]


def test_without_dram_the_counter_says_package_only(tmp_path, monkeypatch):
    fake = FakePowercap(tmp_path / "pc", packages=1, dram=False)
    meter = rapl_meter(cores=[], root=fake.root)
    assert isinstance(meter, RaplMeter) and meter.counter == "rapl-package"


def test_no_counter_is_the_sentence_and_no_sleep(tmp_path, monkeypatch):
    monkeypatch.setenv(energy.POWERCAP_ROOT_ENV, str(tmp_path / "empty"))
    meter = rapl_meter()
    assert isinstance(meter, Unmeasured) and meter.counter == ""
    assert meter.note == (f"not measured on this machine: {tmp_path / 'empty'} has no RAPL counters "
                          "(a VM, or a CPU without RAPL)")
    start = time.perf_counter()
    assert math.isnan(idle_watts(meter, 1.0))
    assert time.perf_counter() - start < wall_limit(0.5)  # no idle second where nothing reads


def test_an_energy_file_only_root_reads_gives_the_chmod_sentence(tree, monkeypatch):
    real_open = builtins.open

    def denied(path, *args, **kwargs):  # mode 000 is still readable by root: refuse as the kernel would
        if str(path).endswith("energy_uj"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denied)
    meter = rapl_meter(cores=[])
    assert isinstance(meter, Unmeasured)
    assert meter.note == (f"not measured on this machine: energy_uj is readable only by root: sudo chmod a+r "
                          f"{tree.root}/intel-rapl:*/energy_uj (until reboot)")


def test_idle_power_is_the_counter_over_the_idle_stretch(tree):
    meter = rapl_meter(cores=[])
    tree.tick(5.0)  # each of 4 domains: 20 W in all
    try:
        # A second, not 0.2 s: the fake counter's thread writes late on a busy machine (0.11 s late at load 8 made
        # 0.2 s read 8.9 W), and a late write over a second stays inside the bounds.
        watts = idle_watts(meter, 1.0)
    finally:
        tree.stop()
    assert 12 < watts < 28, watts


class FakeNvml:
    """pynvml's calls, as a GPU with (or without) the total-energy counter answers them."""

    def __init__(self, energy_counter: bool = True) -> None:
        self.energy_counter, self.mj, self.asked = energy_counter, 1000, []

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index):
        self.asked.append(index)
        return ("handle", index)

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self.asked.append(uuid)
        return ("handle", uuid)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle) -> int:
        if not self.energy_counter:
            raise RuntimeError("NVMLError_NotSupported")
        self.mj += 500
        return self.mj

    celsius = 40

    def nvmlDeviceGetTemperature(self, handle, sensor) -> int:
        assert sensor == 0  # NVML_TEMPERATURE_GPU
        self.celsius += 15  # warmer at every read
        return self.celsius

    def nvmlDeviceGetPowerUsage(self, handle) -> int:
        return 100_000  # 100 W


def test_nvml_energy_counter_or_power_samples_and_the_record_says_which(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    fake = FakeNvml()
    meter = nvml_meter(1, fake)
    assert isinstance(meter, NvmlEnergyMeter) and meter.counter == "nvml-energy"
    assert fake.asked == [1]  # the lane's GPU 1 is the second visible device: NVML's 1
    meter.begin()
    assert meter.end() == pytest.approx(0.5)
    sampled = nvml_meter(0, FakeNvml(energy_counter=False))
    assert isinstance(sampled, PowerSampleMeter) and sampled.counter == "nvml-power-samples"
    sampled.begin()
    time.sleep(0.1)
    assert sampled.end() == pytest.approx(100 * 0.1, rel=0.3)
    assert nvml_target(0, "GPU-1234abcd") == "GPU-1234abcd" and nvml_target(2, None) == 2 and nvml_target(1, "") == 1


def test_without_nvidia_ml_py_the_sentence_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(energy, "_load_nvml", lambda: None)
    meter = nvml_meter(0)
    assert isinstance(meter, Unmeasured) and meter.note == f"not measured on this machine: {NVML_HINT}"


def test_nvml_on_a_real_gpu():
    pynvml = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed (the gpu-energy extra)")
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
    except Exception as exc:
        pytest.skip(f"NVML reports no GPU here ({type(exc).__name__})")
    if not count:
        pytest.skip("NVML reports no GPU here")
    meter = nvml_meter(0)
    assert meter.counter in ("nvml-energy", "nvml-power-samples"), meter.note
    meter.begin()
    time.sleep(0.3)
    joules = meter.end()
    assert joules >= 0  # a GPU idles at tens of watts: a few joules over 0.3 s


# ---------------------------------------------------------------- a real lane, end to end


@pytest.mark.lanes
def test_a_lanes_joules_travel_to_the_summary_the_sweep_csv_and_analyze(tree, tmp_path, monkeypatch):
    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.engine.pool import LanePool, run_comparison
    from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
    from crossover_lab.core.files.sweeps.files import read_sweep_rows

    monkeypatch.setenv(energy.IDLE_ENV, "0.2")
    # Steady steps for 2.5 s: a counter is read over at least 2 s (MIN_ENERGY_WINDOW_S), else no joules are given.
    config = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=50, epochs=1000, samples=1000, data="synthetic",
                                                    max_seconds=2.5))
    tree.tick(2.5)  # each of 4 domains: 10 W in all
    pool = LanePool()  # its lanes start now, with this environment
    try:
        result = run_comparison(pool, [LaneSpec.parse("cpu1")], config)
    finally:
        pool.close()
        tree.stop()
    s = result.lanes["cpu1"].summary
    assert s is not None and s.status == "completed", result.lanes["cpu1"].failure
    assert s.energy_counter == "rapl-package+dram" and s.energy_note == SHARED_NOTE
    assert s.energy_steps == s.n_batches and s.energy_samples == s.energy_steps * 50 and s.energy_s >= 2.0
    assert 4 < s.mean_w < 25, s  # the tree advanced at 10 W
    assert 4 < s.idle_w < 25, s
    assert s.joules_per_msample == pytest.approx(1e6 * s.energy_j / s.energy_samples)
    wired = RunSummary(**s.as_dict())
    assert wired.joules_per_step == s.joules_per_step
    row = SweepRow.from_result(result, "cpu1")
    assert row.energy_counter == "rapl-package+dram" and row.energy_j_per_msample == pytest.approx(s.joules_per_msample)
    # Two lanes' rows at three widths, through the file and analyze.
    rows = []
    for lane, factor in (("cpu1", 1.0), ("cpu", 3.0)):
        for width, scale in ((16, 1), (64, 4), (256, 16)):
            rows.append(SweepRow(lane=lane, device="CPU", width=width, params=0, flops_per_batch=1000 * width,
                                 batch_size=50, median_ms=row.median_ms * scale, p10_ms=row.median_ms * scale * 0.98,
                                 p90_ms=row.median_ms * scale * 1.02, n_batches=200,
                                 energy_j_per_step=row.energy_j_per_step, mean_w=row.mean_w, idle_w=row.idle_w,
                                 energy_j_per_msample=row.energy_j_per_msample * scale * (factor if width > 16 else
                                                                                          1 / factor),
                                 energy_counter=row.energy_counter))
    path = tmp_path / "sweep.csv"
    path.write_text(sweep_rows_text(rows))
    back, _ = read_sweep_rows(str(path))
    assert back[0].energy_counter == "rapl-package+dram" and back[0].energy_j_per_msample == pytest.approx(
        float(f"{rows[0].energy_j_per_msample:.6g}"))
    out = cli("analyze", str(path))
    assert out.returncode == 0, out.stderr
    assert "joules per million samples, by width" in out.stdout
    assert "cpu1 uses less energy per sample above about" in out.stdout, out.stdout


def test_a_counter_read_over_too_short_a_stretch_gives_no_joules_and_says_why(tree):
    """The fake tree at 10 W in all (4 domains at 2.5 W), read by the lane's meter over 0.1 s and over 2.2 s: the
    short reading is kept in the summary but every view withholds it ("too short to read"); the long one is
    about 10 W."""
    from crossover_lab.core.lane.run import energy_fields
    from crossover_lab.core.lane.timing import EnergySpan

    meter = rapl_meter(cores=[], root=tree.root)
    tree.tick(2.5)
    try:
        spans = []
        for seconds in (0.1, 2.2):
            meter.begin()
            t0 = time.perf_counter()
            time.sleep(seconds)
            joules = meter.end()
            spans.append(EnergySpan(joules, steps=100, samples=800, seconds=time.perf_counter() - t0, pieces=1))
    finally:
        tree.stop()
    short, long = (RunSummary("r", "cpu", "CPU", "completed", **energy_fields(s, meter.counter, meter.note, 5.0))
                   for s in spans)
    assert short.energy_j > 0 and not short.energy_measured and math.isnan(short.mean_w)
    assert math.isnan(short.joules_per_msample) and short.energy_note.startswith("too short to read: ")
    assert "needs 2 s" in short.energy_note
    assert long.energy_measured and long.mean_w == pytest.approx(10.0, rel=0.25)
    assert energy_lines_of(short) == [f"energy {short.energy_note}"]


def energy_lines_of(s):
    from crossover_lab.core.words.run import energy_lines

    return [line for line in energy_lines([s]) if "energy" in line]


def test_a_counter_that_goes_backwards_or_holds_no_number_is_no_reading(tmp_path):
    from crossover_lab.core.lane.energy import _read_int, wrapped_delta

    assert wrapped_delta(100, 300, 1000.0) == 200.0
    assert wrapped_delta(900, 100, 1000.0) == 200.0  # it wrapped once
    assert math.isnan(wrapped_delta(500, 400, 1000.0))  # it went backwards: never the range counted again
    assert math.isnan(wrapped_delta(500, 400, math.nan))
    huge = tmp_path / "energy_uj"
    huge.write_text("9" * 400 + "\n")
    with pytest.raises(ValueError):
        _read_int(huge)
    with pytest.raises(ValueError):
        _read_int(Path("/dev/zero"))  # read 32 bytes, not forever


def test_a_gpus_temperature_is_read_at_both_ends_of_its_energy_window_and_said(monkeypatch):
    """Issue 34: a GPU that heats up slows itself; its energy figure says how warm it was when the window began and
    ended (the timer reads the meter's temperature at its first begin and its last end)."""
    import dataclasses

    from crossover_lab.core.lane.timing import EnergySpan
    from crossover_lab.core.records import RunSummary
    from crossover_lab.core.words.run import energy_words

    meter = nvml_meter(0, FakeNvml())
    assert meter.temperature() == 55 and meter.temperature() == 70
    assert math.isnan(energy.read_celsius(lambda: 1 // 0))  # an NVML error: unknown, never a crash
    span = EnergySpan(joules=300.0, steps=100, samples=6400, seconds=2.5, pieces=1, temp_begin_c=55.0,
                      temp_end_c=83.0)
    fields = energy_fields_of(span)
    s = dataclasses.replace(RunSummary("r", "gpu0", "GPU", "completed", n_batches=100, median_ms=1.0), **fields)
    assert (s.gpu_temp_begin_c, s.gpu_temp_end_c) == (55.0, 83.0)
    assert energy_words(s).endswith("; the GPU at 55 °C when the window began, 83 °C when it ended)")


def energy_fields_of(span):
    from crossover_lab.core.lane.run import energy_fields

    return energy_fields(span, "nvml-energy", "", 60.0)
