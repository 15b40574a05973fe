"""The rule's measured error rate, as benchmarks/rule_calibration.py last wrote it (resources/rule-calibration.json,
shipped with Crossover): the share of simulated sweeps of two equal lanes in which any view named a lead. Every
answer's words cite it beside the rule's design rate; where the file is missing or damaged, they say it is not
measured rather than quote a figure, and a damaged one is named with what is wrong with it (calibration_problem)."""
from __future__ import annotations

import errno
import functools
import math
from pathlib import Path

from ..json_data import JsonError, parse_json
from ..paths import resource_dir
from .inputs import InputError, read_text_bounded

FORMAT = "crossover-rule-calibration/1"
FILE = "rule-calibration.json"
MAX_BYTES = 1 << 20


def calibration_path() -> Path:
    return resource_dir() / FILE


@functools.lru_cache(maxsize=4)
def _read(path: str) -> tuple[tuple[float, str] | None, str]:
    """The measured rate and where it comes from (None where not measured), and why the file at `path` could not
    give it, as a sentence naming the file ("" when it was read, or is simply not there).

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
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, f"{path} is not a rule calibration (its format is not {FORMAT}): it is damaged"
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
