"""A hostile remote lane (issue 20): every field's type and range is checked at the wire, with a sentence naming
the field; what it says is escaped before it reaches a terminal; the watchdog cannot be turned off by it."""
from __future__ import annotations

import json

import pytest
from helpers import cli_in_process

from crossover_lab.core.engine.lanes import WATCHDOG_CEILING_S, Lane, _watchdog_from_env
from crossover_lab.core.engine.remote.guard import MAX_DICT_BYTES, printable
from crossover_lab.core.engine.remote.wire import RemoteHello, decode, encode
from crossover_lab.core.config import LaneSpec
from crossover_lab.core.messages import Bundle, LaneStatus, to_wire
from crossover_lab.core.records import BatchTiming, RunStarted, SegmentStarted


def record(**changes) -> dict:
    event = to_wire(Bundle((BatchTiming("r1", "cpu1", "CPU", 0, 1, 1, 0.1, 1.5, 64, False, 0.5),)))
    event["events"][0].update(changes)
    return event


def refused(data: dict, *words: str) -> None:
    with pytest.raises(ValueError) as caught:
        decode(json.dumps(data).encode())
    for word in words:
        assert word in str(caught.value), str(caught.value)


@pytest.mark.parametrize("changes, words", [
    ({"ms": 10 ** 400}, ("BatchTiming.ms", "digits")),
    ({"ms": 1e300}, ("BatchTiming.ms", "more than")),
    ({"ms": -1.0}, ("BatchTiming.ms", "never negative")),
    ({"start_s": float("nan")}, ("BatchTiming.start_s", "NaN")),
    ({"step": -5}, ("BatchTiming.step", "never negative")),
    ({"widths": "evil"}, ("BatchTiming.widths",)),
    ({"widths": "64-32"}, ("BatchTiming.widths",)),  # the widths travel as a list, never joined by "-"
    ({"widths": [64, 0]}, ("BatchTiming.widths", "below 1")),
    ({"task": "mine bitcoin"}, ("BatchTiming.task", "train, predict")),
    ({"family": "\x1b[2J"}, ("BatchTiming.family", "kind of model")),
    ({"lane": "x" * 100_000}, ("BatchTiming.lane", "characters")),
    ({"loss": float("inf")}, ("BatchTiming.loss", "finite")),
    ({"epoch": 1.5}, ("BatchTiming.epoch", "float")),
    ({"requests": -1}, ("BatchTiming.requests", "never negative")),
    ({"waits_ms": [1.0, float("nan")]}, ("BatchTiming.waits_ms", "NaN")),
    ({"waits_ms": [-3.0]}, ("BatchTiming.waits_ms", "never negative")),
])
def test_a_record_out_of_range_is_refused_naming_its_field(changes, words):
    refused(record(**changes), *words)


@pytest.mark.parametrize("changes, words", [
    ({"at": float("nan")}, ("SegmentStarted.at", "not a time of day")),
    ({"clock_at": -1.0}, ("SegmentStarted.clock_at", "not a time of day")),
    ({"widths": [2 ** 53]}, ("SegmentStarted.widths", "above")),
])
def test_values_that_would_break_the_files_are_refused_at_the_wire(changes, words):
    """Issue 35 #11: a remote SegmentStarted with `at` NaN or a width of 2^53 passed the wire and left a pair of files
    that analyze and report could not read, the local lane's records included."""
    event = to_wire(Bundle((SegmentStarted("r1", "cpu1", 1, (64,), 32, 1000, 0, 1.7e9, 1.7e9),)))
    event["events"][0].update(changes)
    refused(event, *words)


def test_lists_and_dicts_are_typed_to_their_items_and_bounded():
    segment = to_wire(Bundle((SegmentStarted("r1", "cpu1", 1, (8,), 64, 100, 0, 1.0),)))
    segment["events"][0]["widths"] = ["evil"]
    refused(segment, "SegmentStarted.widths[0]")
    started = to_wire(Bundle((RunStarted("r1", "cpu1", "CPU"),)))
    started["events"][0]["settings"]["total_steps"] = "lots"  # a lane's settings are typed on the wire (RunSettings)
    refused(started, "RunSettings.total_steps")
    started["events"][0]["settings"]["total_steps"] = -5
    refused(started, "RunSettings.total_steps", "not a count")
    flood = {f"k{i}": "y" * 60_000 for i in range(6)}
    hello = to_wire(RemoteHello("1", 2, "python3", flood))
    assert len(json.dumps(hello)) > MAX_DICT_BYTES
    refused(hello, "RemoteHello.machine", "kB")
    refused(to_wire(LaneStatus(rss_mb="big")), "LaneStatus.rss_mb")


