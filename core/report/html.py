"""The report rendered: one self-contained HTML file (inline SVG and style, no script, font, image or URL from
outside; light and dark by the reader's browser; printable), or Markdown with the pictures as SVG files
beside it. Rendered by Jinja2 templates (core/report/templates/) with autoescaping on, so a lane name or a
host read from a file is text, never markup. Written atomically, all files or none."""
from __future__ import annotations

import dataclasses
import os
import re
from urllib.parse import quote
from pathlib import Path
from typing import Sequence

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from ..config import ConfigError
from ..files.atomic import atomic_write_files
from ..files.predicted import AskedPrediction
from ..files.device_profile import DeviceProfile
from .document import Report, build_report
from .inputs import read_inputs
from .predictions import asked_of_files
from .svg import STYLE as SVG_STYLE

TEMPLATES = Path(__file__).resolve().parent / "templates"
FORMATS = ("html", "md")


_MD_SPECIAL = re.compile(r"([\\`\[\]|])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _md_cell(value: str | int | float) -> str:
    """Text in Markdown (a table cell, a line, a title) that stays text in any viewer: pipes and line breaks would
    end a cell, `<` and `&` start markup, brackets a link or (after `!`) a remote image, backticks code; each is
    escaped, and control characters (a terminal's escapes among them) are dropped."""
    text = _CONTROL.sub(" ", str(value))
    return _MD_SPECIAL.sub(r"\\\1", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_code(command: str) -> str:
    """A command as a fenced code block that no text inside it can close: the fence is longer than any run of
    backticks in it, and a line break or another control character is written as its escape (a command is one line)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], command)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined,
                      autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["md"] = _md_cell
    env.filters["md_code"] = _md_code
    env.filters["href"] = lambda path: quote(str(path), safe="/:")  # a file's name as a link: no space, no markup
    # A picture beside a Markdown report, named after it: a space, a bracket or a newline in the report's name ends
    # a link's destination, so every character but a plain one is escaped (":" too, or "a:b-figure-1.svg" is a scheme).
    env.filters["file_link"] = lambda name: quote(str(name), safe="")
    return env


def render_html(report: Report) -> str:
    return _environment().get_template("report.html.j2").render(report=report, svg_style=SVG_STYLE)


def render_markdown(report: Report) -> str:
    env = _environment()
    env.autoescape = False  # Markdown, not HTML: cells go through the `md` filter instead
    return env.get_template("report.md.j2").render(report=report)


def write_report(paths: Sequence[str | os.PathLike], out: str | os.PathLike, fmt: str = "html",
                 labels: dict[str, str] | None = None, predictions: Sequence[AskedPrediction] = (),
                 profiles: Sequence[DeviceProfile] = ()) -> Path:
    """The report of `paths` (sweep CSVs, run CSVs, anatomy JSONs) at `out`, as HTML or Markdown (its pictures
    as SVG files beside it); every file written atomically, together. ConfigError for files that cannot be read.
    `predictions` and every lane of `profiles` on the files' models make its Predictions section."""
    if fmt not in FORMATS:
        raise ConfigError(f"report format {fmt!r}: choose {' or '.join(FORMATS)}")
    target = Path(out)
    inputs = read_inputs([str(p) for p in paths], labels)
    asked = list(predictions) + asked_of_files(inputs, profiles)
    report = _with_sidecar_links(build_report(inputs, asked), target)
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


def _relative(path: str, folder: Path) -> str:
    """`path` as a link from a page in `folder`: relative where the report is written beside its files or one folder
    from them (they move together), else the file's absolute address."""
    target = Path(path).resolve()
    try:
        relative = Path(os.path.relpath(target, folder.resolve()))
    except ValueError:  # another drive
        return target.as_uri()
    return relative.as_posix() if relative.parts[:2].count("..") < 2 else target.as_uri()


def _with_sidecar_links(report: Report, target: Path) -> Report:
    """The report whose settings link each file's sidecar (every key as recorded) from where it is written."""
    settings = tuple(dataclasses.replace(s, sidecar=_relative(s.sidecar, target.parent)) if s.sidecar else s
                     for s in report.settings)
    return dataclasses.replace(report, settings=settings)
