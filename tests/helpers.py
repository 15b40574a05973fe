"""What several test modules share: the repository's paths, the CLI as a newcomer runs it, a bounded poll, and
canned results (lane events, an anatomy point, a remote machine's answer) that no lane has to measure.

Test modules import from here and from the other support modules (gui_fixtures, ssh_server, refine_fakes),
never from one another. Fixtures live in gui_fixtures and ssh_server, registered in conftest.py.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import psutil
import pytest

from crossover_lab.core.analysis.anatomy import AnatomyPoint, RungTime
from crossover_lab.core.run_stats import summarize
from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.engine.devices import LaneOption
from crossover_lab.core.results import LaneResult, RunResult
from crossover_lab.core.engine.remote.devices import RemoteMachine, host_of
from crossover_lab.core.records import BatchTiming, RunFinished, RunSettings, RunStarted

ROOT = Path(__file__).resolve().parent.parent  # the repository: main.py, docs/, tests/
MAIN = ROOT / "main.py"
H200_SWEEP_CSV = ROOT / "docs" / "results" / "h200-2026-11-30" / "sweep-b128.csv"  # a real sweep, 20 points
CLI_TIMEOUT_S = 240  # below pytest's own 300 s per test, so a hung CLI fails with its output, not a bare timeout


# ---------------------------------------------------------------- the CLI, polling


# Whether the test running now may start real lanes and processes of the app: conftest.py sets it from the test's
# `lanes` mark, so a logic test that starts one by mistake fails, naming the mark, instead of slowing the fast set.
REAL_LANES = {"allowed": True}


def refuse_unless_lanes(what: str) -> None:
    if not REAL_LANES["allowed"]:
        raise AssertionError(f"this test starts {what}: give it the `lanes` mark (a test of realness), or run "
                             "it on scripted lanes (the `scripted` fixture, tests/scripted_lanes.py)")


def cli(*args: str, timeout: float = CLI_TIMEOUT_S, cwd: Path | str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python main.py ARGS` in a process of its own, as a user runs it; `env` adds to (or replaces in) this
    process's environment."""
    refuse_unless_lanes("the app as a process of its own")
    return subprocess.run([sys.executable, str(MAIN), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or ROOT, env={**os.environ, **(env or {})})


def cli_in_process(capsys, *args: str) -> subprocess.CompletedProcess:
    """The CLI's main(ARGS) in this process, its output taken from `capsys`: for what ends before any lane starts
    (a refusal, `analyze`). An uncaught exception fails the test as a traceback would fail `cli()`'s caller."""
    from crossover_lab.core.cli.main import main

    capsys.readouterr()  # what came before is not this command's
    extra = ""
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own refusals exit, as in a process of its own
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        extra = "" if exc.code is None or isinstance(exc.code, int) else f"{exc.code}\n"
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["main.py", *args], code, out.out, out.err + extra)


def wall_limit(seconds: float) -> float:
    """A wall-clock bound a user relies on (a stop, a close, a watchdog), stretched by how far this machine is loaded
    past its cores: another process on every core halves every process's speed alike. The bound itself is set with
    room for a quiet machine's jitter; the stretch is for CI and a busy workstation."""
    return seconds * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def load_words() -> str:
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.05) -> bool:
    """Poll `predicate` until it holds or `timeout` s have passed: whether it held (asked once more at the end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


# ---------------------------------------------------------------- canned lane events and results


CONFIG = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=1, data="synthetic", samples=6400))
SPECS = [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")]


def lane_events(run_id: str, lane: str, device: str, ms: float, n: int = 100, warmup: int = 5,
                first_ms: float = 300.0) -> list:
    """A lane's RunStarted and n batches: a slow first one, `warmup` at 3 ms, then about `ms` each."""
    events: list = [RunStarted(run_id, lane, device, RunSettings.from_json({"steps_per_epoch": n}))]
    t = 0.0
    for step in range(1, n + 1):
        this = first_ms if step == 1 else (ms * 3 if step <= warmup else ms * (1 + 0.05 * np.sin(step)))
        events.append(BatchTiming(run_id, lane, device, 1, step, step, t, this, 64, step <= warmup, 1.0))
        t += this / 1000
    return events


def finished(run_id: str, lane: str, device: str, events: list) -> RunFinished:
    """The RunFinished a lane sends after `events`."""
    records = [e for e in events if isinstance(e, BatchTiming)]
    return RunFinished(run_id, lane, summarize(records, run_id=run_id, lane=lane, device=device, status="completed",
                                               flops_per_batch=CONFIG.flops_per_batch, wall_s=1.0))


