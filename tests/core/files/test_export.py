"""CSV and JSON sidecar: exact columns, round trip, atomic writes, clear errors."""
from __future__ import annotations

import errno
import json
import os

import pytest

from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.files.run_files import ExportError, export_runs, read_batches_csv
from crossover_lab.core.files.atomic import atomic_write_text
from crossover_lab.core.records import BatchTiming, RunSettings, RunStarted, RunSummary
from crossover_lab.core.results import LaneResult, RunResult


def _result(n: int = 12) -> RunResult:
    cfg = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=16))
    recs = [BatchTiming("r1", "cpu", "CPU (x, 2 threads)", 1, i + 1, i + 1, i * 0.01, 1.5 + i / 10, 16,
                        i < 5, 2.3 - i / 100) for i in range(n)]
    lane = LaneResult("cpu", RunStarted("r1", "cpu", "CPU (x, 2 threads)", RunSettings.from_json({"jit_compile": False})), recs,
                      RunSummary("r1", "cpu", "CPU (x, 2 threads)", "completed", median_ms=2.0))
    failed = LaneResult("gpu0", None, [], None, "No GPU is visible to TensorFlow (…)")
    return RunResult("r1", cfg, Schedule.SEQUENTIAL, "2026-01-01T00:00:00Z", {"cpu": lane, "gpu0": failed})


def test_csv_columns_and_round_trip(tmp_path):
    result = _result()
    csv_path, json_path = export_runs(tmp_path / "t.csv", [result], {"cpu": "x"})
    header = (tmp_path / "t.csv").read_text().splitlines()[0]
    assert header.startswith("run_id,lane,device,epoch,batch,step,start_s,ms,samples,warmup,loss")
    back = read_batches_csv(csv_path)
    assert [(r.step, r.warmup, r.ms) for r in back] == [(r.step, r.warmup, pytest.approx(r.ms)) for r in result.lanes["cpu"].records]
    meta = json.loads(json_path.read_text())
    assert meta["runs"][0]["lanes"]["gpu0"]["failure"].startswith("No GPU")
    assert meta["runs"][0]["lanes"]["cpu"]["settings"] == {"jit_compile": False}  # as recorded, no more
    assert meta["runs"][0]["config"]["model"]["widths"] == [32]


def test_pandas_reads_it_as_is(tmp_path):
    pd = pytest.importorskip("pandas")
    csv_path, _ = export_runs(tmp_path / "t.csv", [_result()], {})
    df = pd.read_csv(csv_path)
    assert list(df.columns[:11]) == ["run_id", "lane", "device", "epoch", "batch", "step", "start_s", "ms",
                                     "samples", "warmup", "loss"]
    assert df["warmup"].tolist()[:6] == [1, 1, 1, 1, 1, 0]
    assert df["ms"].dtype.kind == "f"


def test_unwritable_path_leaves_nothing_and_keeps_records(tmp_path):
    result = _result()
    with pytest.raises(ExportError, match="cannot write"):
        export_runs(tmp_path / "missing-folder" / "t.csv", [result], {})
    assert not (tmp_path / "missing-folder").exists()
    assert len(result.lanes["cpu"].records) == 12


