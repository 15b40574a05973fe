"""An exported sweep picture is fit for a slide: 1600 px wide, titled with the model, the batch size and the
machines in type large enough to read, and its crossing labelled with the spread as a range."""
from __future__ import annotations

from helpers import H200_SWEEP_CSV as SWEEP_CSV, answer_next_dialog
from PySide6.QtGui import QImage


def dark_row_runs(image: QImage, xs: range, ys: range) -> list[tuple[int, int]]:
    """(first, last) rows of each band of rows with dark (text) pixels between `xs`."""
    runs: list[tuple[int, int]] = []
    for y in ys:
        if any(image.pixelColor(x, y).lightness() < 100 for x in xs):
            if runs and runs[-1][1] == y - 1:
                runs[-1] = (runs[-1][0], y)
            else:
                runs.append((y, y))
    return runs


def test_the_exported_picture_is_slide_sized_with_a_two_line_title(make_window, tmp_path):
    window = make_window()
    assert window.sweep.open_csv(str(SWEEP_CSV))
    assert window.sweep.view.picture_title().split("\n") == [
        "MLP, 2 hidden layers of 16–8,192 units · batch 128",
        "CPU (Intel(R) Xeon(R) Processor, 16 threads); GPU:0 (NVIDIA H200)"]
    answer_next_dialog(window.dialogs, str(tmp_path / "sweep.png"), [])
    window.sweep.view.export_png_button.click()
    image = QImage(str(tmp_path / "sweep.png"))
    assert image.width() >= 1200 and abs(image.width() / image.height() - 1.6) < 0.01
    # Both lines of the title are drawn above the plot, each in type at least 18 px tall (the window's
    # 11 pt title, 15 px, reads as a smudge on a projector).
    lines = dark_row_runs(image, range(image.width() // 2 - 150, image.width() // 2 + 150, 2), range(0, 140))
    assert len(lines) == 2 and all(last - first + 1 >= 18 for first, last in lines), lines


def crossing_labels(plot) -> list[str]:
    return [item.textItem.toPlainText() for item in plot.plotItem.items if hasattr(item, "textItem")]


def test_the_crossing_on_the_picture_carries_its_range(make_window, qtbot):
    from crossover_lab.gui.sweep.plot import SweepPlot

    window = make_window()
    assert window.sweep.open_csv(str(SWEEP_CSV))
    # The window's label stays short enough for a 1024 px window; the verdict under it gives the range.
    assert crossing_labels(window.sweep.view.plot) == ["jax:gpu0 beats jax:cpu above ≈110"]
    assert "about 110 units (≈53.7 MFLOP per batch; 64–128 within the noise)" in window.sweep.view.verdict.text()
    slide = SweepPlot(slide=True)  # what render_png draws
    qtbot.addWidget(slide)
    slide.set_points(window.sweep.view.plot.points, "title", window.sweep.view.plot.crossovers)
    assert crossing_labels(slide) == ["jax:gpu0 beats jax:cpu above ≈110 (64–128)"]


def test_refined_batch_sizes_close_together_keep_their_ticks_but_not_crowded_labels(qtbot):
    from crossover_lab.core.analysis.points import SweepPoint
    from crossover_lab.gui.sweep.plot import SweepPlot

    plot = SweepPlot()
    qtbot.addWidget(plot)
    xs = [1, 16, 22, 26, 30, 38, 128]  # a refinement's batch sizes between 16 and 38
    points = [SweepPoint(lane, x, 10**6 * x, 1.0 + x / (10 if lane == "cpu" else 20), 0.9, 1.1, axis="batch")
              for lane in ("cpu", "cpu1") for x in xs]
    plot.set_points(points)
    major, minor = plot.getAxis("bottom")._tickLevels
    assert [label for _, label in major] == ["1", "16", "26", "128"]
    assert sorted(round(10 ** x) for x, _ in major + minor) == xs  # every measured x keeps its tick