def two_lane_result(run_id: str, width: int, cpu_ms: float, gpu_ms: float, config: RunConfig | None = None,
                    started_at: str = "2026-01-01T00:00:00+00:00", lanes: tuple[str, str] = ("cpu", "gpu0")
                    ) -> RunResult:
    """A completed run of one hidden layer of `width` on cpu and gpu0 (or `lanes`), at about these ms per batch
    (`config`: the point's whole config, a sweep's say; its width is `width`)."""
    config = config or RunConfig(ModelSpec((width,)), TrainSpec(batch_size=64))
    names, lanes = lanes, {}
    for lane, ms in zip(names, (cpu_ms, gpu_ms)):
        events = lane_events(run_id, lane, lane.upper(), ms)
        records = [e for e in events if isinstance(e, BatchTiming)]
        s = summarize(records, run_id=run_id, lane=lane, device=lane.upper(), status="completed",
                      flops_per_batch=config.flops_per_batch, wall_s=1.0)
        lanes[lane] = LaneResult(lane, events[0], records, s)
    return RunResult(run_id, config, Schedule.SEQUENTIAL, started_at, lanes)


def canned_ramp(plan: Sequence[RunConfig], overlap_at: int | None = None) -> RunResult:
    """A finished ramp through `plan` (core/study/sweep.py ramp_plan) on cpu and cpu1 taking turns, cpu1 twice as
    slow at every width; at width `overlap_at` both lanes' segments ran at once (contended)."""
    from crossover_lab.core.records import SegmentEnded, SegmentStarted
    from crossover_lab.core.results import Segment

    lanes = {}
    for lane, offset, slower in (("cpu", 0.0, 1.0), ("cpu1", 100.0, 2.0)):
        result = LaneResult(lane, lane_events("ramp", lane, lane.upper(), 1.0)[0])
        for index, config in enumerate(plan, start=1):
            width = config.model.widths[0]
            records = [dataclasses.replace(r, segment=index, widths=(width,))
                       for r in lane_events("ramp", lane, lane.upper(), slower * width / 100)
                       if isinstance(r, BatchTiming)]
            s = summarize(records, run_id="ramp", lane=lane, device=lane.upper(), status="completed",
                          flops_per_batch=config.flops_per_batch, wall_s=1.0)
            at = index * 10.0 + (0.0 if overlap_at == width else offset)  # cpu1 alone, or beside cpu
            started = SegmentStarted("ramp", lane, index, config.model.widths, config.train.batch_size,
                                     config.flops_per_batch, 0, at)
            result.segments.append(Segment(started, SegmentEnded("ramp", lane, index, s, at + 5.0)))
            result.records += records
        lanes[lane] = result
    return RunResult("ramp", plan[0], Schedule.INTERLEAVED, "2026-01-01T00:00:00+00:00", lanes)


def fake_refined_points(monkeypatch, ms: Callable[[int], tuple[float, float]],
                        lanes: tuple[str, str] = ("cpu", "gpu0")) -> list[RunConfig]:
    """core/study/refined_sweep.py measures each point as a canned run of `lanes` at `ms(width)` ms per batch,
    without lanes; returns the list of configs it timed, in order. Pass ReadyPool() as the pool."""
    from crossover_lab.core.files.sweeps.rows import SweepRow
    from crossover_lab.core.study import refined_sweep

    timed: list[RunConfig] = []

    def fake_point(pool, specs, config, result, on_event, cancel):
        timed.append(config)
        width = config.model.widths[0]
        run = two_lane_result(f"refine-{width}-{len(timed)}", width, *ms(width), config=config, lanes=lanes)
        result.runs.append(run)
        return run, [SweepRow.from_result(run, lane) for lane in lanes]

    monkeypatch.setattr(refined_sweep, "measure_point", fake_point)
    return timed


class ReadyPool:
    """A lane pool whose lanes are ready at once (its points come from fake_refined_points)."""

    def ready(self, lanes, cancel, data_of=None) -> None:
        pass


# ---------------------------------------------------------------- an anatomy point


def rung(median: float, spread: float = 0.0, k: int = 1) -> RungTime:
    return RungTime(median, median - spread, median + spread, 20, k)


def point(lane: str = "gpu0", device: str = "GPU:0 (H200)", **medians: float | None) -> AnatomyPoint:
    """An anatomy with known rungs (ms): fit 1.37, fit_pipelined 0.9, step_loop 0.3, … ; None: not measured."""
    times = {"fit": 1.37, "fit_pipelined": 0.9, "step_loop": 0.3, "step_loop_pipelined": 0.1, "device_loop": 0.05}
    times.update(medians)
    rungs = {name: None if ms is None else rung(ms, 0.01) for name, ms in times.items()}
    reasons = {name: "PyTorch has no on-device loop on a CPU" for name, ms in times.items() if ms is None}
    return AnatomyPoint(lane, device, "jax", (64, 64), 128, 10**7, rungs, reasons, window_steps=8)


# ---------------------------------------------------------------- another machine, without SSH


def fake_lister(host, settings, timeout, cancel):
    """What a GPU server would answer, without SSH; a host called 'down' cannot be reached."""
    host = host_of(host)
    if host.startswith("down"):
        raise ConfigError(f"ssh://{host} cannot be reached (Connection refused)")
    return RemoteMachine(host, settings.python_for(host), {"machine": "lab-gpu"}, (
        LaneOption(LaneSpec("cpu", host=host), "CPU (Xeon, 16 threads)", True),
        LaneOption(LaneSpec("gpu", 0, backend="jax", host=host), "GPU:0 (NVIDIA A100)", True)))