def test_atomic_write_replaces_whole_file_or_nothing(tmp_path, monkeypatch):
    target = tmp_path / "a.csv"
    atomic_write_text(target, "old\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ExportError, match="No space left"):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]  # no temporary file left behind


def test_a_pair_is_written_whole_or_not_at_all_when_the_disk_fills_between_its_files(tmp_path, monkeypatch):
    from crossover_lab.core.files.atomic import atomic_write_files

    csv_path, json_path = tmp_path / "run.csv", tmp_path / "run.json"
    atomic_write_files([(csv_path, "old csv\n"), (json_path, "old json\n")])
    calls = []
    real_fsync = os.fsync

    def full_on_the_second(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_on_the_second)
    with pytest.raises(ExportError, match="No space left"):
        atomic_write_files([(csv_path, "new csv\n"), (json_path, "new json\n")])
    assert csv_path.read_text() == "old csv\n" and json_path.read_text() == "old json\n"  # the old pair, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.json"]  # no temporary file left


def test_results_that_cannot_be_written_where_asked_go_to_the_autosave_folder_and_say_so(tmp_path):
    from crossover_lab.core.cli.common import EXIT_FAILED, EXIT_OK, write_or_rescue

    def full():
        raise ExportError("cannot write /data/out.csv: No space left on device")

    rescued = [tmp_path / "autosave" / "r.csv", tmp_path / "autosave" / "r.json"]
    code, said = write_or_rescue(full, lambda: rescued, "the records")
    assert code == EXIT_FAILED
    assert said == (f"error: cannot write /data/out.csv: No space left on device; the records saved to "
                    f"{rescued[0]}, {rescued[1]} instead")

    def also_full():
        raise OSError(errno.ENOSPC, "No space left on device")

    code, said = write_or_rescue(full, also_full, "the records")
    assert code == EXIT_FAILED and "the records not saved" in said and "could not take them" in said

    # The pair the run grew at the target (its last records missing) goes once the records are whole elsewhere,
    # and stays while they are nowhere else.
    grown = [tmp_path / "out.csv", tmp_path / "out.json"]
    for path in grown:
        path.write_text("partial")
    code, said = write_or_rescue(full, also_full, "the records", partial=lambda: grown)
    assert all(p.exists() for p in grown) and "what was written at the target so far is kept" in said
    code, said = write_or_rescue(full, lambda: rescued, "the records", partial=lambda: grown)
    assert not any(p.exists() for p in grown) and said.endswith("instead; the incomplete out.csv and out.json removed")
    assert write_or_rescue(lambda: [tmp_path / "out.csv"], also_full, "x") == (EXIT_OK, f"wrote {tmp_path / 'out.csv'}")



def test_a_grown_pair_is_whole_when_its_csv_holds_every_record_beside_a_sidecar(tmp_path):
    from helpers import two_lane_result

    from crossover_lab.core.files.live import RunFiles

    result = two_lane_result("r1", 64, 2.0, 1.0)
    files = RunFiles(tmp_path / "out.csv", {"cpu": "test"})
    try:
        files.begin([result])
        files.writer.flush(10)
        assert files.whole([result])
        lines = (tmp_path / "out.csv").read_text().splitlines(keepends=True)
        (tmp_path / "out.csv").write_text("".join(lines[:-1]))  # the last record never reached the disk
        assert not files.whole([result])
        (tmp_path / "out.csv").write_text("".join(lines))
        (tmp_path / "out.json").unlink()
        assert not files.whole([result])
    finally:
        files.close()


def test_a_csv_saved_with_a_utf8_byte_order_mark_reads_as_without(tmp_path, capsys):
    """Spreadsheet programs save CSV with a BOM: the first column is still `lane` (or `run_id`)."""
    from helpers import H200_SWEEP_CSV, cli_in_process

    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + H200_SWEEP_CSV.read_bytes())
    plain = cli_in_process(capsys, "analyze", str(H200_SWEEP_CSV))
    out = cli_in_process(capsys, "analyze", str(bom))
    assert out.returncode == 0 and out.stdout == plain.stdout.replace(str(H200_SWEEP_CSV), str(bom))


def test_a_lanes_log_past_its_limit_is_moved_aside_keeping_one_older(tmp_path):
    from crossover_lab.core.lane.worker import rotate_log

    log = tmp_path / "lane-cpu.log"
    log.write_bytes(b"x" * 100)
    rotate_log(str(log), limit=1000)
    assert log.exists() and not (tmp_path / "lane-cpu.log.1").exists()  # under the limit: left alone
    log.write_bytes(b"y" * 2000)
    rotate_log(str(log), limit=1000)
    assert not log.exists() and (tmp_path / "lane-cpu.log.1").read_bytes() == b"y" * 2000
    rotate_log(str(tmp_path / "missing.log"))  # no log yet: nothing to do, no error


def test_a_sweeps_files_never_have_a_hole_and_say_when_they_are_not_whole(tmp_path, monkeypatch):
    """A sweep's files grow a point at a time; once one write fails (a full disk) none follows, so a point that
    came later is never there without the one before it, and the CLI knows the files are not whole."""
    from helpers import two_lane_result

    from crossover_lab.core.files.sweeps import files as sweep_files
    from crossover_lab.core.files.sweeps.files import SweepFiles, read_sweep_rows, run_rows

    runs = [two_lane_result(f"r{i}", w, 2.0, 1.0) for i, w in enumerate((16, 64, 256))]
    files = SweepFiles(tmp_path / "s.csv", {"cpu": "test"})
    files.add_point(run_rows(runs[0]), runs[0])
    assert files.whole()
    real = sweep_files.append_lines
    calls = {"n": 0}

    def full_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep_files, "append_lines", full_once)
    files.add_point(run_rows(runs[1]), runs[1])  # its rows fail
    files.add_point(run_rows(runs[2]), runs[2])  # the disk has room again: still not appended
    assert not files.whole() and "No space left" in files.error
    files.close()
    rows, _ = read_sweep_rows(str(tmp_path / "s.csv"))
    assert sorted({r.width for r in rows}) == [16]  # the first point only: no hole where the second failed


def as_killed(files, folder, names, snapshot) -> None:
    """Copy the growing files as kill -9 would leave them now: what the writer has written, nothing more."""
    import shutil

    files.writer.flush(10)
    snapshot.mkdir()
    for name in names:
        shutil.copy(folder / name, snapshot / name)


