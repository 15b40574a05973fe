"""The window as a target for real mouse input: a helper process for tests/test_window_xvfb.py.

    DISPLAY=:N QT_QPA_PLATFORM=xcb python tests/drag_target.py OUT_DIR

Opens the window, starts a run on cpu1 at width 16 and, once steady batches arrive, writes
OUT_DIR/drag.json: where on the screen the Layer 1 slider's handle is, and where width 1024 lies
on it. The test drags it there with xdotool, through the X server as a user's mouse would. Once
the plot shows a second segment and its first batch (or after TIMEOUT_S) it writes OUT_DIR/result.json and
OUT_DIR/window.png, and closes the window as its close button does (the run stops and is saved).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionSlider, QSlider

from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
from crossover_lab.gui.widgets.width_slider import nearest_position

LANE = "cpu1"
CONFIG = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=128, epochs=1000, data="synthetic", samples=6000))
TARGET_WIDTH = 1024
STEADY_BEFORE_DRAG = 20
TIMEOUT_S = 90


def handle_centre(slider: QSlider, value: int) -> QPoint:
    """Where on the screen the slider's handle centre is when it shows `value`."""
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    style = slider.style()
    groove = style.subControlRect(QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderGroove, slider)
    handle = style.subControlRect(QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, slider)
    x = groove.x() + QStyle.sliderPositionFromValue(slider.minimum(), slider.maximum(), value,
                                                    groove.width() - handle.width()) + handle.width() // 2
    return slider.mapToGlobal(QPoint(x, handle.center().y()))


class DragTarget:
    """Steps through the run: started, ready for the drag, a second segment on the plot."""

    def __init__(self, window, out: Path) -> None:
        self.window, self.out = window, out
        self.slider = window.side.model_panel.widths.sliders[0]
        self.pressed_at: float | None = None
        self.released_at: float | None = None
        self.slider.sliderPressed.connect(lambda: setattr(self, "pressed_at", time.time()))
        self.slider.sliderReleased.connect(lambda: setattr(self, "released_at", time.time()))
        self.deadline = time.monotonic() + TIMEOUT_S
        self.asked = False
        self.timer = QTimer(window)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.timer.start(50)

    def _on_timer_timeout(self) -> None:
        live = self.window.controller.live
        if time.monotonic() > self.deadline:
            self._finish(f"timed out after {TIMEOUT_S} s (drag asked: {self.asked})")
        elif live is None:
            return
        elif not self.asked:
            if sum(not r.warmup for r in live.segment_records(LANE, 1)) >= STEADY_BEFORE_DRAG:
                self._ask_for_the_drag()
        elif live.segment_records(LANE, 2) and len(self.window.compare.plot.marks.labels()) >= 2:
            self._finish("")  # the new width's first batch is drawn (the plot redraws as records come in)

    def _ask_for_the_drag(self) -> None:
        self.asked = True
        start = handle_centre(self.slider, self.slider.value())
        end = handle_centre(self.slider, nearest_position(TARGET_WIDTH))
        self._write("drag.json", {"from": [start.x(), start.y()], "to": [end.x(), end.y()]})

    def _finish(self, error: str) -> None:
        self.timer.stop()
        window, live = self.window, self.window.controller.live
        lane = live.lanes[LANE] if live is not None else None
        result = {
            "error": error,
            "pressed_at": self.pressed_at, "released_at": self.released_at,
            "slider_width": window.side.model_panel.widths.widths()[0],
            "segments": [{"index": s.index, "label": s.label, "at": s.started.at} for s in lane.segments] if lane else [],
            "record_widths": sorted({(r.segment, r.widths) for r in lane.records}) if lane else [],
            "marks": window.compare.plot.marks.labels(),
            "points_drawn": window.compare.plot.points_drawn(warmup=True).get(LANE, 0),
            "first_segment_records": len(live.segment_records(LANE, 1)) if live else 0,
        }
        window.grab().save(str(self.out / "window.png"), "PNG")
        self._write("result.json", result)
        window.close()

    def _write(self, name: str, data: dict) -> None:
        """Whole or not at all: the test reads the file as soon as it appears."""
        part = self.out / (name + ".part")
        part.write_text(json.dumps(data))
        part.replace(self.out / name)


def main(out: Path) -> int:
    app = QApplication(sys.argv[:1])
    from crossover_lab.gui.window.main_window import MainWindow
    from gui_fixtures import no_gpu_options

    window = MainWindow(discover_fn=no_gpu_options, offer_recovery=False)
    window.side.model_panel.set_config(CONFIG)
    window.side.lanes_panel.select([LANE])
    window.resize(1440, 900)
    window.show()
    target = DragTarget(window, out)
    QTimer.singleShot(0, window.start_when_ready)
    app.exec()
    return 0 if (out / "result.json").exists() and not json.loads((out / "result.json").read_text())["error"] \
        and target.released_at is not None else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
