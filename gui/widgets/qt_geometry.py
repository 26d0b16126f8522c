"""QtGeometry: the article's launch table, live, and a picture of the warps' lanes in a block."""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import style
from gui.model import LaunchState
from sim.geometry import warp_lanes


class QtWarpLanes(QWidget):
    """One row per warp of a block, 32 lanes each: lit = a thread, dark = an idle lane.

    Left: every block of the grid. Right: the grid's last block, where threads past the end of the
    data are masked off by the `if (i < n)` guard."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._lanes: list[int] = [32]
        self._last_active = 32 * 1
        self._warp = 32

    def set_block(
        self, threads_per_block: int, threads_with_data_in_last_block: int, warp_size: int = 32
    ) -> None:
        self._lanes = warp_lanes(threads_per_block, warp_size)
        self._last_active = threads_with_data_in_last_block
        self._warp = warp_size
        self.update()

    def lanes(self) -> list[int]:
        return list(self._lanes)

    def sizeHint(self) -> QSize:
        return QSize(420, 180)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(style.PLOT_BG))
        n = len(self._lanes)
        w = self.width() - 16
        half = (w - 20) // 2
        title_h = 18
        avail_h = self.height() - title_h - 8
        cell = max(2, min(half // self._warp, max(2, avail_h // max(n, 1))))
        f = QFont(self.font())
        f.setPointSizeF(8.5)
        p.setFont(f)
        active_color = QColor(style.ACCENT2)
        masked = QColor("#6a4a8a")
        idle = QColor("#2a2e37")
        for panel, x0 in ((0, 8), (1, 8 + half + 20)):
            p.setPen(QColor(style.MUTED))
            title = "every block" if panel == 0 else "last block of the grid"
            p.drawText(QRect(x0, 2, half, title_h), Qt.AlignmentFlag.AlignLeft, title)
            for wi, active in enumerate(self._lanes):
                y = title_h + 4 + wi * cell
                if y + cell > self.height():
                    p.setPen(QColor(style.MUTED))
                    p.drawText(x0, self.height() - 2, f"… {n - wi} more warps")
                    break
                for lane in range(self._warp):
                    x = x0 + lane * cell
                    if lane >= active:
                        c = idle
                    elif panel == 1:
                        t = wi * self._warp + lane
                        c = active_color if t < self._last_active else masked
                    else:
                        c = active_color
                    p.fillRect(
                        x, y, cell - (1 if cell > 3 else 0), cell - (1 if cell > 3 else 0), c
                    )
        p.end()


_ROWS = [
    ("elements", "Elements", "the input"),
    ("tpb", "Threads per block", "your choice"),
    ("blocks", "Blocks in the grid", "ceil(elements / threads per block)"),
    ("wpb", "Warps per block", "ceil(threads per block / 32)"),
    ("warps", "Warps in the grid", "blocks × warps per block"),
    (
        "idle_last",
        "Idle threads in the last block",
        "threads in the last block with no element: blocks × threads per block − elements",
    ),
    ("idle_lanes", "Idle lanes in every block", "warps per block × 32 − threads per block"),
    ("slots_sm", "Warp slots per SM", "max threads per SM / 32"),
    ("slots_gpu", "Warp slots on the GPU", "SMs × warp slots per SM"),
    ("waves_best", "Waves, at best", "warps in the grid / warp slots on the GPU"),
    ("bps", "Blocks per SM (occupancy)", "the binding limiter"),
    ("bpw", "Blocks per wave", "SMs × blocks per SM"),
    ("waves_occ", "Waves at this occupancy", "blocks / blocks per wave"),
    ("last_wave", "Blocks in the last wave", "what the tail runs on"),
]


class QtGeometry(QWidget):
    def __init__(self, model=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.table = QTableWidget(len(_ROWS), 3)
        self.table.setHorizontalHeaderLabels(["Quantity", "Value", "How"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(20)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._row = {}
        for r, (key, label, how) in enumerate(_ROWS):
            self._row[key] = r
            self.table.setItem(r, 0, QTableWidgetItem(label))
            v = QTableWidgetItem("")
            v.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            f = v.font()
            f.setBold(True)
            v.setFont(f)
            self.table.setItem(r, 1, v)
            h = QTableWidgetItem(how)
            h.setForeground(QColor(style.MUTED))
            h.setToolTip(how)
            self.table.item(r, 0).setToolTip(f"{label} = {how}")
            self.table.setItem(r, 2, h)
        self.table.setColumnHidden(2, True)  # the derivations are each row's tooltip
        self.table.setMinimumHeight(20 * len(_ROWS) + 28)
        self.table.setMaximumHeight(20 * len(_ROWS) + 28)
        lay.addWidget(self.table)
        self.lanes_label = QLabel("")
        self.lanes_label.setWordWrap(True)
        self.lanes_label.setProperty("role", "muted")
        lay.addWidget(self.lanes_label)
        self.lanes = QtWarpLanes()
        lay.addWidget(self.lanes, 1)
        self._values: dict[str, str] = {}
        if model is not None:  # a LaunchModel
            model.changed.connect(self._on_launch_changed)
            self._on_launch_changed(model.state)

    def value(self, key: str) -> str:
        return self.table.item(self._row[key], 1).text()

    def _on_launch_changed(self, state: LaunchState) -> None:
        g, spec, occ, inp = state.geometry, state.spec, state.occ, state.inputs
        if g is None:
            for key in self._row:
                self.table.item(self._row[key], 1).setText("—")
            self.lanes_label.setText(state.error)
            return
        ept = max(1, inp.elements_per_thread)
        v = {
            "elements": f"{inp.elements:,}" + (f"  ({ept} per thread)" if ept > 1 else ""),
            "tpb": f"{inp.threads_per_block:,}",
            "blocks": f"{g.blocks:,}",
            "wpb": f"{g.warps_per_block}",
            "warps": f"{g.warps_in_grid:,}",
            "idle_last": f"{g.idle_threads_last_block:,}",
            "idle_lanes": f"{g.idle_lanes_per_block}",
            "slots_sm": f"{g.warp_slots_per_sm}",
            "slots_gpu": f"{g.warp_slots_on_gpu:,}  ({spec.sm_count} × {g.warp_slots_per_sm})",
            "waves_best": f"{g.waves_at_best:,.1f}",
            "bps": f"{occ.blocks_per_sm}" if occ else "—",
            "bpw": f"{g.blocks_per_wave:,}" if g.blocks_per_wave else "—",
            "waves_occ": (
                f"{g.waves_at_occupancy:,.2f}"
                if g.waves_at_occupancy is not None and math.isfinite(g.waves_at_occupancy)
                else "cannot launch"
            ),
            "last_wave": (
                f"{g.blocks_in_last_wave:,} of {g.blocks_per_wave:,}"
                if g.blocks_in_last_wave is not None
                else "—"
            ),
        }
        self._values = v
        for key, text in v.items():
            self.table.item(self._row[key], 1).setText(text)
        with_data = g.threads_per_block - g.idle_threads_last_block
        self.lanes.set_block(inp.threads_per_block, with_data, spec.warp_size)
        lanes = warp_lanes(inp.threads_per_block, spec.warp_size)
        idle = g.idle_lanes_per_block
        self.lanes_label.setText(
            f"A block of {inp.threads_per_block} threads is {len(lanes)} warp"
            f"{'s' if len(lanes) != 1 else ''}; "
            + (
                f"the last warp has {lanes[-1]} active lanes and {idle} idle."
                if idle
                else "every lane of every warp has a thread."
            )
            + f" In the grid's last block {g.idle_threads_last_block:,} threads find no element "
            "(purple): the bounds check keeps them out of memory."
        )

    def export_items(self):
        from gui.export import ExportItem

        rows = [[label, self._values.get(key, ""), how] for key, label, how in _ROWS]
        return [
            ExportItem("geometry_table", self.table, ["quantity", "value", "derivation"], rows),
            ExportItem(
                "warp_lanes",
                self.lanes,
                ["warp", "active_lanes"],
                [[i, n] for i, n in enumerate(self.lanes.lanes())],
            ),
        ]
