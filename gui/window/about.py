"""Help > About: versions, this machine's devices and lanes, and where the app keeps its files."""
from __future__ import annotations

import html
from typing import Mapping

import PySide6
import pyqtgraph
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QMessageBox, QWidget

from ...core.engine.devices import LaneOption
from ...core.json_data import JsonValue
from ...core.machine import HostInfo
from ...core.paths import autosave_dir, log_dir, settings_path


# The guide's pages ship with the source (docs/guide/), not the wheel: named where a reader finds them.
GUIDE_URL = "docs/guide/ in Crossover's source (README.md, then \"Where to go next\")"


def about_text(sidecar_host: Mapping[str, JsonValue], options: list[LaneOption]) -> str:
    """The About box's text (HTML): what a bug report needs."""
    host = HostInfo.from_json(dict(sidecar_host))
    backends = ", ".join(f"{name} {version}" if version else f"{name} (not installed)" for name, version in host.backends)
    gpus = "; ".join(f"{g.name} (driver {g.driver}, {g.memory})" for g in host.gpus) \
        or "none reported by an NVIDIA driver"
    lanes = "".join(f"<li><b>{html.escape(o.name)}</b>: {html.escape(o.device)}"
                    + ("" if o.available else f" — <i>{html.escape(o.reason)}</i>") + "</li>" for o in options)
    rows = [
        ("Crossover", host.app_version),
        ("Python", host.python),
        ("Qt / PySide6", f"{qVersion()} / {PySide6.__version__}"),
        ("pyqtgraph", pyqtgraph.__version__),
        ("NumPy", host.numpy),
        ("Keras", host.keras or "not installed"),
        ("Backends", backends),
        ("Platform", host.platform),
        ("CPU", f"{host.cpu} ({host.cpu_cores or '?'} usable cores)"),
        ("GPUs", gpus),
        ("Autosaved runs", autosave_dir()),
        ("Settings", settings_path()),
        ("Lane logs", log_dir()),
    ]
    table = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(str(v))}</td></tr>"
                    for k, v in rows)
    return (f"<h3>Crossover {html.escape(host.app_version)}</h3>"
            "<p>Shows, with honest numbers, where a GPU starts to beat a CPU, and why: training or serving (one "
            "call at a time, or under requests arriving on their own schedule) an MLP, a CNN, an RNN, a "
            "transformer or your own Keras model, on lanes of this machine or others over SSH. "
            "A sweep finds the size where the faster lane changes, the Why tab splits a step into its parts, "
            "and a report and a rule carry the answer away.</p>"
            f"<p>The guide (Help &gt; Guide): {GUIDE_URL}</p>"
            f"<table>{table}</table><p><b>Lanes</b></p><ul>{lanes}</ul>")


def show_about(parent: QWidget, host: Mapping[str, JsonValue], options: list[LaneOption]) -> QMessageBox:
    """A non-modal About box (returned, so a caller or a test can close it)."""
    box = QMessageBox(QMessageBox.Icon.Information, "About Crossover", "", QMessageBox.StandardButton.Close, parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_text(host, options))
    box.setModal(False)
    box.show()
    return box
