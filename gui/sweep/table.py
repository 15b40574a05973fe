"""The Sweep tab's table: one row per point and lane, as the sweep CSV has them; a point measured again (a sweep's
recheck, a refinement's doubtful width) appears again, over every run's batches, and says how many runs it pools."""
from __future__ import annotations

import math

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from ...core.analysis.costs import Prices, dollars_per_million, price_for
from ...core.files.sweeps.rows import SweepRow
from ...core.words.numbers import fmt_dollars, fmt_joules, fmt_num, fmt_spread
from ...core.words.verdict import scatter
from ...core.records import Status

COLUMNS = ("variant", "lane", "width", "batch", "median ms", "p10-p90 ms", "GFLOP/s", "of peak", "status",
           "floor ms", "$ per M samples", "J per M samples")
# floor: the on-device loop's step (sweep --floor); $ per million samples: at the lane's price per hour (the Lanes
# panel's $/h, or the price an added sweep recorded); joules per million samples: as the lane's energy counter read
# them over the steady stretch (RAPL, NVML). Each is "–" when not measured or not priced.
COST_COLUMN = COLUMNS.index("$ per M samples")
STATUS_COLUMN = COLUMNS.index("status")
ENERGY_COLUMN = COLUMNS.index("J per M samples")


class SweepTable(QTableWidget):
    """Read-only; a failed point's cells carry the reason as their tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setAccessibleName("Sweep points, one row per width and lane")
        self.setTabKeyNavigation(False)  # read-only: Tab goes on to the next control, the arrows move within
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

    def add_row(self, row: SweepRow) -> None:
        values = (row.variant, row.lane, row.width_label, row.batch_size, fmt_num(row.median_ms),
                  fmt_spread(row.p10_ms, row.p90_ms, row.n_batches), fmt_num(row.gflops),
                  f"{100 * row.peak_share:.0f}%" if math.isfinite(row.peak_share) else "–",
                  f"{row.status}, {row.runs} runs" if row.runs > 1 else row.status,
                  fmt_num(row.floor_ms), "–", fmt_joules(row.energy_j_per_msample))
        r = self.rowCount()
        self.insertRow(r)
        for c, value in enumerate(values):
            item = QTableWidgetItem(str(value))
            if row.status == Status.FAILED:
                item.setToolTip(row.reason)
            elif c == STATUS_COLUMN and row.runs > 1:
                item.setToolTip(f"Measured in {row.runs} separate runs, their steady batches pooled; the runs' medians "
                                f"scatter by {scatter(row.between_runs)}, the lane's run-to-run noise, which the verdict "
                                "counts as noise")
            elif c == ENERGY_COLUMN:
                item.setToolTip(energy_tip(row))
            self.setItem(r, c, item)
        self.scrollToBottom()

    def show_costs(self, rows: list[SweepRow], prices: Prices) -> None:
        """Fill the cost column of `rows` (the table's rows, in order) at these prices."""
        for r, row in enumerate(rows[:self.rowCount()]):
            price = price_for(row.lane, prices)
            cost = dollars_per_million(row.median_ms, row.batch_size, price) if price is not None else math.nan
            item = self.item(r, COST_COLUMN)
            assert item is not None  # add_row fills every cell of its row
            item.setText(fmt_dollars(cost))
            item.setToolTip(f"at ${price:g} per hour for {row.lane}" if price is not None else
                            f"no price for {row.lane}: type its $/h in the Lanes panel")


def energy_tip(row: SweepRow) -> str:
    """What the energy cell rests on: mean and idle power and the counter, or that none was read."""
    if not row.energy_counter:
        return "not measured: no energy counter was read for this point (the run's summary says why)"
    above = row.energy_j_per_msample * (1 - row.idle_w / row.mean_w) if row.mean_w > 0 else math.nan
    return (f"{fmt_num(row.mean_w)} W mean, {fmt_num(row.idle_w)} W idle: {fmt_joules(above)} per million samples "
            f"above idle; {fmt_joules(row.energy_j_per_step)} per step ({row.energy_counter})")
