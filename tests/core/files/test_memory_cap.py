"""Memory bombs under a memory cap the test sets (issue 20): the input and model-size checks run in a process whose
address space is limited (RLIMIT_AS), so a regression that loads a declared 300 GB array, reads /dev/zero or
builds a 30 GB model fails this test with a MemoryError instead of setting off the machine's OOM killer.

One process runs every command through the CLI's main(), capped; a lane it started would inherit the cap and
could not import its framework, so "refused before any lane" is checked as well (exit 2, the sentence).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

CAP_BYTES = 3 << 30  # address space: the CLI's imports (numpy, its BLAS threads' stacks) fit; none of the bombs does

SCRIPT = textwrap.dedent("""
    import contextlib, io, json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    from crossover_lab.core.cli.main import main
    from crossover_lab.core.lane.data import _load_npz
    out = {{}}
    for name, args in json.loads(sys.argv[1]).items():
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(args)
            except SystemExit as exc:
                code = exc.code
            except MemoryError:
                code = "MemoryError"
        out[name] = [code, err.getvalue()]
    x, y, _ = _load_npz(sys.argv[2], samples=20)  # a lane's loader, capped: the rows a run uses, not the declared
    out["rows read"] = [list(x.shape), ""]
    print(json.dumps(out))
""")


def _declared(shape: tuple[int, ...], body: bytes) -> bytes:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": shape})
    return header.getvalue() + body


def bomb(path: Path, rows: int, stored_rows: int) -> Path:
    """An .npz whose x_train and y_train declare `rows` samples (784 bytes, and a label, each) and hold
    `stored_rows` of them: a zip bomb's declared size without its bytes."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x_train.npy", _declared((rows, 784), bytes(stored_rows * 784)))
        archive.writestr("y_train.npy", _declared((rows,), bytes(np.arange(stored_rows) % 10)))
    return path


@pytest.mark.lanes  # a Python process of its own: a test of realness
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")
def test_bombs_are_refused_before_any_lane_under_a_memory_cap(tmp_path):
    big = bomb(tmp_path / "big.npz", 400_000_000, 20)  # declares 314 GB, holds 16 kB
    small = bomb(tmp_path / "small.npz", 1_000_000, 20)  # declares 784 MB: a lane reads only 20 rows
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    (tmp_path / "zero.npz").symlink_to("/dev/zero")
    run = ["run", "--preset", "tiny", "--lanes", "cpu1", "--samples", "256"]
    commands = {
        "declared 314 GB": [*run, "--data", str(big)],
        "npz of /dev/zero": [*run, "--data", str(tmp_path / "zero.npz")],
        "analyze /dev/zero": ["analyze", str(tmp_path / "zero.csv")],
        "a 30 GB model": ["run", "--widths", ",".join(["16384"] * 8), "--lanes", "cpu1", "--data", "synthetic",
                          "--samples", "256"],
        "a billion points": ["sweep", "--points", "1000000000", "--lanes", "cpu1", "--data", "synthetic"],
    }
    home = tmp_path / "home"
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(cap=CAP_BYTES), json.dumps(commands), str(small)],
                       capture_output=True, text=True, timeout=240,
                       env={**os.environ, "CROSSOVER_HOME": str(home), "OPENBLAS_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for name in commands:
        code, err = out[name]
        assert code == 2, f"{name}: exit {code}\n{err}"
        assert "error:" in err and "Traceback" not in err, f"{name}: {err}"
    assert "free" in out["declared 314 GB"][1] and "free" in out["a 30 GB model"][1]
    assert "/dev/zero" in out["analyze /dev/zero"][1] or "not a regular file" in out["analyze /dev/zero"][1]
    assert out["rows read"][0] == [20, 784]
