"""Real signals to a real CLI with two lanes mid-run: what was measured is written, no lane is left behind.

Each CLI runs in its own process group, as a terminal's job does: Ctrl-C and a closed terminal
(SIGINT, SIGHUP) go to the whole group, `kill` (SIGTERM, SIGKILL) to the app alone.
"""
from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from helpers import (MAIN, check_files, cli, group_gone, record_counts, wait_for, wait_for_more_records,
                     wait_for_records, wall_limit)

pytestmark = pytest.mark.lanes
# Long enough that no lane ends its plan before the test stops it: at 300 epochs (9,600 steps) cpu1 once finished
# in 15 s, before a busy CI's test had sent its signal, and was rightly "completed". 1,000 epochs take it 50 s.
LONG_RUN = ("run", "--lanes", "cpu,cpu1", "--schedule", "concurrent", "--widths", "256", "--data", "synthetic",
            "--samples", "4096", "--epochs", "1000")


def start(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(MAIN), *args], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "CROSSOVER_HOME": str(tmp_path / "home"), **(env or {})})


def lanes_of(proc: subprocess.Popen) -> list[psutil.Process]:
    return [c for c in psutil.Process(proc.pid).children() if "resource_tracker" not in " ".join(c.cmdline())]


def sweep_widths(path: Path) -> list[int]:
    """The widths of the whole points in a sweep CSV, sorted (none before the file exists)."""
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return sorted(int(r["width"]) for r in csv.DictReader(line for line in fh if line.endswith("\n")))


@pytest.mark.parametrize("signals, code", [
    ((signal.SIGINT,), 130),
    ((signal.SIGINT, signal.SIGINT), 130),  # Ctrl-C twice: stops at once, still writes
    ((signal.SIGTERM,), 143),
    (("group TERM",), 143),  # what `timeout`, systemd and `kill -TERM -PGID` send: lanes too, and they wait
    ((signal.SIGHUP,), 129),  # the terminal was closed
])
def test_a_stop_signal_writes_everything_and_leaves_no_lane(tmp_path, signals, code):
    out = tmp_path / "x.csv"
    proc = start(tmp_path, *LONG_RUN, "--csv", str(out))
    wait_for_records(out, {"cpu", "cpu1"}, proc=proc)
    for sig in signals:
        if sig == "group TERM":
            os.killpg(proc.pid, signal.SIGTERM)
        elif sig == signal.SIGTERM:
            proc.send_signal(sig)  # `kill PID`: the app alone
        else:
            os.killpg(proc.pid, sig)  # from the terminal: the whole group, lanes too
        time.sleep(0.3)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    meta = check_files(out, {"cpu", "cpu1"})
    statuses = {name: lane["status"] for name, lane in meta["runs"][0]["lanes"].items()}
    assert set(statuses.values()) <= {"cancelled"}, statuses
    assert group_gone(proc.pid)


def test_kill_9_of_the_app_leaves_readable_files_and_no_lane(tmp_path):
    out = tmp_path / "x.csv"
    proc = start(tmp_path, *LONG_RUN, "--csv", str(out))
    wait_for_records(out, {"cpu", "cpu1"}, n=30, proc=proc)
    lanes = lanes_of(proc)
    assert len(lanes) == 2
    wait_for_more_records(out, sum(record_counts(out).values()), 1.5)  # at most a second late: the next ones
    proc.kill()
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    started = time.monotonic()
    gone, alive = psutil.wait_procs(lanes, timeout=5)
    assert not alive, f"lanes outlived the app: {[p.pid for p in alive]}"
    assert time.monotonic() - started < 5
    meta = check_files(out, {"cpu", "cpu1"})
    with open(out, newline="") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) >= 60  # what had been measured is there
    assert meta["runs"][0]["ended_at"] in ("", None)  # the sidecar says the run never ended


