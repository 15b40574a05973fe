"""How long a dragged width takes to show: from the slider's release to the new width's first batch on the plot.

    python benchmarks/segment_switch.py [--lane cpu1] [--reps 5] [--from-width 16] [--to-width 1024]
    python benchmarks/segment_switch.py --lane cpu,cpu1   # two lanes taking turns, as the window's defaults

The real window (offscreen): each repetition starts a run at the first width on one reused lane,
waits for steady batches, moves the Layer 1 slider to the second width and lets it go as a drag
does, and times until the plot's redraw holds a point of the new segment (its first batch,
warm-up or not: that is when the user sees the new width). Each line splits that time where it
went, from the lane's own clocks: hearing the switch, building the model, the first step (its
tracing included), and the rest (fit's set-up before that step, sending the record, the redraw).
The figure printed last is the median (target < 1.5 s).

With two lanes (taking turns, the window's schedule where lanes share cores) each repetition drags while
one lane trains and the other waits for its turn, and times the new width's first drawn point on each:
the waiting lane's time holds the running lane's short last turn on the new model.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CROSSOVER_HOME", tempfile.mkdtemp(prefix="crossover-bench-"))

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.gui.widgets.width_slider import ROUND_WIDTHS, nearest_position

STEADY_BEFORE_SWITCH = 30  # steady batches of the first width before the slider moves
WAIT_S = 120


def wait_until(predicate, timeout: float = WAIT_S) -> None:
    """Run the Qt event loop (as the app's would) until `predicate()` holds."""
    deadline = time.monotonic() + timeout
    loop = QEventLoop()
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for the run")
        QTimer.singleShot(10, loop.quit)
        loop.exec()


class DrawWatch:
    """Notes when the plot's redraw first holds a point of a given segment of one lane.

    Connected to the controller's live_changed after the window's own connection, so it runs just
    after LivePlot.refresh() in the same redraw."""

    def __init__(self, window, lanes: list[str]) -> None:
        self.window, self.lanes = window, lanes
        self.segment = 0
        self.drawn: dict[str, float] = {}
        window.controller.live_changed.connect(self._on_controller_live_changed)

    def expect(self, segment: int) -> None:
        self.segment, self.drawn = segment, {}

    @property
    def drawn_at(self) -> float | None:
        return self.drawn.get(self.lanes[0])

    def all_drawn(self) -> bool:
        return all(lane in self.drawn for lane in self.lanes)

    def _on_controller_live_changed(self) -> None:
        live = self.window.controller.live
        if live is None or not self.segment:
            return
        drawn = self.window.compare.plot.points_drawn(warmup=True)
        for lane in self.lanes:
            if lane in self.drawn:
                continue
            before = sum(len(live.segment_records(lane, s)) for s in range(1, self.segment))
            if live.segment_records(lane, self.segment) and drawn.get(lane, 0) > before:
                self.drawn[lane] = time.time()


def one_switch(window, spec: LaneSpec, config: RunConfig, to_width: int, watch: DrawWatch) -> dict[str, float]:
    controller = window.controller
    window.side.model_panel.set_config(config)
    live = controller.start_run(window.side.model_panel.current(), [spec], Schedule.SEQUENTIAL)

    def steady() -> int:
        return sum(not r.warmup for r in live.segment_records(spec.name, 1))

    wait_until(lambda: steady() >= STEADY_BEFORE_SWITCH or not controller.running)
    if not controller.running:
        raise SystemExit(f"the run ended before the switch: {live.lanes[spec.name].failure or 'too short'}")
    slider = window.side.model_panel.widths.sliders[0]
    watch.expect(2)
    slider.setSliderDown(True)  # as a drag: the value moves while the button is held, then it is let go
    slider.setValue(nearest_position(to_width))
    released = time.time()
    slider.setSliderDown(False)  # emits sliderReleased: LiveSwitch sends the new model at once
    wait_until(lambda: watch.drawn_at is not None or not controller.running)
    if watch.drawn_at is None:
        raise SystemExit(f"the run ended before the new width was drawn: {live.lanes[spec.name].failure}")
    lane = live.lanes[spec.name]
    first, second = lane.segments[0], lane.segments[1]
    record = live.segment_records(spec.name, 2)[0]
    controller.stop()
    wait_until(lambda: not controller.running)
    return {"total": watch.drawn_at - released, "heard": first.ended.at - released,
            "build": second.started.at - first.ended.at, "first_step": record.ms / 1000.0,
            "rest": watch.drawn_at - second.started.at - record.ms / 1000.0}


def turns_switch(window, specs: list[LaneSpec], config: RunConfig, to_width: int, watch: DrawWatch,
                 rep: int) -> dict[str, float]:
    """Two or more lanes taking turns: drag while one trains, time the new width's first drawn point on each."""
    controller = window.controller
    window.side.model_panel.set_config(config)
    live = controller.start_run(window.side.model_panel.current(), specs, Schedule.INTERLEAVED)
    names = [s.name for s in specs]

    def steady(lane: str) -> int:
        return sum(not r.warmup for r in live.segment_records(lane, 1))

    # Every lane has had a turn; then drag in the middle of the turn of lane `rep % n` (the others wait).
    running = names[rep % len(names)]
    wait_until(lambda: all(steady(n) >= 5 for n in names) or not controller.running)
    grown = steady(running)
    wait_until(lambda: steady(running) >= grown + 20 or not controller.running)
    if not controller.running:
        raise SystemExit("the run ended before the switch")
    slider = window.side.model_panel.widths.sliders[0]
    watch.expect(2)
    slider.setSliderDown(True)
    slider.setValue(nearest_position(to_width))
    released = time.time()
    slider.setSliderDown(False)
    wait_until(lambda: watch.all_drawn() or not controller.running)
    controller.stop()
    wait_until(lambda: not controller.running)
    if not watch.all_drawn():
        raise SystemExit("the run ended before every lane drew the new width")
    return {"running": running, **{n: watch.drawn[n] - released for n in names}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", default="cpu1")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--from-width", type=int, default=16)
    parser.add_argument("--to-width", type=int, default=1024)
    args = parser.parse_args()
    if args.to_width not in ROUND_WIDTHS[:-args.reps - 1]:
        parser.error(f"--to-width {args.to_width}: the slider only stops at round widths such as 1024")
    specs = [LaneSpec.parse(name) for name in args.lane.split(",")]
    spec = specs[0]
    config = RunConfig(ModelSpec((args.from_width,)), TrainSpec(batch_size=128, epochs=1000, data="synthetic",
                                                               samples=60000))
    app = QApplication([])
    app.setApplicationName("Crossover benchmark")
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False, discover_fn=lambda pool, stop: [])
    window.resize(1440, 900)
    window.show()
    watch = DrawWatch(window, [s.name for s in specs])
    times = []
    if len(specs) > 1:
        return turns_main(window, specs, config, args, watch)
    print(f"lane {spec.name}, 1 layer, batch 128, synthetic data: width {args.from_width} -> {args.to_width} "
          f"after {STEADY_BEFORE_SWITCH} steady batches; a fresh run on the reused lane each time")
    try:
        # The lane's process start and framework import are not what is measured: one run first.
        one_switch(window, spec, config, args.to_width, watch)
        for i in range(args.reps):
            t = one_switch(window, spec, config, args.to_width, watch)
            times.append(t["total"])
            print(f"switch {i + 1}: {t['total']:.3f} s = heard {t['heard']:.3f} + model built {t['build']:.3f} + "
                  f"first step {t['first_step']:.3f} + rest {t['rest']:.3f}")
    finally:
        window.close()
    print(f"segment_switch_s={statistics.median(times):.3f}")
    return 0


def turns_main(window, specs: list[LaneSpec], config: RunConfig, args: argparse.Namespace, watch: DrawWatch) -> int:
    names = [s.name for s in specs]
    print(f"lanes {', '.join(names)} taking turns, 1 layer, batch 128, synthetic data: width {args.from_width} -> "
          f"the next round width above {args.to_width} each time, dragged mid-turn; a fresh run on the reused lanes")
    waiting: list[float] = []
    try:
        turns_switch(window, specs, config, args.to_width, watch, 0)  # lane start and imports are not measured
        for i in range(args.reps):
            # A width not trained before in this process each time: its step is traced anew, as a first drag's is.
            to_width = ROUND_WIDTHS[ROUND_WIDTHS.index(args.to_width) + i + 1]
            t = turns_switch(window, specs, config, to_width, watch, i)
            others = [n for n in names if n != t["running"]]
            waiting.extend(t[n] for n in others)
            print(f"switch {i + 1} to {to_width}: running {t['running']} drew it after {t[t['running']]:.3f} s; waiting "
                  + ", ".join(f"{n} after {t[n]:.3f} s" for n in others))
    finally:
        window.close()
    print(f"segment_switch_waiting_s={statistics.median(waiting):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
