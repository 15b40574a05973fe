"""The window with several machines: hosts in the Lanes panel, prices per lane, saved sweeps overlaid on the Sweep tab."""
from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from gui_fixtures import no_gpu_options
from helpers import H200_SWEEP_CSV as H200, fake_lister

from crossover_lab.core.config import LaneSpec, RunConfig, Schedule
from crossover_lab.core.engine.pool import LanePool
from crossover_lab.gui.settings import AppSettings



@pytest.fixture
def panel(qtbot, monkeypatch):
    monkeypatch.setattr("crossover_lab.gui.panels.remote_hosts.list_remote_lanes", fake_lister)
    from crossover_lab.gui.panels.lanes import LanesPanel

    widget = LanesPanel()
    qtbot.addWidget(widget)
    widget.set_options(no_gpu_options())
    yield widget
    widget.shutdown()


def test_an_added_host_lists_its_lanes_beside_this_machines(panel, qtbot):
    remotes = []
    panel.remote_changed.connect(remotes.append)
    panel.hosts.host_edit.setText("ssh://me@lab:2222")
    panel.hosts.python_edit.setText("/opt/venv/bin/python")
    qtbot.mouseClick(panel.hosts.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "ssh://me@lab:2222/jax:gpu0" in panel.boxes, timeout=5000)
    assert panel.boxes["cpu"].isEnabled()  # this machine's lanes stay
    assert "NVIDIA A100" in panel.boxes["ssh://me@lab:2222/jax:gpu0"].text()
    assert remotes[-1].python_for("me@lab:2222") == "/opt/venv/bin/python"
    panel.boxes["ssh://me@lab:2222/jax:gpu0"].setChecked(True)
    assert "ssh://me@lab:2222/jax:gpu0" in panel.selected_names()
    assert not panel.hosts.add_host("ssh://-oProxyCommand=x") and "ssh://[user@]host" in panel.hosts.note.text()
    assert panel.hosts.add_host("down.example")
    qtbot.waitUntil(lambda: any("ssh://down.example cannot be reached" in w.text()
                                for w in panel.hosts.findChildren(type(panel.note)) if w.isVisibleTo(panel)),
                    timeout=5000)
    panel.hosts.remove_host("me@lab:2222")
    assert "ssh://me@lab:2222/jax:gpu0" not in panel.boxes and panel.hosts.hosts() == ["down.example"]


def test_hosts_and_prices_are_remembered(panel, qtbot, tmp_path, monkeypatch):
    from crossover_lab.gui.panels.lanes import LanesPanel

    settings = AppSettings(str(tmp_path / "s.ini"))
    panel.hosts.add_host("lab", "python3.11")
    qtbot.waitUntil(lambda: "ssh://lab/cpu" in panel.boxes, timeout=5000)
    fields = panel.price_fields
    fields["cpu"].setValue(0.4)
    fields["ssh://lab/jax:gpu0"].setValue(2.5)
    assert panel.prices.values() == {"cpu": 0.4, "ssh://lab/jax:gpu0": 2.5}
    panel.save_state(settings)
    again = LanesPanel()
    qtbot.addWidget(again)
    again.set_options(no_gpu_options())
    again.restore_state(settings)
    try:
        assert again.prices.values() == {"cpu": 0.4, "ssh://lab/jax:gpu0": 2.5}
        qtbot.waitUntil(lambda: "ssh://lab/jax:gpu0" in again.boxes, timeout=5000)
        assert again.remote_settings().python_for("lab") == "python3.11"
    finally:
        again.shutdown()


