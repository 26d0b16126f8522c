"""QtCompareGpus: the launch on two GPUs side by side — each GPU's SMs in the first wave, its
occupancy, waves and predicted time — and what differs, in words (sim.model.gpu_diff through
gui.models.compare_gpus)."""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QLabel, QSizePolicy,
                               QVBoxLayout, QWidget)

from gui import style
from gui.models.compare_gpus import CompareGpusModel
from gui.models.launch import LaunchModel
from gui.redraw import StagedRedraw
from sim.model.gpu_diff import LaunchSide
from sim.inputs.units import fmt_us


class QtSmGrid(QWidget):
    """Every SM of one GPU as a cell; its bar is the SM's warp slots in the first wave: filled by
    blocks, free, or never usable by this launch."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side: LaunchSide | None = None
        self.setMinimumSize(120, 70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(360, 160)

    def set_side(self, side: LaunchSide | None) -> None:
        self.side = side
        self.update()

    def restyle(self) -> None:
        self.update()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(style.PLOT_BG))
        side = self.side
        if side is None or not side.occ.can_launch:
            p.end()
            return
        gpu, occ = side.gpu, side.occ
        per_sm = side.first_wave_blocks_per_sm()
        sms, slots = gpu.sm_count, gpu.max_warps_per_sm
        usable = occ.blocks_per_sm * occ.warps_per_block
        w, h = self.width() - 8, self.height() - 8
        cols = max(1, round(math.sqrt(sms * w / max(1, h) / 3)))  # cells about 3:1
        rows = math.ceil(sms / cols)
        cw, ch = w / cols, h / rows
        for i in range(sms):
            r, c = divmod(i, cols)
            cell = QRect(int(4 + c * cw) + 1, int(4 + r * ch) + 1, max(2, int(cw) - 2),
                         max(2, int(ch) - 2))
            p.fillRect(cell, QColor(style.NO_SLOT))
            used_w = cell.width() * usable / slots
            p.fillRect(QRect(cell.left(), cell.top(), int(used_w), cell.height()),
                       QColor(style.EMPTY_SLOT))
            busy = per_sm[i] * occ.warps_per_block
            p.fillRect(QRect(cell.left(), cell.top(), int(cell.width() * busy / slots),
                             cell.height()), QColor(style.ACCENT2))
            for b in range(1, occ.blocks_per_sm):  # a thin gap between block slots
                x = cell.left() + int(cell.width() * b * occ.warps_per_block / slots)
                p.fillRect(QRect(x, cell.top(), 1, cell.height()), QColor(style.PLOT_BG))
            p.setPen(QColor(style.FRAME))  # the SM's edge
            p.drawRect(cell.adjusted(0, 0, -1, -1))
        p.end()


class QtGpuSide(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.title = QLabel("")
        self.grid = QtSmGrid()
        self.facts = QLabel("")
        self.facts.setWordWrap(True)
        self.facts.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.title)
        lay.addWidget(self.grid, 1)
        lay.addWidget(self.facts)

    def set_side(self, side: LaunchSide | None, message: str = "") -> None:
        self.grid.set_side(side)
        if side is None:
            self.title.setText("")
            self.facts.setText(html.escape(message))
            return
        g, o, p = side.gpu, side.occ, side.prediction
        self.title.setText(f"<b>{html.escape(g.name)}</b> · {g.sm_count} SMs × "
                           f"{g.max_warps_per_sm} warp slots")
        if not o.can_launch:
            self.facts.setText(f"<span style='color:{style.BAD}'>cannot launch: "
                               f"{html.escape(o.reason)}</span>")
            return
        geo = side.geo
        waves = (f"{geo.waves_at_occupancy:,.2f} waves of {geo.blocks_per_wave:,} blocks"
                 if geo.waves_at_occupancy >= 1 else
                 f"{geo.waves_at_occupancy:.0%} of one wave ({geo.blocks:,} of "
                 f"{geo.blocks_per_wave:,} blocks)")
        time = ("no DRAM latency figure" if p is None else
                f"<b>{fmt_us(side.time_us)}</b> predicted ({p.bandwidth_gbps:,.0f} GB/s, "
                f"{p.bound}-bound)<br>confidence: <span title='{html.escape(side.confidence.label)}'>"
                f"{html.escape(side.confidence.short)}</span>")
        muted = style.MUTED
        self.facts.setText(
            f"<b>{o.occupancy:.0%}</b> theoretical occupancy · <b>{o.blocks_per_sm}</b> blocks/SM, "
            f"limited by <span style='color:{style.ACCENT}'>{' and '.join(o.limited_by)}</span><br>"
            f"{waves}<br>{time}<br><span style='color:{muted}'>each SM's warp slots in the first "
            "wave, one segment per block slot (blue: a block, grey: free, dark: never usable)"
            "</span>")


class QtCompareGpus(QWidget):
    def __init__(self, compare: CompareGpusModel, launch: LaunchModel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.compare, self.launch = compare, launch
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(4)
        row = QHBoxLayout()
        self.here = QLabel("")
        self.other = QComboBox()
        self.other.setToolTip("The second GPU: a preset, or the GPU detected on this machine.")
        row.addWidget(self.here)
        row.addWidget(QLabel("beside"))
        row.addWidget(self.other)
        row.addStretch(1)
        lay.addLayout(row)
        self.figure = QWidget()  # both sides and the differences, no controls: what is exported
        grid = QGridLayout(self.figure)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(14)
        self.sides = (QtGpuSide(), QtGpuSide())
        grid.addWidget(self.sides[0], 0, 0)
        grid.addWidget(self.sides[1], 0, 1)
        self.diff = QLabel("")
        self.diff.setWordWrap(True)
        self.diff.setTextFormat(Qt.TextFormat.RichText)
        self.diff.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.diff, 1, 0, 1, 2)
        grid.setRowStretch(0, 1)
        lay.addWidget(self.figure, 1)

        self.other.currentTextChanged.connect(self._on_other_selected)
        self.redraws = StagedRedraw(self, self._redraw_steps)  # only when seen: two predictions
        compare.changed.connect(self._on_changed)
        launch.specs_changed.connect(self._fill_names)
        self._fill_names()
        self._on_changed()

    def _redraw_steps(self):
        self._draw()
        yield

    def _fill_names(self) -> None:
        self.other.blockSignals(True)
        self.other.clear()
        self.other.addItems(self.launch.gpu_names())
        self.other.setCurrentText(self.compare.other)
        self.other.blockSignals(False)

    def _on_other_selected(self, name: str) -> None:
        if name:
            self.compare.set_other(name)

    def _on_changed(self) -> None:
        self.redraws.request()

    def _draw(self) -> None:
        self.here.setText(f"The launch on the <b>{html.escape(self.launch.state.spec.name)}</b>")
        if self.other.currentText() != self.compare.other:
            self._fill_names()
        sides = self.compare.sides
        for i, view in enumerate(self.sides):
            view.set_side(None if sides is None else sides[i], self.compare.message)
        found = self.compare.differences
        if sides is None:
            text = html.escape(self.compare.message)
        elif not found:
            text = "No difference worth naming: both GPUs run this launch the same way."
        else:
            text = "<b>What differs</b><ul style='margin-left:-20px'>" + "".join(
                f"<li>{html.escape(d.text)}</li>" for d in found) + "</ul>"
        self.diff.setText(text)

    def restyle(self) -> None:
        self._on_changed()

    def export_items(self):
        from gui.export import ExportItem

        self.redraws.flush()
        rows = [[d.key, d.text] for d in self.compare.differences]
        return [ExportItem("two_gpus", self.figure, ["difference", "text"], rows,
                           title="the same launch on two GPUs")]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_compare_gpus [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("compare"))
