"""The rule's measured error rate, as benchmarks/rule_calibration.py last wrote it (resources/rule-calibration.json,
shipped with Crossover): the share of simulated sweeps of two equal lanes in which any view named a lead. Every
answer's words cite it beside the rule's design rate; where the file is missing or damaged, they say it is not
measured rather than quote a figure."""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from ..paths import resource_dir

FORMAT = "crossover-rule-calibration/1"
FILE = "rule-calibration.json"
MAX_BYTES = 1 << 20


def calibration_path() -> Path:
    return resource_dir() / FILE


@functools.lru_cache(maxsize=4)
def _read(path: str) -> tuple[float, str] | None:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(MAX_BYTES + 1)[:MAX_BYTES])
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    rate, date = data.get("worst_false_lead"), data.get("date")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (0 <= rate <= 1 and math.isfinite(rate)):
        return None
    return float(rate), f"rule calibration, {str(date)[:10]}" if isinstance(date, str) else "rule calibration"


def calibrated_false_leads(path: Path | None = None) -> tuple[float, str] | None:
    """The worst share of equal-lane sweeps in which a lead was named, over every view and machine state the
    calibration simulated, and where it comes from; None where not measured."""
    return _read(str(path or calibration_path()))
