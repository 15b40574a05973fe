"""Host information: one writer (host_info, through HostInfo.to_json) and one reader (HostInfo.from_json), which
reads every sidecar under docs/results as it was written, and reads a damaged entry as unknown, never invented."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from crossover_lab.core.engine.devices import host_info
from crossover_lab.core.machine import Gpu, HostInfo, short_device_name

ROOT = Path(__file__).resolve().parents[2]


def test_this_machines_host_info_reads_back_as_written():
    written = host_info()
    host = HostInfo.from_json(written)
    assert host.to_json() == written
    assert host.cpu and host.cpu_cores and host.cpu_cores >= 1 and host.machine
    assert dict(host.backends)["tensorflow"]  # installed here


def test_every_stored_sidecar_reads_as_written_and_a_damaged_entry_reads_as_unknown():
    sidecars = [p for p in (ROOT / "docs" / "results").rglob("*.json") if '"host"' in p.read_text(encoding="utf-8")]
    assert sidecars
    for path in sidecars:
        written = json.loads(path.read_text(encoding="utf-8"))["host"]
        host = HostInfo.from_json(written)
        assert host.cpu == written["cpu"] and host.machine == (written.get("machine") or ""), path
        assert [g.name for g in host.gpus] == [g["name"] for g in written.get("gpus") or []], path
    odd = HostInfo.from_json({"machine": 7, "cpu_cores": "2", "gpus": [{"name": "H200"}, "x"], "backends": [1],
                              "keras": None})
    assert odd == HostInfo(machine="7", gpus=(Gpu("H200", "", ""),))
    assert HostInfo.from_json(None) == HostInfo() and HostInfo.from_json([]) == HostInfo()


@pytest.mark.parametrize("device, short", [
    ("CPU (Intel(R) Xeon(R) Processor, 2 threads)", "CPU (Intel Xeon, 2 threads)"),
    ("CPU (AMD EPYC 7763 64-Core Processor, 1 thread)", "CPU (AMD EPYC 7763, 1 thread)"),
    ("CPU (Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz, 2 threads)", "CPU (Intel Xeon Platinum 8480+, 2 threads)"),
    ("CPU (Apple M2, 8 threads)", "CPU (Apple M2, 8 threads)"),
    ("GPU:0 (NVIDIA H200)", "GPU:0 (NVIDIA H200)"),
])
def test_a_narrow_panel_shows_a_processors_short_name(device, short):
    # The Lanes panel's words for a lane (the tooltip keeps the whole name): at presentation size "cpu · CPU (Intel(R)
    # Xeon(R) Processor, 2 threads)" did not fit the panel on this machine.
    assert short_device_name(device) == short
