"""What a report says, before it is rendered: the question and the answer first (with what the answer rests on, as
the CLI says it), then each file's section (core/report/sections.py), the settings that apply to each file, said once
and in words (core/words/settings.py), the machines, the command that reproduces each file, and the source files'
names, sizes and SHA-256. Every verdict sentence comes from core/words/, as the CLI and the window say it; nothing
here words a verdict of its own."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..analysis.contention import common_stretch
from ..analysis.refinement import refinement_of_sidecar
from ..analysis.serving_rates import rates_of, run_points
from ..config import Task, is_saved_kind
from ..files.findings import Findings
from ..files.predicted import AskedPrediction
from ..files.run_files import sidecar_path, sidecar_runs
from ..files.sweeps.rows import SweepRow
from ..files.sweeps.files import SweepAskedFor, run_rows
from ..machine import HostInfo
from ..results import RunResult
from .. import APP_VERSION
from ..words.anatomy import CALL_CLOCKS, CLOCKS, PER_CALL_CLOCK, SYNCED_CLOCK
from ..words.rates import compare_words
from ..words.rates import sweep_lines as sweep_lines_rates
from ..words.numbers import fmt_count
from ..words.run import (busy_lines, compared_lines, compared_summaries, latency_lines, one_run_line,
                         run_headline)
from ..words.settings import backend_name, lane_groups, settings_groups, task_words
from ..words.sweep import busy_lines as sweep_busy_lines
from ..words.sweep import answer_words, picture_title, refine_lines, run_crossing_lines
from ..words.verdict import pair_words, unit_of
from .inputs import AnatomyInput, Inputs, RunInput, SweepInput, sweep_sidecar
from .kinds import saved_model_words, worded_points
from .parts import FileSettings, Section, Table, sentence, table
from .predictions import predictions_section
from .reproduce import anatomy_command, reproduce_command
from .rule import Rule, rule_of
from .sections import anatomy_answer, anatomy_section, is_rate_run, run_section, segment_widths, sweep_section


@dataclass(frozen=True)
class Report:
    title: str
    question: str
    answer: tuple[str, ...]  # the verdict and what it rests on, in the app's words
    facts: tuple[tuple[str, str], ...]  # model, task, lanes, machines, clock
    rule_lines: tuple[str, ...]
    sections: tuple[Section, ...]
    machines: tuple[tuple[str, Table], ...]
    settings: tuple[FileSettings, ...]
    reproduce: tuple[tuple[str, str], ...]  # (file, command)
    files: Table
    app_version: str = APP_VERSION
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def made_from(self) -> str:
        """"1 file", "3 files": what the report was made from."""
        return fmt_count(len(self.files.rows), "file")


def _host_table(host: HostInfo) -> Table:
    rows = [("machine", host.machine or "–"), ("CPU", f"{host.cpu or '–'} ({host.cpu_cores or '?'} cores usable)")]
    rows += [("GPU", f"{g.name} (driver {g.driver}, {g.memory})") for g in host.gpus]
    rows += [(key, value) for key, value in (("platform", host.platform), ("Python", host.python),
                                             ("NumPy", host.numpy), ("Keras", host.keras),
                                             ("Crossover", host.app_version)) if value]
    rows += [(backend_name(k), v if v is not None else "not installed") for k, v in host.backends]
    return table(["", "value"], rows)


# ---------------------------------------------------------------- the answer


def run_model_words(run: RunResult) -> str:
    """What a run trained: its model, or for a ramp (or a width dragged while it ran) the widths it went through."""
    widths = segment_widths(run)
    batch = f"batch {run.config.train.batch_size}"
    if len(widths) > 1:
        layers = len(run.config.model.widths)
        return f"hidden width {' → '.join(f'{w:,}' for w in widths)} ({fmt_count(layers, 'layer')}) · {batch}"
    return f"{run.config.model.label()} · {batch}"


def run_answer(run: RunResult) -> list[str]:
    """The run's answer in the app's words: where the lanes cross for a run whose model changed (the window's
    summary says the same), else the verdict on its model and what it rests on, as the CLI prints them after the
    run (over what time side-by-side lanes were compared, one run of each lane and the noise that bounds it); the
    busy note either way."""
    summaries = [lane.summary for lane in run.lanes.values() if lane.summary is not None]
    if len(segment_widths(run)) > 1:
        return [sentence(x) for x in run_crossing_lines(run) + busy_lines(summaries)] or \
            [sentence("the lanes have not both completed two of the run's widths: no crossing can be stated")]
    stretch = common_stretch(run)  # lanes side by side: compared on the time all of them trained
    compared = compared_summaries(run, stretch)
    lines = run_headline(run, compared)  # the CLI's and the window's words for this run
    if run.config.train.task == Task.PREDICT:
        lines += latency_lines(compared, run.config.train.batch_size)
    lines += compared_lines(stretch)
    if len(compared) >= 2:  # as the CLI says it after a run of two lanes or more
        lines.append(one_run_line(run))
    return [sentence(x) for x in lines]


def _changed_model_answer(inputs: Inputs) -> list[str]:
    """Where the lanes cross over every run whose model changed (a ramp, a drag), their points pooled and judged
    once as the window's findings judge them: the window's headline over the same widths, whichever runs it rests
    on (File > Export report writes them all). Nothing where no run changed its model."""
    runs = [run for item in inputs.runs if not is_rate_run(item) for run in item.runs]
    if not any(len(segment_widths(run)) > 1 for run in runs):
        return []
    pooled = Findings(row for run in runs for row in run_rows(run))
    said = [sentence(answer_words(a)) for a in pooled.answers() if len(a.verdict.widths) >= 2]
    summaries = [lane.summary for run in runs for lane in run.lanes.values() if lane.summary is not None]
    return (said + [sentence(x) for x in busy_lines(summaries)]) if said else \
        [sentence("the lanes have not both completed two widths of one kind of model: no crossing can be stated")]


def sweep_model_words(rows: Sequence[SweepRow]) -> str:
    """What the sweeps measured, per kind of model: picture_title's words ("MLP, 2 hidden layers of 16–4,096 units ·
    batch 128"), and a saved model by its name, along batch size ("your saved model mine.keras (6 layers), along
    batch size 1–1,024"): it has no width (its sweep writes 0) and no hidden layers of one."""
    kinds = list(dict.fromkeys(r.family for r in rows))
    words = []
    for kind in kinds:
        mine = [r for r in rows if r.family == kind]
        words.append(saved_model_words(mine) if is_saved_kind(kind) else picture_title(mine, {}).partition("\n")[0])
    return "; ".join(words)


