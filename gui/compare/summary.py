"""The live summary: per-lane median, samples/s, GFLOP/s and progress, the verdict in words, and why."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Mapping

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QAbstractScrollArea, QFrame, QHeaderView, QLabel, QScrollArea,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ...core.analysis import tails
from ...core import run_stats
from ...core.analysis.fits import CostFit
from ...core.files.findings import Findings
from ...core.run_stats import has_steady
from ...core.analysis.contention import common_stretch, contended
from ...core.analysis.costs import dollars_per_million, price_for
from ...core.analysis.anatomy import AnatomyPoint
from ...core.study.anatomy import anatomy_key
from ...core.words.anatomy import CLOCKS, NOT_MEASURED, PIPELINED_CLOCK, SYNCED_CLOCK, clock_parts
from ...core.config import RunConfig, Schedule, Task
from ...core.machine import LABEL
from ...core.records import RunSettings, RunSummary, Status
from ...core.results import Segment
from ...core.engine.tracking import Between
from ...core.words.numbers import MISSING, fmt_dollars, fmt_duration, fmt_num, fmt_range
from ...core.words.failures import failure_words
from ...core.analysis.serving_rates import run_points
from ...core.words.rates import compare_words, point_words, schedule_words
from ...core.words.run import energy_lines, explain, latency_lines, provisional_lines, run_headline, verdict_lines
from ..theme.lane_colours import lane_color
from ...core.words.run import contention_note
from ..live_run import LiveRun
from .headline import Headline
from .summary_words import as_sentence, changed_model, crossing_lines, energy_crossing_lines, verdict_segments
from ..theme.scheme import scheme_colors

TEXT_INTERVAL_MS = 250  # figures in words change slowly; the plot has its own faster timer
# One column per lane, one row per figure: two or three lanes read side by side in a narrow panel.
ROWS = ("Device", "Status", "Median ms/batch, synced", "p10–p90 ms/batch", "p99 ms, the tail", "Samples/s", "GFLOP/s", "Model", "Data",
        "Progress", "Pipelined ms/step", "$ per M samples", "Mean ms/step, your fit", "Other work on its cores")
ROW_TIPS = {"Mean ms/step, your fit": "Wall time per step over the steady stretch, epoch ends and slow steps "
                                      "included (the median leaves them out): what multiplies into how long a "
                                      "plain model.fit of this model takes.",
            "p99 ms, the tail": "The 99th percentile of the steady steps (of the calls, for the predict task): "
                                "the slowest one in a hundred, which a server's users feel and a median hides. "
                                f"Given from {run_stats.MIN_CALLS[99]:,} steady steps on (MLPerf's early-stopping "
                                "minimum for a p99): with fewer it shows –, since the slowest one or two steps "
                                "would decide it.",
            "Other work on its cores": "The share of this lane's CPU cores that other processes used while it "
                                       "was measured (from /proc), and the load average. Above 10% the lead "
                                       "may not hold."}
PHASE_TIPS: dict[Between, str] = {
    Between.FINISHING: "Every batch is measured; the lane is tidying up before it reports. A stop now keeps the run "
                       "complete.",
    Between.SEGMENTS: "This lane has measured its model; the other lane trains now (they take turns).",
    Between.TURNS: "Lanes that share CPU cores take turns of about 2 s each, so no figure is measured while "
                   "another lane trains; this one goes on where it stopped."}
PHASE_WORDS: dict[Between, str] = {Between.FINISHING: "finishing…", Between.SEGMENTS: "waiting for its turn",
                                   Between.TURNS: "waiting for its turn"}


def framework_of(live: LiveRun, name: str) -> str:
    """The framework a lane of this run loads as it starts (TensorFlow, JAX, PyTorch)."""
    return next((LABEL[spec.backend] for spec in live.specs if spec.name == name), "its framework")


class SummaryPanel(QWidget):
    """Reads the live run on its own 4 Hz timer; `refresh()` redraws at once."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(len(ROWS), 0)
        self.table.setVerticalHeaderLabels(ROWS)
        self.table.setAccessibleName("Summary: one column per lane")
        self.table.setTabKeyNavigation(False)  # read-only: Tab goes on to the next control, the arrows move within
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Steady-state figures (warm-up batches left out), updated as batches arrive.")
        self.verdict = Headline("No run yet.")
        self.explanation = QLabel("")
        self.explanation.setObjectName("explanationLabel")
        self.explanation.setWordWrap(True)
        self.detail = QLabel("")  # where a ramp's lanes cross; how to get the other clock
        self.detail.setObjectName("explanationLabel")
        self.detail.setWordWrap(True)
        self.detail.hide()
        self.problems = QLabel("")
        self.problems.setObjectName("problemLabel")
        self.problems.setWordWrap(True)
        self.problems.hide()
        self.note = QLabel("")
        self.note.setObjectName("warningLabel")
        self.note.setWordWrap(True)
        self.note.hide()
        # The table is as tall as its rows, and the panel scrolls as one when the window is short: squeezed,
        # the table hid its last rows and the explanation was cut mid-sentence.
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.verdict, self.detail, self.table, self.problems, self.note, self.explanation):
            layout.addWidget(widget)
        layout.addStretch(1)
        # Not `self.scroll`: that would hide QWidget.scroll().
        self.scroll_area = QScrollArea()
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(content)
        self.scroll_area.setAccessibleName("Summary of the run: verdict, figures per lane, and why")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll_area)
        self._live: LiveRun | None = None
        self._fits: dict[str, CostFit] = {}
        # The window's findings (core/files/findings.py), shared with the map and the Sweep tab: a ramp's headline
        # is their answer on its kind of model. None: a ramp says its own crossing.
        self.findings: Findings | None = None
        self._anatomy: tuple[RunConfig | None, dict[str, AnatomyPoint]] = (None, {})  # the Why tab's last
        self.prices: Callable[[], Mapping[str, float]] = dict  # each lane's $/h (the Lanes panel's, in the window)
        # Whether a lane's process has loaded its framework (the window asks its lane pool); None: not known. While
        # the lanes start, each one's column says which it is doing.
        self.lane_up: Callable[[str], bool | None] = lambda _name: None
        self.table.verticalHeaderItem(ROWS.index("$ per M samples")).setToolTip(
            "What a million training samples cost at the lane's price per hour (the $/h beside it in the Lanes "
            "panel) and its median synced step.")
        for name, clock in (("Median ms/batch, synced", SYNCED_CLOCK), ("Pipelined ms/step", PIPELINED_CLOCK)):
            self.table.verticalHeaderItem(ROWS.index(name)).setToolTip(f"The {clock}: {CLOCKS[clock]}.")
        for name, tip in ROW_TIPS.items():
            self.table.verticalHeaderItem(ROWS.index(name)).setToolTip(tip)
        self._timer = QTimer(self)
        self._timer.setInterval(TEXT_INTERVAL_MS)
        self._timer.timeout.connect(self._on_text_timer_timeout)

    def show_run(self, live: LiveRun) -> None:
        self._live = live
        note = contention_note(live.specs, live.result.schedule)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.table.setColumnCount(len(live.lanes))
        for col, name in enumerate(live.lanes):
            swatch = QPixmap(12, 12)
            swatch.fill(lane_color(name))
            self.table.setHorizontalHeaderItem(col, QTableWidgetItem(QIcon(swatch), name))
            for row in range(len(ROWS)):
                self.table.setItem(row, col, QTableWidgetItem(""))
        self.refresh()
        self._timer.start()

    def set_fits(self, fits: dict[str, CostFit]) -> None:
        """Cost fits from the crossover map (lanes with ≥2 sizes), for the explanation."""
        self._fits = dict(fits)
        self.refresh()

    # ---------------------------------------------------------------- the two clocks (the Why tab measures)

    def set_anatomy(self, config: RunConfig, points: dict[str, AnatomyPoint]) -> None:
        """The anatomy of `config` per lane: its pipelined clock is shown while the live run trains that model."""
        self._anatomy = (anatomy_key(config), dict(points))
        self.refresh()

    def anatomy(self, segment: Segment | None = None) -> dict[str, AnatomyPoint]:
        """The lanes' anatomies of the model `segment` trains (the run's first model when None), if the Why tab
        measured that model: a ramp or a dragged width trains others."""
        config, points = self._anatomy
        live = self._live
        if live is None or config is None:
            return {}
        model = live.config if segment is None else dataclasses.replace(
            live.config, model=dataclasses.replace(live.config.model, widths=segment.started.widths),
            train=dataclasses.replace(live.config.train, batch_size=segment.started.batch_size))
        return points if anatomy_key(model) == config else {}

    def _pipelined_text(self, live: LiveRun, lane: str) -> str:
        if live.config.train.task == Task.PREDICT:
            return "none: a call waits"
        rung = (point := self.anatomy(live.current_segment(lane)).get(lane)) and point.rung("fit_pipelined")
        return fmt_num(rung.median_ms) if rung else NOT_MEASURED

    def run_ended(self) -> None:
        self.refresh()
        self._timer.stop()

    @Slot()
    def _on_text_timer_timeout(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        live = self._live
        if live is None:
            return
        summaries, problems = [], []
        for col, (name, lane) in enumerate(live.lanes.items()):
            s = live.summary(name)
            summaries.append(s)
            state = live.phase(name)
            phase = PHASE_WORDS[state] if isinstance(state, Between) else state.value
            up = self.lane_up(name)
            if state == Status.WAITING and up is False:
                phase = "starting"  # its process loads its framework (the Progress row says which)
            cells = (live.device(name) or ("—" if state == Status.FAILED else "…"), phase,
                     fmt_num(s.median_ms), fmt_range(s.p10_ms, s.p90_ms, 3)
                     if math.isfinite(s.p10_ms) and tails.spread_shown(live.config.train.task, s.n_batches) else MISSING,
                     fmt_num(s.p99_ms) if math.isfinite(s.p99_ms) else MISSING, fmt_num(s.samples_per_s),
                     fmt_num(s.gflops), self._model_text(live, name), self._data_text(self._settings(live, name)),
                     self._progress(live, name, state, up))
            for row, text in enumerate(cells):
                item = self._cell(row, col)
                if item.text() != text:
                    item.setText(text)
            self._cell(ROWS.index("Data"), col).setToolTip(self._settings(live, name).data_description)
            self._cell(ROWS.index("Pipelined ms/step"), col).setText(self._pipelined_text(live, name))
            self._cell(ROWS.index("$ per M samples"), col).setText(self._cost_text(live, name, s.median_ms))
            self._cell(ROWS.index("Mean ms/step, your fit"), col).setText(fmt_num(s.mean_wall_ms))
            self._cell(ROWS.index("Other work on its cores"), col).setText(
                f"{100 * s.others_cpu:.0f}% (load {fmt_num(s.load_avg, 2)})" if math.isfinite(s.others_cpu) else MISSING)
            status = self._cell(1, col)
            # No colour of its own unless failed: the table's text colour reads in light and dark.
            status.setData(Qt.ItemDataRole.ForegroundRole, QColor(scheme_colors().error) if state == Status.FAILED else None)
            status.setToolTip(lane.failure or s.reason or (PHASE_TIPS[state] if isinstance(state, Between)
                                                           else state.value))
            if state == Status.FAILED:
                problems.append(f"{name} failed: {failure_words(name, lane.failure)}")
        if live.failure:
            problems.insert(0, f"The run failed: {live.failure}")
        self.problems.setText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self._update_words(live, summaries)

    @staticmethod
    def _data_text(settings: RunSettings) -> str:
        """The data a lane trained on, and why when "auto" could not give MNIST (the tooltip has it whole)."""
        source, description = settings.data_source or "…", settings.data_description
        if source == "synthetic" and "as asked" not in description:
            return "synthetic: no MNIST here"
        return source

    def _cell(self, row: int, col: int) -> QTableWidgetItem:
        item = self.table.item(row, col)
        assert item is not None  # show_run fills every cell of the lanes' columns
        return item

    def _cost_text(self, live: LiveRun, name: str, median_ms: float) -> str:
        price = price_for(name, self.prices())
        if price is None:
            return "–, no $/h"
        segment = live.current_segment(name)
        batch = segment.started.batch_size if segment is not None else live.config.train.batch_size
        return fmt_dollars(dollars_per_million(median_ms, batch, price))

    @staticmethod
    def _settings(live: LiveRun, name: str) -> RunSettings:
        lane = live.lanes[name]
        return lane.started.settings if lane.started else RunSettings()

    @staticmethod
    def _model_text(live: LiveRun, name: str) -> str:
        """The model the lane trains now: its widths and batch, and which of a plan's models it is."""
        segment = live.current_segment(name)
        if segment is None:
            return f"{'-'.join(map(str, live.config.model.widths)) or 'as saved'} · batch {live.config.train.batch_size}"
        text = f"{segment.label} · batch {segment.started.batch_size}"
        return text + (f" ({segment.index}/{len(live.plan)})" if len(live.plan) > 1 else "")

    @staticmethod
    def _progress(live: LiveRun, name: str, state: Status | Between, up: bool | None = None) -> str:
        lane = live.lanes[name]
        total, last = live.total_steps(name), (lane.records[-1] if lane.records else None)
        if state == Status.WAITING:
            if live.result.schedule is Schedule.SIDE_BY_SIDE:
                return "starting the lane…"
            if not any(other.records for other in live.lanes.values()):  # core/engine/pool.py conduct
                framework = framework_of(live, name)
                if up is False:
                    return f"loading {framework}…"
                if up:
                    return f"{framework} loaded; making data…"
                return "starting: the turns begin once every lane has loaded its framework"
            return "waiting for its turn"
        if state is Between.FINISHING:
            return f"all {last.step} batches measured" if last is not None else "finishing…"
        segment = live.current_segment(name)
        if len(live.plan) > 1 and segment is not None:
            return f"model {segment.index} of {len(live.plan)} · step {last.step if last is not None else 0}"
        if total and last is not None:
            per_epoch = max(total // max(live.config.train.epochs, 1), 1)
            progress = f"epoch {last.epoch}/{live.config.train.epochs} · batch {last.batch}/{per_epoch}"
            if state == Status.RUNNING:
                progress += f" · {fmt_duration(live.time_left(name))} left"
            return progress
        if last is not None:
            return f"step {last.step}"
        if state == Status.FAILED:
            return "failed before its first batch"
        if state == Status.CANCELLED or live.finished:
            return "never trained: stopped before its first batch"
        return "preparing (data, model)…" if lane.started is not None else "loading data…"

    def _update_words(self, live: LiveRun, summaries: list[RunSummary]) -> None:
        # A verdict compares the lanes' current segments; a pair that overlapped on shared cores says so.
        pair, model = verdict_segments(live)
        task = live.result.config.train.task
        stretch = common_stretch(live.result)  # lanes side by side: compared on the time all of them trained
        # A ramp's headline is where its lanes cross (the window's one answer on its kind of model, as the map and
        # the Sweep tab say it); the model trained now is compared below it.
        answer = crossing_lines(live, self.findings)
        details = energy_crossing_lines(live)
        if task == Task.PREDICT:  # a served call's headline is its latency; where the lanes cross goes below it
            details, answer = answer + details, []
        if pair:
            crowded = {lane for lane, index in contended(live.result) if lane in pair and pair[lane].index == index}
            compared = [live.segment_summary(lane, seg) for lane, seg in pair.items()]
            if stretch and stretch.summaries:
                compared = [stretch.summaries.get(s.lane, s) for s in compared]
                details.append(f"Compared over the {fmt_num(stretch.seconds, 2)} s during which every lane trained")
            elif stretch and stretch.reason:
                details.append(f"Not compared on the same time: {stretch.reason}")
            lines = (verdict_lines(compared, crowded, model or "this model", task, live.result.run_noise)
                     if live.finished else provisional_lines(compared, crowded, model or "this model", task))
        else:
            compared = summaries
            lines = (verdict_lines(summaries, task=task, noise=live.result.run_noise) if live.finished
                     else provisional_lines(summaries, task=task))
        if live.finished and not changed_model(live):
            lines = run_headline(live.result)  # a finished run of one model: the CLI's and the report's words
        train = live.result.config.train
        if train.arrival_rate is not None:  # at an arrival rate: what each lane held, per request (core/words/rates.py)
            points = [p for p in run_points([live.result]) if live.lanes[p.lane].records]
            compare = compare_words(points, train.arrival_rate) if len(points) == 2 else ""
            lines = [compare] if compare and live.finished else []
            details = [schedule_words(points[0])] + [point_words(p) for p in points] if points else []
        elif task == Task.PREDICT:  # a server's figures: each lane's latency, its tail beside its median
            details += latency_lines(compared, live.result.config.train.batch_size)
        states = [lane.status for lane in live.lanes.values()]
        if states and all(state == Status.FAILED for state in states):
            reasons = {f"{name}: {failure_words(name, lane.failure)}" for name, lane in live.lanes.items()}
            self.verdict.setText("Every lane failed: " + "; ".join(sorted(reasons)) if reasons else
                                 "Every lane failed.")
        elif live.failure:
            self.verdict.setText(f"The run failed: {live.failure}")
        elif lines:
            # Which clock the verdict uses, and a disagreement of the other, stay in the verdict; a hint to
            # measure the other goes below it with the crossings.
            segment = next(iter(pair.values()), None) if pair else None  # the model the verdict compares on
            clause, rest, disagrees = clock_parts({s.lane: s.median_ms for s in summaries}, self.anatomy(segment))
            # The headline is the verdict alone (and a clock that disagrees with it); which clock it uses and
            # a busy machine are said in the detail line below it.
            notes = [line for line in lines if line.lower().startswith("other work used")]
            lines = [line for line in lines if line not in notes]
            if task == Task.PREDICT:  # one call's latency: the synced clock is the only one (no pipelined steps)
                self.verdict.setText(" · ".join(line + "." for line in lines))
            elif disagrees:
                self.verdict.setText(" · ".join(line + "." for line in lines) + f" {clause[:1].upper()}{clause[1:]}; {rest}.")
            else:
                self.verdict.setText(" · ".join(line + "." for line in lines))
                details += [clause[:1].upper() + clause[1:]] + ([rest[:1].upper() + rest[1:]] if rest else [])
            details += notes
        elif len(summaries) < 2:
            self.verdict.setText("Choose two lanes for a verdict.")
        elif live.finished:
            self.verdict.setText("No verdict: the lanes did not both reach steady batches.")
        elif not any(lane.records for lane in live.lanes.values()) and any(
                self.lane_up(name) is False for name in live.lanes):
            frameworks = sorted({framework_of(live, name) for name in live.lanes})
            self.verdict.setText(f"Starting the lanes: each loads {' and '.join(frameworks)} in a process of its own "
                                 "first…")
        else:
            self.verdict.setText("Waiting for steady batches on both lanes…")
        if answer and not live.failure and not (states and all(state == Status.FAILED for state in states)):
            # The box says one answer: the pooled one over every width. The model trained last is said as what was
            # measured on it, not judged a second time (its own verdict could contradict the pooled one's).
            self.verdict.setText(" ".join(as_sentence(line, live.lanes) + "." for line in answer))
            medians = ", ".join(f"{s.lane} {fmt_num(s.median_ms)} ms" for s in compared if has_steady(s))
            if medians:
                details.insert(0, f"Now on {model or 'the model trained last'}: {medians} a batch (medians so far; "
                                  "the answer above judges every model measured)")
        details += energy_lines(summaries)  # energy per million samples, total and above idle, or why not measured
        self.detail.setText(" ".join(as_sentence(line, live.lanes) + "." for line in details))
        self.detail.setVisible(bool(details))
        usable = [s for s in summaries if has_steady(s)]
        if len(usable) >= 2:
            text = explain(usable[0], usable[1], self._fits, task)
            self.explanation.setText(text)
            self.explanation.setToolTip(text)
        else:
            self.explanation.setText("")