def test_a_frozen_lane_is_killed_by_the_watchdog_and_the_other_goes_on(tmp_path):
    """cpu1 frozen (kill -STOP) mid-run: the watchdog kills it after its silence and its run fails with what it
    measured kept, while cpu goes on training (its records keep growing); a Ctrl-C then ends the run as usual."""
    out = tmp_path / "x.csv"
    args = ("run", "--lanes", "cpu,cpu1", "--schedule", "concurrent", "--widths", "64", "--data", "synthetic",
            "--samples", "4096", "--epochs", "1000", "--watchdog-s", "4")
    proc = start(tmp_path, *args, "--csv", str(out))
    wait_for_records(out, {"cpu", "cpu1"}, proc=proc)
    pids = {p.pid for p in lanes_of(proc)}
    meta_before = json.loads(out.with_suffix(".json").read_text())
    cpu1_pid = meta_before["runs"][0]["lanes"]["cpu1"]["settings"]["pid"]
    assert cpu1_pid in pids
    frozen = psutil.Process(cpu1_pid)
    frozen.suspend()  # kill -STOP
    stopped_at = time.monotonic()

    def cpu1_failed() -> bool:
        # Kept frozen: a busy CI run once saw the stopped lane go on to finish all 1,000 epochs (something sent it
        # SIGCONT: the kernel does so when a stopped process's group becomes orphaned). A lane that hangs stays hung.
        with contextlib.suppress(psutil.NoSuchProcess):
            frozen.suspend()
        lanes = json.loads(out.with_suffix(".json").read_text())["runs"][0]["lanes"]
        return lanes["cpu1"]["status"] == "failed"

    assert wait_for(cpu1_failed, 90, 0.2), "the frozen lane was not ended by the watchdog"
    assert time.monotonic() - stopped_at < wall_limit(30)
    before = record_counts(out).get("cpu", 0)
    assert wait_for(lambda: record_counts(out).get("cpu", 0) > before, 30, 0.1), "cpu stopped with cpu1"
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: cpu's run ends as a stop does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    meta = check_files(out, {"cpu", "cpu1"})
    lanes = meta["runs"][0]["lanes"]
    assert lanes["cpu"]["status"] == "cancelled"
    assert lanes["cpu1"]["status"] == "failed"
    assert "stopped responding after" in lanes["cpu1"]["failure"]
    assert lanes["cpu1"]["n_records"] >= 20  # kept
    assert not psutil.pid_exists(cpu1_pid) or psutil.Process(cpu1_pid).status() == psutil.STATUS_ZOMBIE
    assert group_gone(proc.pid)


def test_ctrl_c_right_after_the_last_sweep_point_still_writes_the_sweep(tmp_path):
    out = tmp_path / "s.csv"
    proc = start(tmp_path, "sweep", "--widths", "16,64", "--layers", "1", "--lanes", "cpu1", "--data", "synthetic",
                 "--samples", "2048", "--steady-steps", "10", "--seconds-per-point", "0.5", "--no-calibrate",
                 "--csv", str(out))
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not any("[2/2]" in line for line in lines) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert any("[2/2]" in line for line in lines), lines
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(60)
    reader.join(10)
    seen, err = "".join(lines), ""
    assert proc.returncode in (0, 130), seen + err
    assert "Traceback" not in seen + err
    with open(out, newline="") as fh:
        assert sorted(int(r["width"]) for r in csv.DictReader(fh)) == [16, 64]
    check_files(tmp_path / "s-batches.csv", {"cpu1"})
    assert group_gone(proc.pid)


def test_kill_9_mid_sweep_leaves_the_points_measured_so_far_readable(tmp_path):
    out = tmp_path / "s.csv"
    proc = start(tmp_path, "sweep", "--widths", "16,32,64,128,256,512", "--layers", "1", "--lanes", "cpu1",
                 "--data", "synthetic", "--samples", "2048", "--steady-steps", "10", "--seconds-per-point", "0.5",
                 "--no-calibrate", "--csv", str(out))
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
    deadline = time.monotonic() + 120
    while not any("[2/6]" in line for line in lines) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert any("[2/6]" in line for line in lines), lines
    lanes = lanes_of(proc)
    # A point reaches the disk at most a second after it is measured: the two so far, within 1.5 s.
    wait_for(lambda: len(sweep_widths(out)) >= 2, 1.5)
    proc.kill()
    proc.wait(10)
    _, alive = psutil.wait_procs(lanes, timeout=5)
    assert not alive, f"lanes outlived the app: {[p.pid for p in alive]}"
    with open(out, newline="") as fh:
        widths = sorted(int(r["width"]) for r in csv.DictReader(fh))
    assert widths[:2] == [16, 32] and len(widths) < 6  # the points measured before the kill, whole
    analyzed = cli("analyze", str(out), timeout=120, env={"CROSSOVER_HOME": str(tmp_path / "home")})
    assert analyzed.returncode == 0 and "cpu1" in analyzed.stdout, analyzed.stderr[-2000:]
