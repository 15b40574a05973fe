"""The rule's measured error rate, as benchmarks/rule_calibration.py last wrote it (resources/rule-calibration.json,
shipped with Crossover): the share of simulated sweeps of two equal lanes in which any view named a lead. Every
answer's words cite it beside the rule's design rate; where the file is missing or damaged, they say it is not
measured rather than quote a figure, and a damaged one is named with what is wrong with it (calibration_problem)."""
from __future__ import annotations

import errno
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..analysis.significance import PASSES_FOR_SWEEP
from ..json_data import JsonError, parse_json
from ..paths import resource_dir
from .inputs import InputError, read_text_bounded

FORMAT = "crossover-rule-calibration/2"  # one row per design (widths, passes, files); /1 had one worst rate
FORMATS = ("crossover-rule-calibration/1", FORMAT)
FILE = "rule-calibration.json"
MAX_BYTES = 1 << 20


def calibration_path() -> Path:
    return resource_dir() / FILE


@functools.lru_cache(maxsize=4)
def _load(path: str) -> tuple[dict | None, str]:
    """The calibration file at `path` as read (None where it cannot be one), and why not, as a sentence naming the
    file ("" when it was read, or is simply not there). Read once, for the rate and the designs alike.

    Read like any file from outside: a regular file only (a fifo in its place would hang every answer), a MB at
    most, JSON no deeper than parse_json's bound (a deep one raised RecursionError, which `analyze` then blamed
    on the user's CSV)."""
    try:
        data = parse_json(read_text_bounded(path, MAX_BYTES), path)
    except InputError as exc:
        return None, "" if exc.errno == errno.ENOENT else str(exc)  # never measured here: no damage
    except UnicodeDecodeError:
        return None, f"{path} is not UTF-8 text: it is damaged"
    except (JsonError, OSError) as exc:  # JsonError's sentence names the file; OSError: a read that failed midway
        return None, str(exc) if isinstance(exc, JsonError) else f"cannot read {path}: {exc.strerror or exc}"
    if not isinstance(data, dict) or data.get("format") not in FORMATS:
        return None, f"{path} is not a rule calibration (its format is not {FORMAT}): it is damaged"
    return data, ""


def _read(path: str) -> tuple[tuple[float, str] | None, str]:
    """The measured worst rate and where it comes from (None where not measured), and why not."""
    data, problem = _load(path)
    if data is None:
        return None, problem
    rate, date = data.get("worst_false_lead"), data.get("date")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (0 <= rate <= 1 and math.isfinite(rate)):
        return None, f"{path} gives no false-lead rate between 0 and 1: it is damaged"
    return (float(rate), f"rule calibration, {str(date)[:10]}" if isinstance(date, str) else "rule calibration"), ""


def calibrated_false_leads(path: Path | None = None) -> tuple[float, str] | None:
    """The worst share of equal-lane sweeps in which a lead was named, over every view and machine state the
    calibration simulated, and where it comes from; None where not measured."""
    return _read(str(path or calibration_path()))[0]


def calibration_problem(path: Path | None = None) -> str:
    """Why the calibration file cannot give the measured rate, as a sentence naming it; "" when it did, or when
    there is no such file (an answer then says "not yet measured")."""
    return _read(str(path or calibration_path()))[1]


_PASSES = re.compile(r"[3-9] passes")  # a design of passes, as design_of names it


@dataclass(frozen=True)
class DesignRate:
    """The false-lead rate measured for one design of sweep (its widths, passes and files), the worst over every
    noise model the calibration simulated, with its 95% interval and how many sweeps it rests on."""

    widths: int
    design: str  # "one pass", "rechecks", "3 passes", "5 passes"
    files: int
    false_lead: float
    lo: float
    hi: float
    sweeps: int
    worst_noise: str
    source: str  # "rule calibration, 2026-12-07"


def design_of(passes: int, rechecked: bool) -> str:
    """The calibration's name for a sweep's design: "N passes" from PASSES_FOR_SWEEP up (the calibration simulates 3 and
    the default 5: another count is a design it did not simulate)."""
    return f"{passes} passes" if passes >= PASSES_FOR_SWEEP else "rechecks" if rechecked else "one pass"


@functools.lru_cache(maxsize=4)
def _designs(path: str) -> tuple[DesignRate, ...]:
    data, _ = _load(path)
    designs = data.get("designs") if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(data, dict) or not isinstance(designs, list):
        return ()
    date = data.get("date")
    source = f"rule calibration, {str(date)[:10]}" if isinstance(date, str) else "rule calibration"
    out = []
    for row in designs:
        if not isinstance(row, dict):
            continue
        numbers = [row.get(k) for k in ("false_lead", "false_lead_lo", "false_lead_hi")]
        counts = [row.get(k) for k in ("widths", "files", "sweeps")]
        shares = [float(x) for x in numbers if isinstance(x, (int, float)) and not isinstance(x, bool)]
        whole = [x for x in counts if isinstance(x, int) and not isinstance(x, bool) and 0 < x < 10 ** 7]
        if len(shares) != 3 or not all(math.isfinite(x) and 0 <= x <= 1 for x in shares) or len(whole) != 3:
            continue
        design, noise = row.get("design"), row.get("worst_noise")
        if not isinstance(design, str) or not (design in ("one pass", "rechecks") or _PASSES.fullmatch(design)):
            continue
        out.append(DesignRate(whole[0], str(design), whole[1], shares[0], shares[1], shares[2], whole[2],
                              noise[:60] if isinstance(noise, str) else "", source))
    return tuple(out)


def design_rate(widths: int, passes: int, rechecked: bool, files: int, path: Path | None = None) -> DesignRate | None:
    """The rate measured for this design: the row of its passes and files whose width count is nearest (within a
    factor of 1.5, else the design is not calibrated: None)."""
    rows = [r for r in _designs(str(path or calibration_path()))
            if r.design == design_of(passes, rechecked) and r.files == min(files, 2)]
    if not rows or widths < 1:
        return None
    best = min(rows, key=lambda r: abs(math.log(r.widths / widths)))
    return best if max(best.widths, widths) / min(best.widths, widths) <= 1.5 else None
