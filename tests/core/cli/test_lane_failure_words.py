"""Issue 46 #2 and issue 49 #4: a lane that fails says why where the user looks (its own progress line, the lines
under the table, the window's summary): the framework's own message, not a wrapper's first line, and the lane's
log; a call larger than a batch is refused before any lane starts; a lane still starting is not killed as hung."""
from __future__ import annotations

import json

from helpers import cli_in_process

from crossover_lab.core.lane.run import cause_line, describe_error
from crossover_lab.core.paths import lane_log_path

# What Keras raises when TensorFlow refuses a name (the text of the lane's log, its escapes included): the cause is
# the bolded line, not the first.
KERAS_WRAPPED = ("Exception encountered when calling Functional.call().\n\n"
                 "\x1b[1m'my model' is not a valid scope name. A scope name has to match the following pattern: "
                 "^[A-Za-z0-9_.\\\\/>-]*$\x1b[0m\n\nArguments received by Functional.call():\n"
                 "  • inputs=tf.Tensor(shape=(128, 8), dtype=float32)\n  • training=True\n")


def _log(lane: str, text: str = "Traceback (most recent call last):\nMemoryError\n") -> str:
    path = lane_log_path(lane)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_a_wrapped_framework_error_is_said_as_its_own_cause_shortened():
    said = describe_error(ValueError(KERAS_WRAPPED), "cpu")
    assert said.startswith("ValueError: 'my model' is not a valid scope name."), said
    assert "Exception encountered" not in said and "\x1b" not in said and "Arguments received" not in said
    assert len(describe_error(RuntimeError("x" * 2000), "cpu")) <= 300
    assert cause_line("plain first line\nsecond") == "plain first line"
    assert describe_error(RuntimeError(""), "cpu") == "RuntimeError"
    assert describe_error(MemoryError(), "cpu1").startswith("out of memory on cpu1")


def test_a_call_larger_than_a_batch_is_refused_before_any_lane_starts(capsys, scripted):
    """4,096 requests of 60,000 samples in one call (770 GB) got both lanes killed and said only "failed"."""
    out = cli_in_process(capsys, "run", "--task", "predict", "--max-batch", "4096", "--batch-size", "60000",
                         "--arrival-rate", "100", "--lanes", "cpu,cpu1", "--data", "synthetic")
    assert out.returncode == 2, out.stderr
    assert "one call could answer 245,760,000 samples at once, more than the 65,536 a batch may hold" in out.stderr
    assert "serve one request per call (--max-batch 1)" in out.stderr and "Traceback" not in out.stderr
    out = cli_in_process(capsys, "run", "--task", "predict", "--max-batch", "4096", "--batch-size", "600",
                         "--arrival-rate", "100", "--lanes", "cpu1", "--data", "synthetic")
    assert out.returncode == 2 and "choose --max-batch 109 or less" in out.stderr, out.stderr
    assert scripted.channels == []  # no lane was started


def test_a_lane_killed_at_a_rate_says_why_on_its_line_and_under_the_table(capsys, scripted, tmp_path, monkeypatch):
    from scripted_lanes import cpu_like

    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))

    scripted.scripts.update(cpu=cpu_like(fixed_ms=2.0, gflops=1e6),
                            cpu1=cpu_like(fixed_ms=2.0, gflops=1e6, die_at_step=20, die_signal=9))
    log = _log("cpu1")
    out = cli_in_process(capsys, "run", "--task", "predict", "--arrival-rate", "100", "--requests", "200",
                         "--lanes", "cpu,cpu1", "--data", "synthetic", "--csv", str(tmp_path / "load.csv"))
    assert out.returncode == 1, out.stdout + out.stderr
    killed = "the lane process was killed (signal 9), most likely for running out of memory"
    assert f"cpu1: failed: {killed} (the lane's log: {log})" in out.stderr, out.stderr
    assert f"cpu1 failed: {killed} (the lane's log: {log})" in out.stdout, out.stdout
    assert "cpu: completed" in out.stderr and "cpu failed" not in out.stdout
    lanes = json.loads((tmp_path / "load.json").read_text())["runs"][0]["lanes"]
    assert lanes["cpu1"]["status"] == "failed" and lanes["cpu1"]["failure"] == killed  # the file keeps the cause


def test_a_lane_that_raises_says_its_reason_and_one_without_a_log_says_none(capsys, scripted, tmp_path, monkeypatch):
    from scripted_lanes import cpu_like

    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))  # no lane's log on this machine

    scripted.scripts["cpu1"] = cpu_like(fail_at_step=15, fail_reason="ValueError: 'my model' is not a valid scope name")
    out = cli_in_process(capsys, "run", "--lanes", "cpu1", "--widths", "16", "--samples", "2000", "--data", "synthetic")
    assert out.returncode == 1
    assert "cpu1: failed: ValueError: 'my model' is not a valid scope name\n" in out.stderr, out.stderr  # no log here
    assert "cpu1 failed: ValueError: 'my model' is not a valid scope name" in out.stdout, out.stdout


def test_a_lane_that_starts_slower_than_the_watchdog_is_not_killed_as_hung(capsys, scripted):
    """A fresh clone's CI at load 8.9: a lane still importing its framework was killed by a 4-s watchdog. Here cpu1
    takes 2.5 s to come up, silent, under a 1-s watchdog: the watchdog is armed once it is ready, and it trains."""
    from scripted_lanes import cpu_like

    scripted.scripts["cpu1"] = cpu_like(start_s=2.5)
    out = cli_in_process(capsys, "run", "--lanes", "cpu1", "--widths", "16", "--samples", "2000", "--data",
                         "synthetic", "--watchdog-s", "1")
    assert out.returncode == 0, out.stderr
    assert "cpu1: completed" in out.stderr and "stopped responding" not in out.stdout + out.stderr
    assert scripted.started("cpu1") == 1
