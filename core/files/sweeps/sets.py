"""Sweeps from several files side by side: each file's lanes named `LABEL/LANE`, the label naming its machine.

The label is the one the user gives (`--label a.csv=laptop`), else the machine name in the
file's sidecar (`<stem>-batches.json`), else the file's stem; two files that both have a `cpu`
lane stay apart, and crossovers are found across files as within one.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence, cast

from ...machine import HostInfo
from ...config import ConfigError
from ...json_data import JsonValue, parse_json
from ..inputs import InputError, check_input_file, open_regular, read_text_bounded
from ..run_files import sidecar_path
from .files import SweepReading, batches_path, iter_sweep_rows
from .rows import SweepRow, latest_rows


def sidecar_of(csv_path: str | os.PathLike) -> dict[str, JsonValue]:
    """The JSON sidecar written beside a sweep CSV, or {} when there is none that reads. A run's per-batch CSV
    (a ramp) has a sidecar of its own (`<stem>.json`, read with its records; its host names the machine, as a
    sweep's does): a sweep's `<stem>-batches.json` left beside it by an earlier sweep of that name is not its
    sidecar, and its refinement is not the run's."""
    side = sidecar_path(csv_path) if is_run_csv(csv_path) else batches_path(csv_path).with_suffix(".json")
    try:
        meta = parse_json(read_text_bounded(side), "a sidecar")  # a regular file, bounded
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def is_run_csv(csv_path: str | os.PathLike) -> bool:
    """Whether the CSV's header is a run's per-batch one (run_id, step, ms, no median_ms), as iter_sweep_rows reads it."""
    try:
        with open_regular(str(csv_path)) as fh:
            header = fh.readline(64 << 10).decode("utf-8-sig", errors="replace").strip().split(",")
    except (OSError, InputError):
        return False
    return {"run_id", "step", "ms"} <= set(header) and "median_ms" not in header


def file_prices(meta: Mapping[str, JsonValue]) -> dict[str, float]:
    """Prices recorded with a sweep (lane → dollars per hour); any that are not numbers are left out."""
    prices = meta.get("prices")
    if not isinstance(prices, dict):
        return {}
    return {str(k): float(v) for k, v in prices.items() if isinstance(v, (int, float)) and v > 0}


def parse_labels(items: Iterable[str]) -> dict[str, str]:
    """`a.csv=laptop` items (from repeated --label) → {"a.csv": "laptop"}."""
    labels = {}
    for item in items:
        path, eq, label = item.rpartition("=")
        label = label.strip()
        if not (eq and path.strip() and label) or "/" in label:
            raise ConfigError(f"label {item!r}: use FILE=NAME, e.g. --label a.csv=laptop (a name without '/')")
        labels[path.strip()] = label
    return labels


def _given_label(path: str, labels: Mapping[str, str]) -> str:
    for key, label in labels.items():
        if key in (path, os.path.basename(path)) or Path(key).resolve() == Path(path).resolve():
            return label
    return ""


@dataclass(frozen=True)
class SweepSet:
    """One sweep file's usable rows, its lanes renamed `label/lane`, and what its sidecar says."""

    path: str
    label: str
    rows: tuple[SweepRow, ...]
    reading: SweepReading
    machine: str = ""  # the machine name in the sidecar; "" when it has none
    prices: Mapping[str, float] = dataclasses.field(default_factory=dict)  # keyed by the renamed lanes

    @property
    def devices(self) -> list[str]:
        return sorted({r.device for r in self.rows if r.device})


def load_sets(paths: Sequence[str], labels: Mapping[str, str] | None = None,
              taken: Iterable[str] = ()) -> list[SweepSet]:
    """Read each sweep file and name its lanes; labels that would repeat (or are in `taken`) get #2, #3…

    Raises ConfigError with a sentence for a file that is not a sweep CSV; a label naming no file is one too.
    """
    labels = dict(labels or {})
    for key in labels:
        if not any(_given_label(p, {key: "x"}) for p in paths):
            raise ConfigError(f"--label {key}=…: {key} is not one of the files given")
    used = set(taken)
    for path in paths:  # a fifo would hang the reader, /dev/zero fill the memory: refused before any is read
        check_input_file(path)
    out = []
    for path in paths:
        reading = SweepReading(path)
        rows = latest_rows(iter_sweep_rows(path, reading))  # streamed: a file of any size, kept as its points
        meta = sidecar_of(path)
        machine = HostInfo.of_sidecar(meta).machine  # as the sidecar was written
        base = _given_label(path, labels) or machine or Path(path).stem
        label, n = base, 1
        while label in used:
            n += 1
            label = f"{base}#{n}"
        used.add(label)
        renamed = tuple(dataclasses.replace(r, lane=f"{label}/{r.lane}") for r in rows)
        prices = {f"{label}/{lane}": price for lane, price in file_prices(meta).items()}
        out.append(SweepSet(path, label, renamed, reading, machine, prices))
    return out