def test_what_passes_is_unchanged_but_for_escaped_text():
    good = Bundle((BatchTiming("r1", "cpu1", "CPU", 0, 1, 1, 0.1, 1.5, 64, False, 0.5, widths=(64, 32)),))
    assert decode(encode(good)) == good
    sly = decode(json.dumps(record(backend="tf\x1b]0;owned\x07\x1b[2J\u2028")).encode())
    assert sly.events[0].backend == "tf\\x1b]0;owned\\x07\\x1b[2J\\u2028"
    assert printable("line one\n\tline two") == "line one\n\tline two"


def test_the_watchdog_grows_from_steady_steps_only_and_has_a_ceiling():
    lane = Lane(LaneSpec.parse("cpu1"), watchdog_s=10.0)
    warm = BatchTiming("r1", "cpu1", "CPU", 0, 1, 1, 0.1, 9e6, 64, True, 0.5)  # a compile step of 2.5 hours
    lane._consume(Bundle((warm,)))
    assert lane.watchdog_limit_s() == 10.0
    huge = BatchTiming("r1", "cpu1", "CPU", 0, 2, 2, 0.2, 1e300, 64, False, 0.5)
    lane._consume(Bundle((huge,)))
    assert lane.watchdog_limit_s() == WATCHDOG_CEILING_S


@pytest.mark.parametrize("value", ["nan", "0", "-1", "inf", "soon"])
def test_a_watchdog_that_would_disable_or_kill_everything_is_refused(capsys, monkeypatch, value):
    monkeypatch.setattr("crossover_lab.core.cli.run.LanePool", lambda *a, **k: pytest.fail("a lane pool started"))
    r = cli_in_process(capsys, "run", "--lanes", "cpu1", "--data", "synthetic", "--watchdog-s", value)
    assert r.returncode == 2 and "--watchdog-s" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _watchdog_from_env(value) == 60.0


def test_sweep_points_are_bounded(capsys, monkeypatch):
    monkeypatch.setattr("crossover_lab.core.cli.sweep.LanePool", lambda *a, **k: pytest.fail("a lane pool started"))
    r = cli_in_process(capsys, "sweep", "--lanes", "cpu1", "--data", "synthetic", "--points", "1000000000")
    assert r.returncode == 2 and "--points" in r.stderr, r.stderr


def test_a_flood_of_events_is_cut_off_with_a_sentence_and_what_came_before_is_kept():
    from crossover_lab.core.engine.remote.channel import RemoteChannel, RemoteSettings
    from crossover_lab.core.engine.remote.guard import FloodGate
    from crossover_lab.core.engine.remote.wire import PROTOCOL, ListDevices, RemoteHello
    from crossover_lab.core.messages import Bundle
    from crossover_lab.core.records import BatchTiming, RunStarted
    from crossover_lab.core import APP_VERSION

    now = [0.0]
    gate = FloodGate(per_s=100, window_s=2.0, per_run=1000, clock=lambda: now[0])
    assert gate.admit(150) == "" and gate.admit(40) == ""  # 190 within 2 s: under 100 per second
    now[0] = 1.0
    assert "within 2 s, more than the 100 per second" in gate.admit(20)  # 210 within the window
    now[0] = 10.0  # the window has moved on; a new run starts its count again
    assert gate.admit(150, new_run=True) == ""
    for step in range(5):
        now[0] += 2.5
        reason = gate.admit(199)
    assert reason == "sent more than 1,000 events in one run"

    # The channel stops listening at the flood; what it took before stays queued for the lane's records.
    channel = RemoteChannel("gpu-box", ListDevices(APP_VERSION, PROTOCOL), RemoteSettings(ssh_command="/nonexistent/ssh"))
    channel._failure, channel.hello = "", RemoteHello(APP_VERSION, PROTOCOL, "python3")
    channel._gate = FloodGate(per_s=2, window_s=1.0, per_run=100, clock=lambda: 0.0)
    record = BatchTiming("r", "gpu0", "GPU", 1, 1, 1, 0.0, 1.0, 32, False, 0.1)
    queued = channel._messages.qsize()
    assert channel._take(Bundle((RunStarted("r", "gpu0", "GPU"), record)))
    assert not channel._take(Bundle((record,) * 5))
    assert "gpu-box" in channel._failure and "cut off" in channel._failure
    assert channel._messages.qsize() == queued + 1  # the first bundle, not the flood


def test_a_heartbeat_says_one_of_the_lane_phases_and_nothing_else():
    """A lane's phase is a type (LanePhase): from the wire it arrives as its name and is read back as the member; a
    phase no lane has is refused at the wire, not carried as a string into the watchdog."""
    from crossover_lab.core.messages import LaneAlive, LanePhase
    got = decode(encode(LaneAlive(LanePhase.READY)))
    assert isinstance(got, LaneAlive) and got.phase is LanePhase.READY
    data = to_wire(LaneAlive(LanePhase.WAITING))
    data["phase"] = "mining"
    refused(data, "mining")