def test_a_real_host_over_ssh(server, qtbot, monkeypatch):
    monkeypatch.setenv("CROSSOVER_SSH_COMMAND", server.ssh_command())
    from crossover_lab.gui.panels.lanes import LanesPanel

    widget = LanesPanel()
    qtbot.addWidget(widget)
    try:
        widget.set_options(no_gpu_options())
        assert widget.hosts.add_host(f"ssh://{server.host()}", sys.executable)
        qtbot.waitUntil(lambda: f"ssh://{server.host()}/cpu1" in widget.boxes, timeout=20000)
        assert widget.boxes[f"ssh://{server.host()}/cpu1"].isEnabled()
    finally:
        widget.shutdown()


# ---------------------------------------------------------------- the Sweep tab


@pytest.fixture
def tab(qtbot, qsettings_tmp, tmp_path):
    from crossover_lab.gui.panels.lane_prices import LanePrices
    from crossover_lab.gui.sweep.tab import SweepTab

    pool = LanePool()
    prices = LanePrices()
    widget = SweepTab(lambda: pool, lambda: [], lambda: RunConfig(), lambda: False,
                      settings=AppSettings(str(tmp_path / "s.ini")), prices=prices)
    qtbot.addWidget(widget)
    yield widget, prices
    widget.shutdown()
    pool.close()


def laptop_sweep(folder: Path) -> Path:
    """A laptop CPU sweep at the H200 sweep's widths up to 1,024, slower than its GPU above about 45 units: 5x faster
    at 32 and 6x slower at 64 (lanes of two files are compared beyond the sessions' own offset)."""
    import json

    rows = ["lane,device,width,params,flops_per_batch,batch_size,median_ms,p10_ms,p90_ms,n_batches"]
    for w in (16, 32, 64, 128, 256, 512, 1024):
        rows.append(f"cpu,CPU (laptop),{w},0,{w * 1e6},128,{0.3 * (w / 32) ** 5},,,50")
    path = folder / "mine.csv"
    path.write_text("\n".join(rows) + "\n")
    (folder / "mine-batches.json").write_text(json.dumps({"host": {"machine": "laptop"}, "prices": {"cpu": 0.1}}))
    return path


def test_saved_sweeps_overlay_each_machine_and_go_with_a_click(tab, qtbot, tmp_path):
    tab, prices = tab
    assert tab.view.overlays.add_csv(str(H200)) and tab.view.overlays.add_csv(str(laptop_sweep(tmp_path)))
    legend = {item.text for _, item in tab.view.plot.legend.items}
    assert "laptop/cpu — CPU (laptop)" in legend and "sweep-b128/jax:gpu0 — GPU:0 (NVIDIA H200)" in legend
    crossings = {(c.faster_above, tuple(c.lanes)) for c in tab.view.plot.crossovers}
    assert ("sweep-b128/jax:gpu0", ("laptop/cpu", "sweep-b128/jax:gpu0")) in crossings  # across files
    assert ("sweep-b128/jax:cpu is faster up to 32 units and sweep-b128/jax:gpu0 from 512 units"
            in tab.view.verdict.text())  # the file's own pair, as `analyze` says it
    tab.view.overlays.add_csv(str(H200))
    assert [s.label for s in tab.view.overlays.sets] == ["sweep-b128", "laptop", "sweep-b128#2"]
    # Prices: the laptop's from its sidecar, the H200's as typed beside a lane.
    prices.set("jax:gpu0", 3.0)
    assert "sweep-b128/jax:gpu0 is faster than laptop/cpu above about" in tab.view.verdict.text()
    assert "and cheaper above about" in tab.view.verdict.text()
    for label in ("sweep-b128", "sweep-b128#2"):
        (remove,) = [b for b in tab.view.overlays.findChildren(type(tab.view.export_csv_button))
                     if b.isVisibleTo(tab) and b.toolTip() == f"Remove {label}'s sweep from the plot"]
        qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)
    assert [s.label for s in tab.view.overlays.sets] == ["laptop"]
    assert {p.lane for p in tab.view.plot.points} == {"laptop/cpu"}
    assert not tab.view.overlays.add_csv(str(tmp_path / "missing.csv")) and "Cannot add it" in tab.view.overlays.note.text()
    assert os.path.exists(H200)