def test_a_ramp_cut_off_without_a_word_leaves_files_that_read_as_the_widths_it_completed(tmp_path, capsys,
                                                                                        scripted_pool):
    """What kill -9 leaves: the growing pair as it stood when the process vanished mid-ramp. Every width each lane
    completed is in the sidecar (it is rewritten at each segment's end), so `analyze` reads those points; a kill
    after three widths gave 0 points when the sidecar waited for a lane's end."""
    import threading

    from helpers import cli_in_process

    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.engine.conductor import RunControl
    from crossover_lab.core.engine.pool import run_comparison
    from crossover_lab.core.engine.tracking import RunTracker
    from crossover_lab.core.files.live import RunFiles
    from crossover_lab.core.records import SegmentEnded, now_iso
    from crossover_lab.core.results import new_run_id
    from crossover_lab.core.study.sweep import ramp_plan

    base = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=64, samples=2048, data="synthetic"))
    plan = ramp_plan(base, (16, 64, 256, 1024, 4096), layers=1, steady_steps=10, seconds=1.0)
    lanes = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]
    tracker = RunTracker(new_run_id(), plan[0], lanes, Schedule.INTERLEAVED, now_iso(), plan)
    files = RunFiles(tmp_path / "ramp.csv", {"cpu": "test"})
    control = RunControl()
    snapshot = tmp_path / "killed"
    ended: list[str] = []
    taken = threading.Event()

    def on_event(event):
        files.take([event], [tracker.result])
        if isinstance(event, SegmentEnded):
            ended.append(event.lane)
            if len(ended) == 6 and not taken.is_set():  # three widths on each lane
                as_killed(files, tmp_path, ("ramp.csv", "ramp.json"), snapshot)
                taken.set()
                control.cancel.set()

    try:
        files.begin([tracker.result])
        run_comparison(scripted_pool, lanes, plan[0], schedule=Schedule.INTERLEAVED, plan=plan, control=control,
                       tracker=tracker, on_event=on_event)
    finally:
        files.close()
    assert taken.is_set()
    out = cli_in_process(capsys, "analyze", str(snapshot / "ramp.csv"))
    assert out.returncode == 0, out.stderr
    fits = {line.split()[0]: line.split()[3] for line in out.stdout.splitlines()
            if line.startswith(("cpu ", "cpu1 ")) and len(line.split()) == 5}  # the fits' table
    assert fits == {"cpu": "3", "cpu1": "3"}, out.stdout  # each lane's three completed widths, fitted
    # The scripted costs cross at about 21 MFLOP per batch (width 50-60): between 16 and 256, where one pass says it.
    assert "cpu is faster up to 16 units and cpu1 from 256 units" in out.stdout


def test_a_plain_run_cut_off_mid_segment_reads_as_points_cut_short(tmp_path, capsys, scripted_pool):
    """Issue 35 #5: kill -9 during a plain run left thousands of records and a sidecar without the segment's end:
    analyze said "holds no points". The sidecar now names each segment when it starts, and analyze ends a segment
    that never ended from the records the file kept: a point per lane, cancelled, with its batches."""
    import threading

    from helpers import cli_in_process

    from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.engine.conductor import RunControl
    from crossover_lab.core.engine.pool import run_comparison
    from crossover_lab.core.engine.tracking import RunTracker
    from crossover_lab.core.files.live import RunFiles
    from crossover_lab.core.files.sweeps.files import read_sweep_rows
    from crossover_lab.core.records import BatchTiming, now_iso
    from crossover_lab.core.results import new_run_id

    config = RunConfig(ModelSpec((64,)), TrainSpec(batch_size=32, samples=60_000, data="synthetic"))
    lanes = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]
    tracker = RunTracker(new_run_id(), config, lanes, Schedule.SIDE_BY_SIDE, now_iso())
    files = RunFiles(tmp_path / "run.csv", {"cpu": "test"})
    control = RunControl()
    snapshot = tmp_path / "killed"
    seen: dict[str, int] = {}
    taken = threading.Event()

    def on_event(event):
        files.take([event], [tracker.result])
        if isinstance(event, BatchTiming):
            seen[event.lane] = seen.get(event.lane, 0) + 1
            if min(seen.get("cpu", 0), seen.get("cpu1", 0)) >= 300 and not taken.is_set():
                files.flush_records()
                as_killed(files, tmp_path, ("run.csv", "run.json"), snapshot)
                taken.set()
                control.cancel.set()

    try:
        files.begin([tracker.result])
        run_comparison(scripted_pool, lanes, config, schedule=Schedule.SIDE_BY_SIDE, control=control, tracker=tracker,
                       on_event=on_event)
    finally:
        files.close()
    assert taken.is_set()
    rows, _ = read_sweep_rows(str(snapshot / "run.csv"))
    assert {r.lane for r in rows} == {"cpu", "cpu1"}
    assert all(r.status == "cancelled" and r.n_batches >= 250 and r.median_ms > 0 for r in rows)
    out = cli_in_process(capsys, "analyze", str(snapshot / "run.csv"))
    assert out.returncode == 0 and "holds no points" not in out.stderr, out.stderr
