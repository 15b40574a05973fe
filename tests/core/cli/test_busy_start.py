"""`sweep` on a busy machine says so once, before its first point (issue 36), on scripted lanes; quiet, it says
nothing. The share of the cores other work used is faked: what /proc gives is core/engine/machine_load.py's."""
from __future__ import annotations

import pytest
from helpers import cli_in_process


@pytest.mark.parametrize("share", [0.5, 0.02])
def test_a_sweep_says_a_busy_machine_before_its_first_point(capsys, scripted, monkeypatch, share):
    from crossover_lab.core.cli import common

    class Watch:  # LoadWatch, as a machine whose other work keeps `share` of the cores
        def share(self) -> float:
            return share

    monkeypatch.setattr(common, "LoadWatch", Watch)
    out = cli_in_process(capsys, "sweep", "--widths", "16,64", "--layers", "1", "--seconds-per-point", "0.3",
                         "--lanes", "cpu,cpu1", "--data", "synthetic")
    assert out.returncode == 0, out.stderr[-2000:]
    said = [line for line in out.stderr.splitlines() if "of this machine's CPU now" in line]
    if share > 0.1:
        assert len(said) == 1 and said[0].startswith("note: other work uses 50% of this machine's CPU now"), said
        assert out.stderr.index(said[0]) < out.stderr.index("sweep: 2 points")  # before the study's first line
    else:
        assert not said
