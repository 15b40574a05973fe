"""The Sweep tab's table: one row per point and lane, as the sweep CSV has them."""
from __future__ import annotations

import math

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from crossover_lab.core.sweep_rows import SweepRow
from crossover_lab.core.words import fmt_num, fmt_range

COLUMNS = ("variant", "lane", "width", "batch", "median ms", "p10-p90 ms", "GFLOP/s", "of peak", "status",
           "floor ms")  # floor: the on-device loop's step (sweep --floor), "–" when not measured


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
        values = (row.variant, row.lane, row.width, row.batch_size, fmt_num(row.median_ms),
                  fmt_range(row.p10_ms, row.p90_ms, 3), fmt_num(row.gflops),
                  f"{100 * row.peak_share:.0f}%" if math.isfinite(row.peak_share) else "–", row.status,
                  fmt_num(row.floor_ms))
        r = self.rowCount()
        self.insertRow(r)
        for c, value in enumerate(values):
            item = QTableWidgetItem(str(value))
            if row.status == "failed":
                item.setToolTip(row.reason)
            self.setItem(r, c, item)
        self.scrollToBottom()