def machines_words(sweeps: Sequence[SweepInput]) -> str:
    """Each machine once, with the devices of all its files: "vm: vm (CPU)"; "lab: lab (GPU0 of lab; …)"."""
    said = []
    for label in dict.fromkeys(s.label for s in sweeps):
        mine = [s for s in sweeps if s.label == label]
        machine = next((s.machine for s in mine if s.machine), "") or "machine not named"
        devices = sorted({d for s in mine for d in s.devices})
        said.append(f"{label}: {machine} ({'; '.join(devices) or 'no device named'})")
    return "; ".join(said)


def run_lane_prefix(item: RunInput, sweeps: Sequence[SweepInput]) -> str:
    """How the lanes list names a run's lanes beside the sweeps': as they are where the sweeps' lanes keep their
    names (one machine); where the sweeps name theirs MACHINE/LANE, by the run's machine (the sweeps' label for
    it when one of them ran there, so its "cpu" is theirs), and as they are when its sidecar names no machine."""
    if not any(s.lane_prefix for s in sweeps):
        return ""
    machine = HostInfo.of_sidecar(item.meta).machine
    if not machine:
        return ""
    return next((s.lane_prefix for s in sweeps if s.machine == machine and s.lane_prefix), f"{machine}/")


def _question(inputs: Inputs, findings: Findings) -> tuple[str, tuple[str, ...], list[tuple[str, str]]]:
    """The question, the answer in the app's words, and the facts the answer rests on."""
    facts: list[tuple[str, str]] = []
    answer: list[str] = []
    lanes: list[str] = []
    if inputs.sweeps:
        rows = [r for s in inputs.sweeps for r in s.rows]
        _, _, devices = picture_title(rows, {}).partition("\n")
        facts += [("model", sweep_model_words(rows)), ("devices", devices)]
        groups = worded_points(rows)
        for label, points in groups.items():
            names = sorted({p.lane for p in points})
            lanes += names
            prefix = f"{label}: " if len(groups) > 1 else ""
            answer += [sentence(prefix + pair_words(findings.verdict_of(points, a, b), unit_of(points)))
                       for i, a in enumerate(names) for b in names[i + 1:]]
        answer += [sentence(x) for x in sweep_busy_lines(groups)]  # as `analyze` says it after the crossings
        labels = [s.label for s in inputs.sweeps]
        for s in inputs.sweeps:  # a refined sweep's open crossings and why it stopped, as `analyze` says them
            refined = refinement_of_sidecar(s.meta)
            name = s.label if labels.count(s.label) == 1 else f"{s.label} ({Path(s.path).name})"
            prefix = f"{name}: " if len(inputs.sweeps) > 1 else ""
            answer += [sentence(prefix + line) for line in (refine_lines(refined) if refined else [])]
        facts.append(("machines", machines_words(inputs.sweeps)))
    rates = False
    several = len(inputs.sweeps) + len(inputs.runs) + len(inputs.anatomies) > 1
    answer += _changed_model_answer(inputs)
    for item in inputs.runs:
        prefix = run_lane_prefix(item, inputs.sweeps)
        source = f"{Path(item.path).name}: " if several else ""  # "this model" is the file's, among several
        if is_rate_run(item):  # serving at an arrival rate
            rates = True
            lanes += [prefix + lane for run in item.runs for lane in run.lanes]
            facts.append(("model", run_model_words(item.runs[0])))
            points = run_points(item.runs)
            answer += [sentence(source + x) for x in (sweep_lines_rates(points) if len(rates_of(points)) > 1
                                                      else [compare_words(points, points[0].rate)] if points else [])
                       if x]
            continue
        for run in item.runs:
            lanes += [prefix + lane for lane in run.lanes]
            facts.append(("model", run_model_words(run)))
            if len(segment_widths(run)) <= 1:  # a ramp's or a drag's answer is the pooled one above
                answer += [source + line for line in run_answer(run)]
    for item in inputs.anatomies:
        lanes += [p.lane for p in item.points]
        answer += anatomy_answer(item)
        facts += [("model", f"hidden {'-'.join(map(str, widths))} · batch {batch}")
                  for widths, batch in dict.fromkeys((p.widths, p.batch_size) for p in item.points)]
    metas = [s.meta for s in inputs.sweeps] + [r.meta for r in inputs.runs]
    tasks, kinds = [], [p.task for item in inputs.anatomies for p in item.points]
    for meta in metas:
        runs = sidecar_runs(meta)
        if runs:
            kinds.append(runs[0].config.train.task)
            tasks.append(task_words(runs, SweepAskedFor.of_sidecar(meta)))
    if tasks:
        facts.append(("task", "; ".join(dict.fromkeys(tasks))))
    lanes = list(dict.fromkeys(lanes))
    facts.insert(0, ("lanes", ", ".join(lanes) or "–"))
    serving = bool(kinds) and all(k == Task.PREDICT for k in kinds)
    # "where does the faster one change" asks of what measured several sizes: a sweep, a ramp, an anatomy's widths
    sizes = bool(inputs.sweeps) or any(len(segment_widths(run)) > 1 for item in inputs.runs for run in item.runs) \
        or any(len({p.widths for p in item.points}) > 1 for item in inputs.anatomies)
    change = ", and where does the faster one change?" if sizes else "?"
    if serving and rates:
        facts.append(("clock", "each request timed from its intended arrival to its answer on the host, its wait in "
                               "the queue included (an open loop: requests arrive on their own schedule)"))
        question = (f"Which of {', '.join(lanes)} serves these requests sooner, and which holds the rate?"
                    if len(lanes) > 1 else "Does this lane hold the rate of requests asked?")
    elif serving:
        facts.append(("clock", f"the {PER_CALL_CLOCK}: {CALL_CLOCKS[PER_CALL_CLOCK]}"))
        question = (f"Which of {', '.join(lanes)} answers one call of this model sooner{change}"
                    if len(lanes) > 1 else "How soon does this lane answer one call of this model?")
    else:
        facts.append(("clock", f"the {SYNCED_CLOCK}: {CLOCKS[SYNCED_CLOCK]}"
                      + (f"; predict files: the {PER_CALL_CLOCK}" if Task.PREDICT in kinds else "")))
        question = (f"Which of {', '.join(lanes)} trains this model faster{change}"
                    if len(lanes) > 1 else "How fast does this lane train this model?")
    return question, tuple(answer), facts


