"""Host information: one writer (host_info, through HostInfo.to_json) and one reader (HostInfo.from_json), which
reads every sidecar under docs/results as it was written, and reads a damaged entry as unknown, never invented."""
from __future__ import annotations

import json
from pathlib import Path

from crossover_lab.core.engine.devices import host_info
from crossover_lab.core.machine import Gpu, HostInfo

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
