"""The Sweep tab's table: one row per point and lane, as the sweep CSV has them."""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from crossover_lab.gui.lane_style import fmt_num

COLUMNS = ("variant", "lane", "width", "batch", "median ms", "p10-p90 ms", "GFLOP/s", "of peak", "status")


class SweepTable(QTableWidget):
    """Read-only; a failed point's cells carry the reason as their tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

    def add_row(self, row: dict[str, Any]) -> None:
        share = row.get("peak_share")
        values = (row["variant"], row["lane"], row["width"], row["batch_size"], fmt_num(row["median_ms"]),
                  f"{fmt_num(row['p10_ms'])}-{fmt_num(row['p90_ms'])}", fmt_num(row["gflops"]),
                  f"{100 * share:.0f}%" if isinstance(share, float) and math.isfinite(share) else "–",
                  row["status"])
        r = self.rowCount()
        self.insertRow(r)
        for c, value in enumerate(values):
            item = QTableWidgetItem(str(value))
            if row["status"] == "failed":
                item.setToolTip(row.get("reason", ""))
            self.setItem(r, c, item)
        self.scrollToBottom()
