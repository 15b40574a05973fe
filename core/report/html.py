"""The report rendered: one self-contained HTML file (inline SVG and style, no script, font, image or URL from
outside; light and dark by the reader's browser; printable), or Markdown with the pictures as SVG files
beside it. Rendered by Jinja2 templates (core/report/templates/) with autoescaping on, so a lane name or a
host read from a file is text, never markup. Written atomically, all files or none."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Sequence

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from ..config import ConfigError
from ..files.atomic import atomic_write_files
from .document import Report, build_report
from .inputs import read_inputs
from .svg import STYLE as SVG_STYLE

TEMPLATES = Path(__file__).resolve().parent / "templates"
FORMATS = ("html", "md")


def _md_cell(value: str | int | float) -> str:
    """A Markdown table cell: pipes and line breaks would end it, and `<` would start markup."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined,
                      autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["md"] = _md_cell
    return env


def render_html(report: Report) -> str:
    return _environment().get_template("report.html.j2").render(report=report, svg_style=SVG_STYLE)


def render_markdown(report: Report) -> str:
    env = _environment()
    env.autoescape = False  # Markdown, not HTML: cells go through the `md` filter instead
    return env.get_template("report.md.j2").render(report=report)


def write_report(paths: Sequence[str | os.PathLike], out: str | os.PathLike, fmt: str = "html",
                 labels: dict[str, str] | None = None) -> Path:
    """The report of `paths` (sweep CSVs, run CSVs, anatomy JSONs) at `out`, as HTML or Markdown (its pictures
    as SVG files beside it); every file written atomically, together. ConfigError for files that cannot be read."""
    if fmt not in FORMATS:
        raise ConfigError(f"report format {fmt!r}: choose {' or '.join(FORMATS)}")
    report = build_report(read_inputs([str(p) for p in paths], labels))
    target = Path(out)
    if fmt == "html":
        atomic_write_files([(target, render_html(report))])
        return target
    figures = [(target.with_name(f"{target.stem}-{f.file_name}"), str(f.standalone))
               for s in report.sections for f in s.figures]
    atomic_write_files([(target, render_markdown(_with_names(report, target)))] + figures)
    return target


def _with_names(report: Report, target: Path) -> Report:
    """The report whose figures name the files they are written to beside `target`."""

    sections = tuple(dataclasses.replace(s, figures=tuple(dataclasses.replace(f, file_name=f"{target.stem}-{f.file_name}")
                                                          for f in s.figures)) for s in report.sections)
    return dataclasses.replace(report, sections=sections)
