"""QtGeometry: the article's launch table, live, and a picture of the warps' lanes in a block."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QScrollArea,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import style
from gui.models.compiled import provisional_text
from gui.models.launch import LaunchModel, LaunchState
from sim.rules.block_shape import Dims, fold_summary, lane_rows, warp_folds
from sim.rules.geometry import Fact, geometry_facts, warp_lanes


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
        self._rows: list[list[int]] | None = None

    def set_block(
        self, threads_per_block: int, threads_with_data_in_last_block: int, warp_size: int = 32,
        block: Dims | None = None,
    ) -> None:
        self._lanes = warp_lanes(threads_per_block, warp_size)
        # a 2D/3D block: each lane shaded by its thread's row, so a warp straddling rows shows it
        self._rows = lane_rows(block, warp_size) if block is not None and block.rank > 1 else None
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
        masked = QColor(style.MASKED)
        idle = QColor(style.IDLE)
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
                    if self._rows is not None and lane < active and self._rows[wi][lane] % 2:
                        c = c.lighter(135)  # odd rows of the block a shade lighter
                    p.fillRect(
                        x, y, cell - (1 if cell > 3 else 0), cell - (1 if cell > 3 else 0), c
                    )
        p.end()


# the rows shown, in order; labels, values and derivations come from sim.rules.geometry.geometry_facts
ROWS = ("elements", "tpb", "shape", "blocks", "wpb", "warps", "idle_last", "idle_lanes", "slots_sm",
        "slots_gpu", "waves_best", "bps", "bpw", "waves_occ", "last_wave")
OCCUPANCY_ROWS = ("bps", "bpw", "waves_occ", "last_wave")  # what the registers decide


class QtGeometry(QWidget):
    """The launch table (sim.rules.geometry.geometry_facts: the rows `explain` prints) and the lanes."""

    ROW_HEIGHT = 20

    def __init__(self, model: LaunchModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(6, 6, 6, 6)
        # In a short dock the panel scrolls: the table keeps every row and nothing is drawn over it.
        self.scroll = QScrollArea()
        self.scroll.setWidget(inner)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(self.scroll)
        self.table = QTableWidget(len(ROWS), 2)
        self.table.setHorizontalHeaderLabels(["Quantity", "Value"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(self.ROW_HEIGHT)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._row = {}
        for r, key in enumerate(ROWS):
            self._row[key] = r
            self.table.setItem(r, 0, QTableWidgetItem(key))
            v = QTableWidgetItem("")
            v.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            f = v.font()
            f.setBold(True)
            v.setFont(f)
            self.table.setItem(r, 1, v)
        self.table.setFixedHeight(self.ROW_HEIGHT * len(ROWS) + 28)  # every row, always
        self.table.setWordWrap(True)
        hh.sectionResized.connect(lambda col, _old, _new: col == 0 and self._fit_rows())
        lay.addWidget(self.table)
        self.lanes_label = QLabel("")
        self.lanes_label.setWordWrap(True)
        self.lanes_label.setProperty("role", "muted")
        lay.addWidget(self.lanes_label)
        self.lanes = QtWarpLanes()
        lay.addWidget(self.lanes, 1)
        self._facts: dict[str, Fact] = {}
        model.changed.connect(self._on_launch_changed)
        self._on_launch_changed(model.state)

    def sizeHint(self):
        """The whole table, the note and a small lanes picture."""
        hint = super().sizeHint()
        width = max(200, self.width() - 12)
        hint.setHeight(self.table.height() + self.lanes_label.heightForWidth(width)
                       + self.lanes.minimumHeight() + 24)
        return hint

    def value(self, key: str) -> str:
        return self.table.item(self._row[key], 1).text()

    def _on_launch_changed(self, state: LaunchState) -> None:
        g, spec, inp = state.geometry, state.spec, state.inputs
        if g is None:
            for key in self._row:
                self.table.item(self._row[key], 1).setText("—")
            self.lanes_label.setText(state.error or state.asking)
            return
        self._facts = {f.key: f for f in geometry_facts(spec, g)}
        pending = provisional_text(state.origin)
        for key, r in self._row.items():
            fact = self._facts.get(key)
            if fact is not None:
                self.table.item(r, 0).setText(fact.label)
            tip = f"{fact.label} = {fact.how}" if fact else ""
            value = fact.value if fact else "—"
            provisional = bool(pending) and key in OCCUPANCY_ROWS
            if provisional:  # no answer from registers not known yet
                value, tip = "compiling…" if "compiling" in pending else "unknown", pending
            self.table.item(r, 1).setText(value)
            self.table.item(r, 1).setData(Qt.ItemDataRole.ForegroundRole,
                                          QColor(style.MUTED) if provisional else None)
            self.table.item(r, 0).setToolTip(tip)
            self.table.item(r, 1).setToolTip(tip)
        block = g.block_shape
        self._fit_rows()
        self.lanes.set_block(inp.threads_per_block, g.threads_with_data_in_last_block, spec.warp_size,
                             block)
        lanes = warp_lanes(inp.threads_per_block, spec.warp_size)
        idle = g.idle_lanes_per_block
        folds = warp_folds(block, spec.warp_size)
        self.lanes_label.setText(
            (f"A {fold_summary(block, spec.warp_size)}. Rows alternate in shade: "
             f"{folds[0].line()}; {folds[-1].line()}. "
             if block.rank > 1 else
             f"A block of {inp.threads_per_block} threads is {len(lanes)} warp"
             f"{'s' if len(lanes) != 1 else ''}; "
             + (f"the last warp has {lanes[-1]} active lanes and {idle} idle." if idle
                else "every lane of every warp has a thread."))
            + (f" In the grid's last block {g.threads_per_block - g.threads_with_data_in_last_block:,} "
               "threads find no element (purple): the bounds check keeps them out of memory."
               if g.elements_per_block else
               " The kernel declares its grid, so no block has a fixed share of the elements to "
               "run past: the last block is drawn like every other."))

    def _fit_rows(self) -> None:
        """A label too long for its column (a wide value beside it, a narrow dock) takes two
        lines, never "Threads …"; the table stays as tall as its rows."""
        fm = self.table.fontMetrics()
        room = self.table.columnWidth(0) - 8  # the cell's text margins
        total = 0
        for r in range(self.table.rowCount()):
            wraps = fm.horizontalAdvance(self.table.item(r, 0).text()) > room
            height = self.ROW_HEIGHT + (fm.lineSpacing() if wraps else 0)
            if self.table.rowHeight(r) != height:
                self.table.setRowHeight(r, height)
            total += height
        self.table.setFixedHeight(total + 28)

    def export_items(self):
        from gui.export import ExportItem

        rows = [[f.label, f.value, f.how] for f in self._facts.values()]
        return [
            ExportItem("geometry_table", self.table, ["quantity", "value", "derivation"], rows),
            ExportItem(
                "warp_lanes",
                self.lanes,
                ["warp", "active_lanes"],
                [[i, n] for i, n in enumerate(self.lanes.lanes())],
            ),
        ]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_geometry [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("geometry"))
