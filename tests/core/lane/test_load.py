"""How busy the machine was: other processes' CPU time on the lane's cores, from /proc, never guessed."""
from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from crossover_lab.core.lane.load import BUSY_SHARE, CpuSample, load_average, others_share, sample

linux = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="no /proc on this system")


def test_the_share_is_what_others_used_of_the_cores_time():
    start = CpuSample(at=0.0, busy_ticks=1000, own_ticks=500, cores=2)
    end = CpuSample(at=1.0, busy_ticks=1000 + 150, own_ticks=500 + 50, cores=2)  # 1 s of 2 cores: 200 ticks at 100 Hz
    share = others_share(start, end)
    assert share == pytest.approx(100 / (1.0 * os.sysconf("SC_CLK_TCK") * 2))
    assert math.isnan(others_share(None, end)) and math.isnan(others_share(end, start))


@linux
def test_a_cpu_bound_process_on_the_lanes_core_is_seen_as_other_work():
    core = sorted(os.sched_getaffinity(0))[-1]
    quiet = sample([core])
    time.sleep(0.5)
    idle_share = others_share(quiet, sample([core]))
    burner = subprocess.Popen([sys.executable, "-c", "import os, time\nos.sched_setaffinity(0, {%d})\n"
                               "end = time.time() + 20\nwhile time.time() < end: pass" % core])
    try:
        time.sleep(0.3)  # it is running
        before = sample([core])
        time.sleep(1.5)
        busy_share = others_share(before, sample([core]))
    finally:
        burner.kill()
        burner.wait()
    assert busy_share > 0.6, (idle_share, busy_share)
    assert busy_share > BUSY_SHARE
    assert load_average() >= 0


@linux
@pytest.mark.lanes
def test_a_point_measured_beside_a_cpu_bound_process_is_marked_and_the_verdict_says_so(pool):
    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
    from crossover_lab.core.engine.pool import run_comparison
    from crossover_lab.core.words.run import verdict_lines

    config = RunConfig(ModelSpec((64,)), TrainSpec(batch_size=64, epochs=1, samples=4096, max_steps=150,
                                                    data="synthetic"))
    specs = [LaneSpec.parse("cpu1"), LaneSpec.parse("cpu")]
    pool.ready(specs)  # imported before the burner starts: the point is measured beside it, not the import
    core = sorted(os.sched_getaffinity(0))[-1]  # cpu1's core (one thread, pinned to the last)
    burner = subprocess.Popen([sys.executable, "-c", "import os, time\nos.sched_setaffinity(0, {%d})\n"
                               "end = time.time() + 120\nwhile time.time() < end: pass" % core])
    try:
        busy = run_comparison(pool, specs, config, schedule=Schedule.SEQUENTIAL)
    finally:
        burner.kill()
        burner.wait()
    cpu1 = busy.lanes["cpu1"].summary
    assert cpu1 is not None and cpu1.others_cpu > 0.3, cpu1  # the burner had about half the core
    assert cpu1.load_avg > 0
    lines = verdict_lines([lane.summary for lane in busy.lanes.values()])
    assert any("other work used" in line.lower() and "cpu1's" in line and "may not hold" in line for line in lines), lines
    # (No quiet run to compare with: the suite runs its test files side by side, so no run here is quiet. That a
    # quiet core reads near 0 is test_a_cpu_bound_process_on_the_lanes_core_is_seen_as_other_work's.)


@linux
def test_a_study_started_on_a_busy_machine_says_so_before_it_measures():
    from crossover_lab.core.cli.common import busy_before_start

    # Burners that are not this process's children: the app counts its own children (its lanes) as its own work,
    # so a child burner would read as ours and the test would pass only when some other process kept it busy.
    loop = "import time\nend = time.time() + 20\nwhile time.time() < end: pass"
    burners = [int(subprocess.run(["sh", "-c", f"{sys.executable} -c '{loop}' >/dev/null 2>&1 & echo $!"],
                                  capture_output=True, text=True, check=True).stdout)
               for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.3)
        words = busy_before_start(0.6)
    finally:
        for pid in burners:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert words.startswith("other work uses ") and "of this machine's CPU now (load " in words, words
    assert "may not hold" in words


def test_the_load_a_lane_meets_leaves_out_the_turns_it_waited_out():
    """Two stretches of training with a turn waited out between them, during which the other lane kept both cores
    busy: the share of other work is that of the stretches alone (a quiet machine read 27-28% busy on every
    interleaved run when the wait was counted)."""
    from crossover_lab.core.lane.load import CpuSample, _TICKS, others_share_of

    def at(t: float, busy: float, own: float) -> CpuSample:
        return CpuSample(t, int(busy * _TICKS), int(own * _TICKS), 2, 0, 2)

    # Training 0-1 s and 3-4 s: the lane itself used 1.9 of its 2 core-seconds each time, other work 0.1.
    # Waiting 1-3 s: the other lane used 2 core-seconds a second.
    first = (at(0.0, 0.0, 0.0), at(1.0, 2.0, 1.9))
    second = (at(3.0, 6.0, 1.9), at(4.0, 8.0, 3.8))
    assert others_share_of([first, second]) == pytest.approx(0.05, abs=0.01)
    assert others_share(first[0], second[1]) > 0.5  # the old reading: the wait counted as other work
    assert math.isnan(others_share_of([(None, first[1])]))
