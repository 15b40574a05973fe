"""What the command line refuses before any lane starts (exit 2 and a sentence), where it used to be found by a
lane or accepted silently: seeds out of range, a batch larger than the data, more steps per execution than an
epoch, a ramp of no layers, a rung of forever, a price for no lane, a watchdog that never fires."""
from __future__ import annotations

import pytest
from helpers import cli_in_process


@pytest.mark.parametrize("args, words", [
    (["run", "--seed", "-1"], "seed -1: choose a whole number from 0 to 4,294,967,295"),
    (["run", "--seed", str(2**64)], "choose a whole number from 0 to 4,294,967,295"),
    (["run", "--batch-size", "65536", "--data", "synthetic"], "batch size 65,536 is more than the 60,000 samples"),
    (["run", "--steps-per-execution", "10000", "--samples", "256", "--batch-size", "128"],
     "steps per execution 10,000: an epoch of 256 samples in batches of 128 has 2 steps; choose at most 2"),
    (["run", "--ramp", "16,64", "--layers", "0"], "--layers 0: a ramp's model has 1-8 hidden layers"),
    (["anatomy", "--seconds-per-rung", "inf"], "--seconds-per-rung inf: choose more than 0 and at most 600"),
    (["run", "--lanes", "cpu,cpu1", "--price", "gpu9=1"], "--price gpu9=…: no lane of this command is gpu9"),
    (["run", "--watchdog-s", "1e308"], "longer than the 6 hours a silent lane is ever waited for"),
], ids=["seed -1", "seed 2^64", "batch 65536", "steps per execution", "ramp of 0 layers", "rung inf",
        "price for no lane", "watchdog 1e308"])
def test_the_cli_refuses_before_any_lane_starts(capsys, args, words):
    out = cli_in_process(capsys, *args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert words in out.stderr, out.stderr