# ---------------------------------------------------------------- the window's file dialogs


def answer_next_dialog(dialogs, path: str | None, seen: list[str]) -> None:
    """When the next dialog opens: note the folder it starts in, then choose `path` (None: cancel)."""
    from PySide6.QtCore import QTimer  # here, so that core tests never import Qt

    def answer() -> None:
        dialog = dialogs.last_dialog
        seen.append(os.path.realpath(dialog.directory().absolutePath()))
        if path is None:
            dialog.reject()
        else:
            dialog.selectFile(path)
            dialog.accept()
    QTimer.singleShot(0, answer)


# ---------------------------------------------------------------- growing files and process groups


def record_counts(path: Path) -> dict[str, int]:
    """Whole records per lane in a growing per-batch CSV (a line still being written is not counted)."""
    counts: dict[str, int] = {}
    if path.exists():
        with open(path, newline="") as fh:
            for row in csv.DictReader(line for line in fh if line.endswith("\n")):
                counts[row["lane"]] = counts.get(row["lane"], 0) + 1
    return counts


def wait_for_records(path: Path, lanes: set[str], n: int = 20, timeout: float = 120,
                     proc: subprocess.Popen | None = None) -> None:
    """Until the growing CSV holds at least n records of every lane; fails at once if `proc` (the process
    writing it) has ended first, with what it said."""
    def enough() -> bool:
        return all(record_counts(path).get(lane, 0) >= n for lane in lanes)

    if wait_for(lambda: enough() or (proc is not None and proc.poll() is not None), timeout, 0.2) and enough():
        return
    if proc is not None and proc.poll() is not None:
        said = proc.stderr.read()[-3000:] if proc.stderr else ""
        pytest.fail(f"{path}: the process ended (exit {proc.returncode}) before {n} records of {lanes}: {said}")
    pytest.fail(f"no records from {lanes} in {path} within {timeout} s")


def wait_for_more_records(path: Path, than: int, timeout: float) -> bool:
    """Whether the CSV holds more than `than` whole records within `timeout` (records still reach the disk)."""
    return wait_for(lambda: sum(record_counts(path).values()) > than, timeout, 0.1)


def group_gone(pgid: int, timeout: float = 5.0) -> bool:
    """No process of the CLI's group is left (lanes included) within `timeout`."""
    return wait_for(lambda: not [p for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == pgid and _running(p)],
                    timeout, 0.1)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _running(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def check_files(csv_path: Path, lanes: set[str]) -> dict:
    """Both files exist, parse, and describe the same run; returns the sidecar."""
    meta = json.loads(csv_path.with_suffix(".json").read_text())
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    run_ids = {r["run_id"] for r in rows}
    assert run_ids == {run["run_id"] for run in meta["runs"]}, (run_ids, [r["run_id"] for r in meta["runs"]])
    assert {r["lane"] for r in rows} == lanes
    assert all(float(r["ms"]) > 0 for r in rows)
    return meta


# ---------------------------------------------------------------- a powercap tree a test writes (RAPL without RAPL)


class FakePowercap:
    """A /sys/class/powercap look-alike under `root`: package domains intel-rapl:N (named package-N), each with a
    DRAM subdomain intel-rapl:N:0 when `dram`. Counters are written whole (a temporary file renamed over),
    so a reader never sees half a number. `tick(watts)` advances them at that power in a thread of its own."""

    MAX_RANGE_UJ = 262_143_328_850

    def __init__(self, root: Path, packages: int = 1, dram: bool = True, max_range_uj: int = MAX_RANGE_UJ) -> None:
        self.root, self.max_range = Path(root), max_range_uj
        self.domains: dict[str, Path] = {}
        for n in range(packages):
            self._domain(self.root / f"intel-rapl:{n}", f"package-{n}")
            if dram:
                self._domain(self.root / f"intel-rapl:{n}" / f"intel-rapl:{n}:0", "dram", key=f"dram-{n}")
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def _domain(self, folder: Path, name: str, key: str | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "name").write_text(name + "\n")
        (folder / "max_energy_range_uj").write_text(f"{self.max_range}\n")
        self.domains[key or name] = folder
        self.set(key or name, 0)

    def set(self, domain: str, uj: int) -> None:
        path = self.domains[domain] / "energy_uj"
        tmp = path.with_name(f".energy_uj.{threading.get_ident()}")
        tmp.write_text(f"{int(uj) % self.max_range}\n")
        os.replace(tmp, path)

    def get(self, domain: str) -> int:
        return int((self.domains[domain] / "energy_uj").read_text())

    def tick(self, watts: float, interval: float = 0.002) -> None:
        """Advance every domain at `watts` (each) until stop(), from a thread."""
        self._stop = stop = threading.Event()
        start = {d: self.get(d) for d in self.domains}
        t0 = time.perf_counter()

        def run() -> None:
            while not stop.wait(interval):
                done = int((time.perf_counter() - t0) * watts * 1e6)
                for d in self.domains:
                    self.set(d, start[d] + done)

        self._thread = threading.Thread(target=run, name="fake-rapl", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._stop is not None and self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._stop = self._thread = None
