"""Lanes on another machine, against a real OpenSSH server on 127.0.0.1: runs, failures as sentences, no leftovers."""
from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core import APP_VERSION
from crossover_lab.core.messages import LaneStartFailed, ProbeJob, RunJob, from_wire, to_wire
from crossover_lab.core.records import BatchTiming
from crossover_lab.core.engine.remote.channel import RemoteSettings
from crossover_lab.core.engine.remote.wire import (PROTOCOL, OpenLane, RemoteHello, SshTarget, decode, encode,
                                                   ssh_argv)
from crossover_lab.core.engine.pool import LanePool, run_comparison

from helpers import cli, wait_for, wall_limit
from ssh_server import SshServer, free_port, sshd_missing

TINY = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=50, epochs=1, samples=1000, data="synthetic"))
LONG = TINY.replace(epochs=500)
PY = sys.executable  # the "remote" interpreter is this test environment's own


@pytest.fixture
def ssh_env(server, monkeypatch):
    monkeypatch.setenv("CROSSOVER_SSH_COMMAND", server.ssh_command())
    return server


def remote(server: SshServer, lane: str = "cpu1") -> LaneSpec:
    return LaneSpec.parse(f"ssh://{server.host()}/{lane}")


# ---------------------------------------------------------------- names, commands, the wire


def test_remote_lane_names_keep_their_host_and_local_name():
    spec = LaneSpec.parse("ssh://me@10.0.0.5:2222/jax:gpu1")
    assert (spec.host, spec.kind, spec.index, spec.backend) == ("me@10.0.0.5:2222", "gpu", 1, "jax")
    assert spec.name == "ssh://me@10.0.0.5:2222/jax:gpu1" and spec.local.name == "jax:gpu1"
    for bad in ("ssh://-oProxyCommand=x/cpu", "ssh://lab-gpu", "ssh://a;b/cpu", "ssh://h:70000/cpu"):
        with pytest.raises(ConfigError, match="ssh://"):
            LaneSpec.parse(bad)


def test_ssh_never_prompts_and_CROSSOVER_SSH_COMMAND_replaces_plain_ssh(monkeypatch):
    target = SshTarget.parse("me@lab:2222")
    argv = ssh_argv(target, "~/venv/bin/python")
    assert argv[0] == "ssh" and "BatchMode=yes" in argv and argv[argv.index("-p") + 1] == "2222"
    assert argv[-3:] == ["--", "me@lab", '"$HOME"/venv/bin/python -m crossover_lab.core.engine.remote.worker']
    monkeypatch.setenv("CROSSOVER_SSH_COMMAND", "ssh -F '/my lab/ssh_config'")
    assert ssh_argv(target, "python3")[:3] == ["ssh", "-F", "/my lab/ssh_config"]


def test_the_wire_codec_builds_registered_messages_only():
    job = RunJob("r1", TINY)
    assert decode(encode(job)) == job
    hello = OpenLane(APP_VERSION, PROTOCOL, LaneSpec.parse("jax:cpu1"))
    assert decode(encode(hello)) == hello
    for hostile in ({"@": "Popen", "args": ["rm", "-rf", "/"]}, {"@": "os.system", "command": "id"},
                    {"@": ["RunJob"]}, {"@": "RunJob", "run_id": "r", "config": {"@": "eval", "x": 1}}):
        with pytest.raises(ValueError, match="unknown message type"):
            from_wire(hostile)
    with pytest.raises(ValueError, match="no field"):
        from_wire({"@": "SetCancel", "on": True, "__class__": "x"})
    with pytest.raises(ValueError):
        decode(b"\x80\x04\x95 pickle bytes\n")
    # Registered, but holding what its fields do not: refused before any code reads it.
    for confused in (b'{"@":"LaneStatus","rss_mb":"x"}', b'{"@":"Bundle","events":5}',
                     b'{"@":"RunFailed","run_id":"r","lane":"l","reason":["x"]}'):
        with pytest.raises(ValueError, match="holds"):
            decode(confused)
    assert decode(b'{"@":"LaneStatus","rss_mb":12}').rss_mb == 12
    with pytest.raises(TypeError, match="not a registered message"):
        to_wire(Unregistered(1))


