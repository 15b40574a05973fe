"""The headless CLI as a newcomer runs it: exit codes, messages, files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import MAIN, ROOT, cli, cli_in_process, wait_for_records


def test_bad_width_exits_2_with_a_sentence(capsys):
    r = cli_in_process(capsys, "run", "--widths", "64,0")
    assert r.returncode == 2
    assert "error: width 0 in layer 2: widths must be 1-16384" in r.stderr


def test_gpu_lane_without_gpu_exits_2_with_the_reason(capsys):
    r = cli_in_process(capsys, "run", "--widths", "16", "--lanes", "cpu,gpu", "--samples", "500")
    assert r.returncode == 2
    assert "gpu0: No GPU is visible to TensorFlow" in r.stderr


def test_missing_backend_is_named_with_its_install_command(monkeypatch, capsys):
    r = cli_in_process(capsys, "run", "--lanes", "torch:cpu", "--samples", "500")
    if r.returncode == 2 and "not installed" in r.stderr:
        assert "PyTorch is not installed: pip install -e '.[torch]'" in r.stderr
    else:
        pytest.skip("torch is installed here")


@pytest.mark.lanes
def test_run_writes_csv_and_sidecar(tmp_path):
    out = tmp_path / "out.csv"
    r = cli("run", "--widths", "32", "--lanes", "cpu,cpu1", "--samples", "1500", "--batch-size", "50",
            "--data", "synthetic", "--csv", str(out))
    assert r.returncode == 0, r.stderr
    assert "median ms" in r.stdout, r.stdout  # the table, and under it the verdict on these two lanes
    assert re.search(r"^(cpu1? is [0-9.]+x faster than cpu1?|cpu1? and cpu1? are too close to call) on this model",
                     r.stdout, re.MULTILINE), r.stdout
    lines = out.read_text().splitlines()
    assert len(lines) == 1 + 2 * 30
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["host"]["cpu_cores"] >= 1
    lanes = meta["runs"][0]["lanes"]
    assert set(lanes) == {"cpu", "cpu1"}
    assert lanes["cpu1"]["settings"]["threads"] == 1
    assert lanes["cpu"]["settings"]["data_source"] == "synthetic"
    assert lanes["cpu"]["summary"]["n_batches"] == 25


def test_analyze_json_on_a_hand_written_csv(tmp_path, capsys):
    rows = ["lane,device,width,params,flops_per_batch,batch_size,median_ms,p10_ms,p90_ms,n_batches,runs,between_runs"]
    # cpu: 0.1 ms fixed + 1e-9 ms/FLOP; gpu0: 2 ms fixed + 1e-11 ms/FLOP → they cross near 1.92e9 FLOPs. A width every
    # doubling, each point 200 batches within ±5% from 3 runs that scattered by 1%: the noise is measured, so cpu's
    # 1.8x lead at 256 units and gpu0's 1.6x at 512 stand, and the crossing lies between two measured widths. (One run
    # a width stands on the floor of one pass's noise, inside which a 1.6x ratio at one of nine widths can hide.)
    for i in range(9):
        width, flops = 16 * 2 ** i, round(1e7 * 10 ** (i / 2))
        for lane, ms in (("cpu", 0.1 + flops * 1e-9), ("gpu0", 2 + flops * 1e-11)):
            rows.append(f"{lane},{lane[0]},{width},0,{flops},128,{ms},{ms * 0.95},{ms * 1.05},200,3,0.01")
    path = tmp_path / "s.csv"
    path.write_text("\n".join(rows) + "\n")
    r = cli_in_process(capsys, "analyze", str(path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["lanes"]["cpu"]["overhead_ms"] == pytest.approx(0.1, rel=0.05)
    assert out["lanes"]["gpu0"]["gflops"] == pytest.approx(100_000, rel=0.05)
    (cross,) = out["crossovers"]
    assert cross["lanes"] == ["cpu", "gpu0"] and cross["faster_above"] == "gpu0"
    assert 256 < cross["width"] < 1024


def test_analyze_rejects_a_non_sweep_csv(tmp_path, capsys):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    r = cli_in_process(capsys, "analyze", str(path))
    assert r.returncode == 2 and "is not a sweep CSV" in r.stderr


@pytest.mark.lanes  # a Python process of its own: a test of realness
def test_core_never_imports_qt_and_cli_never_imports_a_framework():
    code = ("import sys, crossover_lab.core.cli.main, crossover_lab.core.study.sweep, crossover_lab.core.engine.pool, crossover_lab.core.engine.devices, crossover_lab.core.files.run_files, crossover_lab.core.engine.lanes;"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'tensorflow', 'keras', 'jax', 'torch') or m.startswith('crossover_lab.gui')]; "
            "print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.lanes
def test_ctrl_c_stops_writes_what_was_measured_and_exits_130(tmp_path):
    import signal
    import time

    out = tmp_path / "int.csv"
    proc = subprocess.Popen([sys.executable, str(MAIN), "run", "--widths", "256,256", "--lanes", "cpu",
                             "--epochs", "1000", "--samples", "6400", "--data", "synthetic", "--csv", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    log = Path(os.environ["CROSSOVER_HOME"]) / "logs" / "lane-cpu.log"
    try:
        wait_for_records(out, {"cpu"}, n=20, proc=proc)  # TensorFlow imported, data made, batches flowing
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    t0 = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert time.monotonic() - t0 < 10
    assert "cancelled" in stdout
    rows = out.read_text().splitlines()
    assert len(rows) > 20 and rows[0].startswith("run_id,lane,device")
    assert log.exists()


def test_a_run_names_its_cold_start_and_says_it_rests_on_one_run(capsys, scripted):
    """Scripted lanes: gpu0's first step (its trace and compile) takes 100 times a step, cpu's 2 times; gpu0 is
    faster at every step after. The run says both: the cold start per lane, and that which lane to use depends on
    how many steps are run; and that its verdict rests on one run."""
    from scripted_lanes import cpu_like, gpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=3.0, gflops=5.0, warmup_factor=2.0),
                            gpu0=gpu_like(fixed_ms=1.0, gflops=5000.0, warmup_factor=100.0))
    out = cli_in_process(capsys, "run", "--lanes", "cpu,gpu0", "--widths", "64", "--samples", "6400",
                         "--data", "synthetic", "--schedule", "sequential")
    assert out.returncode == 0, out.stderr
    assert "gpu0 is " in out.stdout and "x faster than cpu" in out.stdout
    cold = next(line for line in out.stdout.splitlines() if line.startswith("Cold start: the first step took "))
    assert " ms on cpu, " in cold and " ms on gpu0 " in cold
    assert "cpu answers first, and gpu0 is faster at every step after" in out.stdout
    assert "This verdict rests on one run of each lane" in out.stdout