# ---------------------------------------------------------------- the whole report


def _file_settings(name: str, runs: Sequence[RunResult], sweep: SweepAskedFor | None, sidecar: Path | None
                   ) -> FileSettings | None:
    groups = settings_groups(runs, sweep)
    if not groups:
        return None
    return FileSettings(name, tuple(groups), str(sidecar) if sidecar else "", sidecar.name if sidecar else "")


def _anatomy_settings(item: AnatomyInput) -> FileSettings | None:
    """An anatomy's lanes' settings as each lane recorded them (its points carry them); the file itself keeps
    every key."""
    lanes = {}
    for p in item.points:
        lanes.setdefault(p.lane, (p.settings, p.device))
    groups = [g for g in lane_groups(lanes) if g.rows]
    path = Path(item.path)
    return FileSettings(path.name, tuple(groups), str(path), path.name) if groups else None


def build_report(inputs: Inputs, predictions: Sequence[AskedPrediction] = ()) -> Report:
    """The report of `inputs`; `predictions` (a window's predicted lanes, or `report --profile`'s) get a section of
    their own after the measured ones, and no part of the answer."""
    findings = Findings(r for s in inputs.sweeps for r in s.rows)  # the answer, made once for every section
    question, answer, facts = _question(inputs, findings)
    sections: list[Section] = []
    n = 1
    rule: Rule | None = None
    if inputs.sweeps:
        sections.append(sweep_section(inputs.sweeps, n))
        n += len(sections[-1].figures)
        rule = rule_of(inputs.sweeps)
    for item in inputs.runs:
        sections.append(run_section(item, n))
        n += len(sections[-1].figures)
    for item in inputs.anatomies:
        sections.append(anatomy_section(item, n))
        n += 1
    if predictions:
        sections.append(predictions_section(predictions))
    machines: list[tuple[str, Table]] = []
    settings: list[FileSettings] = []
    reproduce: list[tuple[str, str]] = []
    for path, meta, kind, runs in ([(s.path, s.meta, "sweep", sidecar_runs(s.meta)) for s in inputs.sweeps]
                                   + [(r.path, r.meta, "run", list(r.runs)) for r in inputs.runs]):
        name = Path(path).name
        host = HostInfo.of_sidecar(meta)
        if host != HostInfo():
            machines.append((name, _host_table(host)))
        sidecar = sweep_sidecar(path) if kind == "sweep" else sidecar_path(path)
        said = _file_settings(name, runs, SweepAskedFor.of_sidecar(meta), sidecar)
        if said is not None:
            settings.append(said)
        command = reproduce_command(path, meta, kind, runs)
        reproduce.append((name, command or "(no sidecar beside it: its settings are not recorded)"))
    for item in inputs.anatomies:
        reproduce.append((Path(item.path).name, anatomy_command(item.points, Path(item.path).name)))
        said = _anatomy_settings(item)
        if said is not None:
            settings.append(said)
    files = table(["file", "role", "bytes", "SHA-256"],
                   [(f.name, f.role, f"{f.size:,}", f.sha256) for f in inputs.files])
    notes = tuple(s.dropped for s in inputs.sweeps if s.dropped)
    models = list(dict.fromkeys(value for key, value in facts if key == "model"))
    model = models[0] if len(models) <= 1 else f"{models[0]} and {fmt_count(len(models) - 1, 'model')} more"
    calls = bool(inputs.anatomies) and all(p.task == Task.PREDICT for item in inputs.anatomies for p in item.points)
    anatomy = "the anatomy of a served call" if calls else "the anatomy of a training step"
    if inputs.sweeps or inputs.runs or not inputs.anatomies:
        title = "Crossover report: " + (model or "measurements")
    else:
        title = f"Crossover report: {anatomy}" + (f" ({model})" if model else "")
    return Report(title, question, answer, tuple(facts), tuple(rule.lines()) if rule else (), tuple(sections),
                  tuple(machines), tuple(settings), tuple(reproduce), files, APP_VERSION, notes)