def test_the_sweep_table_shows_dollars_per_million_samples_for_priced_lanes(tab):
    from crossover_lab.core.analysis.costs import dollars_per_million
    from crossover_lab.core.files.sweeps.files import read_sweep_rows
    from crossover_lab.core.words.numbers import fmt_dollars
    from crossover_lab.gui.sweep.table import COST_COLUMN

    from crossover_lab.gui.sweep.view import NO_SWEEP_YET

    tab, prices = tab
    assert tab.view.verdict.text() == NO_SWEEP_YET  # not "waiting" for a sweep nobody started
    rows, _ = read_sweep_rows(str(H200))
    tab.view.set_rows(rows)
    table = tab.view.table
    assert {table.item(r, COST_COLUMN).text() for r in range(table.rowCount())} == {"–"}  # no prices yet
    prices.set("jax:gpu0", 3.5)
    for r, row in enumerate(rows):
        text = table.item(r, COST_COLUMN).text()
        if row.lane == "jax:gpu0":
            assert text == fmt_dollars(dollars_per_million(row.median_ms, row.batch_size, 3.5))
            assert table.item(r, COST_COLUMN).toolTip() == "at $3.5 per hour for jax:gpu0"
        else:
            assert text == "–"


@pytest.mark.lanes
def test_a_window_run_on_a_remote_lane_beside_a_local_one_and_a_close_that_leaves_no_remote_worker(
        server, qtbot, make_window, monkeypatch):
    from crossover_lab.core.config import ModelSpec, TrainSpec

    monkeypatch.setenv("CROSSOVER_SSH_COMMAND", server.ssh_command())
    window = make_window()
    remote = f"ssh://{server.host()}/cpu1"
    assert window.side.lanes_panel.hosts.add_host(f"ssh://{server.host()}", sys.executable)
    qtbot.waitUntil(lambda: remote in window.side.lanes_panel.boxes, timeout=30_000)
    lanes = [LaneSpec.parse("cpu1"), LaneSpec.parse(remote)]
    tiny = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=1, data="synthetic", samples=2000))
    window.controller.start_run(tiny, lanes, Schedule.INTERLEAVED)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=180_000)
    run = window.controller.runs[-1]
    assert {name: lane.status for name, lane in run.lanes.items()} == {"cpu1": "completed", remote: "completed"}
    assert len(run.lanes[remote].records) == len(run.lanes["cpu1"].records) > 20
    assert run.lanes[remote].started.settings.extra["ssh_host"] == server.host()
    # A long run on both, closed mid-run: the remote worker leaves with the window.
    window.controller.start_run(dataclasses.replace(tiny, train=dataclasses.replace(tiny.train, epochs=200)),
                                lanes, Schedule.SIDE_BY_SIDE)
    qtbot.waitUntil(lambda: len(server.workers()) >= 1, timeout=60_000)
    window.close()
    qtbot.waitUntil(lambda: not server.workers(), timeout=5_000)


def test_a_ramp_shown_in_the_sweep_tab_is_what_it_exports_not_the_sweep_before_it(tab, tmp_path):
    import csv
    import dataclasses as dc

    from crossover_lab.core.study.sweep import SweepResult, SweepSpec
    from crossover_lab.core.files.sweeps.files import read_sweep_rows

    tab, _prices = tab
    earlier, _ = read_sweep_rows(str(H200))
    tab.results = [SweepResult(SweepSpec(widths=(16,)), rows=list(earlier))]  # a sweep that ran before the ramp
    ramp = [dc.replace(row, lane="cpu") for row in earlier if row.lane == "jax:cpu"]
    assert tab.show_rows(ramp)
    path = tmp_path / "ramp.csv"
    tab.export_csv(str(path))
    with open(path, newline="") as fh:
        assert {row["lane"] for row in csv.DictReader(fh)} == {"cpu"}
