"""How long a dragged width takes to show: from the slider's release to the new width's first batch on the plot.

    python benchmarks/segment_switch.py [--lane cpu1] [--reps 5] [--from-width 16] [--to-width 1024]

The real window (offscreen): each repetition starts a run at the first width on one reused lane,
waits for steady batches, moves the Layer 1 slider to the second width and lets it go as a drag
does, and times until the plot's redraw holds a point of the new segment (its first batch,
warm-up or not: that is when the user sees the new width). Each line splits that time where it
went, from the lane's own clocks: hearing the switch, building the model, the first step (its
tracing included), and the rest (fit's set-up before that step, sending the record, the redraw).
The figure printed last is the median (target < 1.5 s).
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

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
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

    def __init__(self, window, lane: str) -> None:
        self.window, self.lane = window, lane
        self.segment = 0
        self.drawn_at: float | None = None
        window.controller.live_changed.connect(self._on_controller_live_changed)

    def expect(self, segment: int) -> None:
        self.segment, self.drawn_at = segment, None

    def _on_controller_live_changed(self) -> None:
        live = self.window.controller.live
        if self.drawn_at is not None or live is None or not self.segment:
            return
        before = sum(len(live.segment_records(self.lane, s)) for s in range(1, self.segment))
        if live.segment_records(self.lane, self.segment) and \
                self.window.plot.points_drawn(warmup=True).get(self.lane, 0) > before:
            self.drawn_at = time.time()


def one_switch(window, spec: LaneSpec, config: RunConfig, to_width: int, watch: DrawWatch) -> dict[str, float]:
    controller = window.controller
    window.model_panel.set_config(config)
    live = controller.start_run(window.model_panel.current(), [spec], "sequential")

    def steady() -> int:
        return sum(not r.warmup for r in live.segment_records(spec.name, 1))

    wait_until(lambda: steady() >= STEADY_BEFORE_SWITCH or not controller.running)
    if not controller.running:
        raise SystemExit(f"the run ended before the switch: {live.lanes[spec.name].failure or 'too short'}")
    slider = window.model_panel.widths.sliders[0]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", default="cpu1")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--from-width", type=int, default=16)
    parser.add_argument("--to-width", type=int, default=1024)
    args = parser.parse_args()
    if args.to_width not in ROUND_WIDTHS:
        parser.error(f"--to-width {args.to_width}: the slider only stops at round widths such as 1024")
    spec = LaneSpec.parse(args.lane)
    config = RunConfig(ModelSpec((args.from_width,)), TrainSpec(batch_size=128, epochs=1000, data="synthetic",
                                                               samples=60000))
    app = QApplication([])
    app.setApplicationName("Crossover benchmark")
    from crossover_lab.gui.window.main_window import MainWindow

    window = MainWindow(prestart=False, offer_recovery=False, discover_fn=lambda pool, stop: [])
    window.resize(1440, 900)
    window.show()
    watch = DrawWatch(window, spec.name)
    times = []
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


if __name__ == "__main__":
    sys.exit(main())