@dataclasses.dataclass(frozen=True)
class Unregistered:
    x: int


@pytest.mark.lanes  # a Python process of its own: a test of realness
def test_the_worker_refuses_an_app_of_another_version():
    proc = subprocess.Popen([PY, "-m", "crossover_lab.core.engine.remote.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, _ = proc.communicate(encode(OpenLane("0.0.1", PROTOCOL, LaneSpec())), timeout=60)
    hello, refused = [decode(line) for line in out.splitlines()]
    assert isinstance(hello, RemoteHello) and hello.app_version == APP_VERSION and hello.machine["cpu_cores"] >= 1
    assert "this app is Crossover 0.0.1" in refused.reason and "install Crossover 0.0.1 on" in refused.reason
    assert proc.returncode == 3


# ---------------------------------------------------------------- failures: a sentence within 10 s


def fake_python(folder: Path, version: str) -> Path:
    """A 'Python' on the remote that announces another Crossover version, then waits for its channel to close."""
    script = folder / f"fake-python-{version}"
    hello = json.dumps(to_wire(RemoteHello(version, PROTOCOL, "/opt/old/bin/python3", {})))
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(PY)} -c {shlex.quote(f'print({hello!r}, flush=True); import sys; sys.stdin.read()')}\n")
    script.chmod(0o755)
    return script


FAILURES = {
    "unreachable": ("cannot be reached", "Connection refused"),
    "key refused": ("refused the login", "Permission denied"),
    "host key unknown": ("host key of", "not known here"),
    "crossover missing": ("Crossover is not installed for /usr/bin/python3", "--remote-python"),
    "no python": ("there is no Python at '/nonexistent/python3'", "--remote-python"),
    "wrong version": ("has Crossover 0.0.9", f"install Crossover {APP_VERSION} on"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failure_is_a_sentence_within_10_s(server, case, tmp_path):
    python, command, host = PY, server.ssh_command(), server.host()
    if case == "unreachable":
        host = f"127.0.0.1:{free_port()}"
    elif case == "key refused":
        command = server.ssh_command(key=server.other_key)
    elif case == "host key unknown":
        command = server.ssh_command(known_hosts=server.folder / "empty_known_hosts")
    elif case == "crossover missing":
        python = "/usr/bin/python3"
        if not os.path.exists(python) or subprocess.run([python, "-c", "import crossover_lab"],
                                                       capture_output=True).returncode == 0:
            pytest.skip("no system python3 without Crossover here")
    elif case == "no python":
        python = "/nonexistent/python3"
    else:
        python = str(fake_python(tmp_path, "0.0.9"))
    pool = LanePool(RemoteSettings(python=python, ssh_command=command))
    try:
        t0 = time.monotonic()
        answer = pool.get(LaneSpec.parse(f"ssh://{host}/cpu1")).request(ProbeJob(), object, timeout=30)
        took = time.monotonic() - t0
    finally:
        pool.close()
    assert isinstance(answer, LaneStartFailed), answer
    for words in FAILURES[case]:
        assert words in answer.reason
    assert took < wall_limit(10), f"{case}: {took:.1f} s"
    assert wait_for(lambda: not server.workers(), 5)


def test_devices_host_lists_the_remote_lanes(ssh_env):
    r = cli("devices", "--host", f"ssh://{ssh_env.host()}", "--remote-python", PY, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"ssh://{ssh_env.host()}/cpu1 " in r.stdout and f"Crossover {APP_VERSION} for {PY}" in r.stdout
    r = cli("devices", "--host", "ssh://127.0.0.1:1", timeout=60)
    assert r.returncode == 2 and "error: ssh://127.0.0.1:1 cannot be reached" in r.stderr


# ---------------------------------------------------------------- runs


@pytest.mark.lanes
def test_local_cpu1_against_remote_cpu1(ssh_env, tmp_path):
    out = tmp_path / "two.csv"
    lane = remote(ssh_env).name
    r = cli("run", "--widths", "32", "--lanes", f"cpu1,{lane}", "--samples", "1000", "--batch-size", "50",
            "--data", "synthetic", "--remote-python", PY, "--price", f"cpu1=0.40,{lane}=2.50", "--csv", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "per million samples: cpu1 $" in r.stdout and f"{lane} $" in r.stdout
    rows = out.read_text().splitlines()
    assert len(rows) == 1 + 2 * 20
    assert sum(row.split(",")[1] == lane for row in rows[1:]) == 20
    meta = json.loads(out.with_suffix(".json").read_text())
    lanes = meta["runs"][0]["lanes"]
    assert lanes["cpu1"]["status"] == lanes[lane]["status"] == "completed"
    settings = lanes[lane]["settings"]
    assert settings["threads"] == 1 and settings["ssh_host"] == ssh_env.host() and settings["remote_python"] == PY
    assert settings["machine"]["app_version"] == APP_VERSION and settings["machine"]["cpu_cores"] >= 1
    assert lanes[lane]["summary"]["n_batches"] == 15 and lanes[lane]["summary"]["lane"] == lane
    assert meta["prices"] == {"cpu1": 0.4, lane: 2.5}
    assert wait_for(lambda: not ssh_env.workers(), 5)


@pytest.mark.lanes
@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client (apt-get install openssh-client)")
def test_an_unreachable_host_fails_its_lane_and_the_local_lane_goes_on(tmp_path):
    pool = LanePool()
    t_failed: list[float] = []
    t0 = time.monotonic()
    try:
        result = run_comparison(pool, [LaneSpec.parse("cpu1"), LaneSpec.parse("ssh://127.0.0.1:1/cpu1")], TINY,
                                schedule=Schedule.SIDE_BY_SIDE,
                                on_event=lambda e: t_failed.append(time.monotonic() - t0)
                                if getattr(e, "reason", "") and e.lane.startswith("ssh://") else None)
    finally:
        pool.close()
    assert result.lanes["cpu1"].status == "completed" and len(result.lanes["cpu1"].records) == 20
    failed = result.lanes["ssh://127.0.0.1:1/cpu1"]
    assert failed.status == "failed" and "ssh://127.0.0.1:1 cannot be reached" in failed.failure
    assert t_failed and t_failed[0] < 10


def run_until_records(pool: LanePool, spec: LaneSpec, n: int, action) -> tuple:
    """Run LONG on `spec`; once `n` records have arrived, call `action()` (from the event callback's thread)."""
    cancel = threading.Event()
    seen: list[BatchTiming] = []
    acted: list[float] = []

    def on_event(event):
        if isinstance(event, BatchTiming):
            seen.append(event)
            if len(seen) == n and not acted:
                acted.append(time.monotonic())
                action(cancel)

    result = run_comparison(pool, [spec], LONG, on_event=on_event, cancel=cancel)
    return result, time.monotonic() - acted[0] if acted else None


@pytest.mark.lanes
def test_the_server_killed_mid_run_fails_the_lane_and_keeps_its_records(tmp_path):
    if sshd_missing():
        pytest.skip(sshd_missing())
    srv = SshServer(tmp_path / "sshd")
    pool = LanePool(RemoteSettings(python=PY, ssh_command=srv.ssh_command()))
    spec = remote(srv)
    try:
        result, took = run_until_records(pool, spec, 30, lambda cancel: srv.kill())
    finally:
        pool.close()
        srv.stop()
    lane = result.lanes[spec.name]
    assert lane.status == "failed" and f"the connection to ssh://{srv.host()} was lost" in lane.failure
    assert len(lane.records) >= 30 and lane.summary.n_batches >= 25
    assert took < wall_limit(10)
    assert wait_for(lambda: not srv.workers(), 5), "a remote worker outlived its connection"


@pytest.mark.lanes
def test_cancel_stops_the_remote_run_and_close_leaves_no_remote_worker(ssh_env):
    pool = LanePool(RemoteSettings(python=PY))
    spec = remote(ssh_env)
    try:
        result, took = run_until_records(pool, spec, 30, lambda cancel: cancel.set())
        lane = result.lanes[spec.name]
        assert lane.status == "cancelled" and len(lane.records) >= 30
        assert took < wall_limit(3)
        assert ssh_env.workers(), "the lane stays connected between runs"
    finally:
        pool.close()
    assert wait_for(lambda: not ssh_env.workers(), 5), "a remote worker outlived close()"


@pytest.mark.lanes
def test_the_anatomy_of_a_remote_lane_comes_back_under_its_full_name(ssh_env):
    from crossover_lab.core.analysis.anatomy import RUNGS
    from crossover_lab.core.study.anatomy import request_anatomy

    pool = LanePool(RemoteSettings(python=PY))
    spec = remote(ssh_env)
    try:
        outcome = request_anatomy(pool, spec, TINY, seconds_per_rung=0.05)
    finally:
        pool.close()
    assert outcome.point is not None, outcome.error
    assert outcome.point.lane == spec.name and outcome.point.device.startswith("CPU (")
    assert all(outcome.point.rung(name) is not None for name in RUNGS)


MAKE_MODEL = """
import os, sys
os.environ["KERAS_BACKEND"] = "tensorflow"
import keras
inputs = keras.Input((12, 12, 1))
x = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
x = keras.layers.Flatten()(x)
x = keras.layers.Dense(64, activation="relu")(x)  # 25,600 weights: a file of about 100 KB, sent in several chunks
keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(x), name="remote_cnn").save(sys.argv[1])
"""


@pytest.mark.lanes
def test_your_own_model_is_sent_to_a_remote_lane_as_bytes_and_trained_from_its_copy_there(ssh_env, tmp_path):
    """--model on a remote lane: the file goes over the lane's own channel (never a path there), the remote keeps
    it under its SHA-256 in its own data folder, inspects and trains that copy; a local lane trains the original."""
    import hashlib

    model = tmp_path / "mine.keras"
    made = subprocess.run([PY, "-c", MAKE_MODEL, str(model)], capture_output=True, text=True, timeout=240)
    assert made.returncode == 0, made.stderr[-2000:]
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    assert model.stat().st_size > 2 * 48_000  # a file over 48 KB failed on every remote lane (issue 35 #2)
    lane = remote(ssh_env).name
    out = tmp_path / "mine.csv"
    r = cli("run", "--model", str(model), "--lanes", f"{lane},cpu1", "--samples", "512", "--batch-size", "32",
            "--data", "synthetic", "--remote-python", PY, "--csv", str(out))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "loading it in cpu1" in r.stderr  # this machine's lane inspects it: its file is here
    kept = ssh_env.remote_home / "received-models" / f"{sha}.keras"
    assert kept.read_bytes() == model.read_bytes()  # the remote's own copy, checked by its hash
    meta = json.loads(out.with_suffix(".json").read_text())
    lanes = meta["runs"][0]["lanes"]
    assert lanes[lane]["status"] == lanes["cpu1"]["status"] == "completed"
    assert meta["runs"][0]["config"]["model"]["saved"]["path"] == str(model)  # the app's path in the record
    rows = [row.split(",") for row in out.read_text().splitlines()[1:]]
    assert sum(row[1] == lane for row in rows) == 16  # 512 samples / 32 a batch
    # Only a remote lane: it inspects its copy, and the figures come back under the app's path.
    r = cli("run", "--model", str(model), "--lanes", lane, "--samples", "256", "--batch-size", "32",
            "--data", "synthetic", "--remote-python", PY)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert f"loading it in {lane}" in r.stderr and "remote_cnn: input 12x12x1, 3 classes" in r.stderr
    # A model factory likewise: its .py file is sent, imported there from the remote's copy, built at each width.
    factory = tmp_path / "my_models.py"
    factory.write_text("import keras\n\n\ndef build(width):\n    inputs = keras.Input((20,))\n"
                       "    x = keras.layers.Dense(width, activation='relu')(inputs)\n"
                       "    return keras.Model(inputs, keras.layers.Dense(4, activation='softmax')(x))\n")
    r = cli("run", "--model", f"{factory}:build", "--widths", "16", "--lanes", lane, "--samples", "256",
            "--batch-size", "32", "--data", "synthetic", "--remote-python", PY)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert f"{lane} imports it" in r.stderr and "build(16):" in r.stderr
    assert (ssh_env.remote_home / "received-models" / f"{hashlib.sha256(factory.read_bytes()).hexdigest()}.py").is_file()
    assert wait_for(lambda: not ssh_env.workers(), 5)
