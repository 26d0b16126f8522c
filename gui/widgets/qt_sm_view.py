"""QtSmView: every SM of the GPU as a tile of warp slots, coloured by the block that holds them.

Drawn as one image: a pixel -> warp-slot index map is built once per layout (resize, new GPU or
launch); each frame is then a single numpy lookup (state of every warp slot -> colour -> pixels),
so 170 SMs x 48 warp slots animate well above 30 frames per second.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from gui import style
from gui.models.compiled import provisional_text
from gui.redraw import StagedRedraw
from gui.models.playback import PlaybackModel, wave_number
from gui.models.simulation import SimRun, SimulationModel
from gui.widgets.fitted_text import fit_lines
from gui.widgets.sm_layout import SmLayout
from sim.rules.block_shape import Dims, warp_folds
from sim.schedule.timeline import Frame
from sim.inputs.units import fmt_us

# Colour codes per warp slot (index into the LUT built in _build_lut).
_C_BG, _C_GAP, _C_FREE, _C_NEVER = 0, 1, 2, 3
_C_BLOCK = 4  # then N_COLORS normal, N_COLORS "partial warp", N_COLORS "just arrived"


def _build_lut() -> np.ndarray:
    n = style.N_COLORS
    lut = np.zeros((_C_BLOCK + 3 * n, 4), dtype=np.uint8)
    for code, hexc in (
        (_C_BG, style.PLOT_BG),
        (_C_GAP, style.GAP),
        (_C_FREE, style.EMPTY_SLOT),
        (_C_NEVER, style.NO_SLOT),
    ):
        r, g, b = style.rgb_of(hexc)
        lut[code] = (b, g, r, 255)
    for i, pal in enumerate(
        (
            style.palette_rgb(0.0),
            style.palette_rgb(0.55, style.PLOT_BG),
            style.palette_rgb(0.45, "#ffffff"),
        )
    ):
        lut[_C_BLOCK + i * n : _C_BLOCK + (i + 1) * n, 0] = pal[:, 2]
        lut[_C_BLOCK + i * n : _C_BLOCK + (i + 1) * n, 1] = pal[:, 1]
        lut[_C_BLOCK + i * n : _C_BLOCK + (i + 1) * n, 2] = pal[:, 0]
        lut[_C_BLOCK + i * n : _C_BLOCK + (i + 1) * n, 3] = 255
    return lut.view(np.uint32).reshape(-1)


def _fold_note(block_dims: tuple, warp: int) -> str:
    """A 2D/3D block: which of its threads the hovered warp holds (x fastest)."""
    if not block_dims or Dims(*block_dims).rank == 1:
        return ""
    return f"; {Dims(*block_dims).text()} block, {warp_folds(Dims(*block_dims))[warp].line()}"


def _fit_line(fm, parts: list[tuple[str, ...]], width: int, sep: str = "   ·   ") -> str:
    """The parts in one line of `width`, each in its longest form that lets the line fit; if even
    the shortest forms do not fit, the last parts are left out whole (never cut mid-word)."""
    return fit_lines(fm, parts, [width], sep)[0]


class QtSmView(QWidget):
    """The centre of the window: SM tiles with their warp slots, animated through time."""

    hovered = Signal(str)

    HEADER = 40
    FOOTER = 50

    def __init__(self, simulation: SimulationModel, playback: PlaybackModel,
                 parent: QWidget | None = None) -> None:
        """Draws the simulation's run at the playback's frame; subscribes to both once."""
        super().__init__(parent)
        self.simulation, self.playback = simulation, playback
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(300, 150)
        self.setMouseTracking(True)
        self._lut = _build_lut()
        self._layout: SmLayout | None = None
        self._image: QImage | None = None
        self._buffer: np.ndarray | None = None
        self._codes: np.ndarray | None = None
        self.frames_drawn = 0
        self._relayout = StagedRedraw(self, self._relayout_steps)
        simulation.changed.connect(self._on_run_changed)
        playback.time_changed.connect(self._on_time_changed)
        simulation.launch.changed.connect(lambda _state: self.update())  # compiling, or known
        self._refresh_frame()

    def _on_run_changed(self, _run, _message: str) -> None:
        self._layout = None
        self._refresh_frame()

    def restyle(self) -> None:
        """The theme changed (gui/theme.py): new slot colours, redrawn."""
        self._lut = _build_lut()
        self._refresh_frame()

    def _on_time_changed(self, _t_us: float) -> None:
        self._refresh_frame()

    @property
    def record(self) -> SimRun | None:
        return self.simulation.run

    @property
    def frame(self) -> Frame | None:
        return self.playback.frame

    @property
    def _message(self) -> str:
        return self.simulation.message

    def sizeHint(self) -> QSize:
        return QSize(900, 620)

    # -- drawing ----------------------------------------------------------------------------------
    def _grid_rect(self) -> QRect:
        return self.rect().adjusted(8, self.HEADER, -8, -self.FOOTER)

    def _ensure_layout(self) -> None:
        rec = self.record
        if rec is None:
            return
        area = self._grid_rect()
        dpr = max(1.0, self.devicePixelRatioF())
        want = (
            round(area.width() * dpr),
            round(area.height() * dpr),
            rec.spec.sm_count,
            rec.spec.max_warps_per_sm,
        )
        gpcs = self._gpcs()
        order = np.concatenate([np.asarray(g) for g in gpcs]) if gpcs else None
        lay = self._layout
        if (
            lay is None
            or (lay.width, lay.height, lay.sm_count, lay.warps) != want
            or lay.dpr != dpr
            or not np.array_equal(lay.order, order if order is not None else np.arange(want[2]))
        ):
            self._layout = SmLayout(*want, dpr=dpr, order=order)
            self._buffer = np.zeros((self._layout.height, self._layout.width), dtype=np.uint32)
            self._image = QImage(
                self._buffer.data,
                self._layout.width,
                self._layout.height,
                self._layout.width * 4,
                QImage.Format.Format_RGB32,
            )
            self._image.setDevicePixelRatio(dpr)

    def _gpcs(self):
        """The GPCs' SM ids when the run places clusters (tiles then go GPC by GPC), else None."""
        rec = self.record
        if rec is None or rec.simulation.cluster_size <= 1:
            return None
        from sim.rules.clusters import gpc_layout

        return gpc_layout(rec.spec)[0]

    def _refresh_frame(self) -> None:
        self._relayout.cancel()  # this frame is laid out for the current size
        rec = self.record
        if rec is not None and self.frame is not None:
            self._ensure_layout()
            self._compute_codes()
            lay = self._layout
            # one lookup: pixel -> warp-slot code -> colour
            np.take(self._lut, np.take(self._codes, lay.index), out=self._buffer)
        self.update()

    def _compute_codes(self) -> None:
        """Colour code of every warp slot: which block holds it, free, or never usable."""
        rec, frame = self.record, self.frame
        spec, occ, tl = rec.spec, rec.occ, rec.timeline
        n_sm, warps = spec.sm_count, spec.max_warps_per_sm
        wpb = occ.warps_per_block
        codes = np.full((n_sm, warps), _C_NEVER, dtype=np.int32)
        used = min(warps, tl.lanes * wpb)
        ids = np.repeat(frame.resident, wpb, axis=1)[:, :used]
        busy = ids >= 0
        gid = ids + tl.first_block  # grid block id, so colours do not jump when waves are skipped
        gid = gid // rec.simulation.cluster_size  # a cluster's blocks share one colour
        col = np.where(busy, style.block_color_index(np.where(busy, gid, 0)), 0)
        n = style.N_COLORS
        # the last warp of a block whose size is not a multiple of 32 has idle lanes: dimmer
        if occ.threads_per_block % spec.warp_size:
            last = (np.arange(used) % wpb) == wpb - 1
            col = np.where(last[None, :], col + n, col)
        # blocks that arrived a moment ago flash a lighter shade
        if busy.any() and tl.makespan_us > 0:
            safe = np.where(busy, ids, 0)
            age = frame.time_us - tl.start_us[safe]
            fresh = busy & (age < 0.06 * (tl.end_us[safe] - tl.start_us[safe]))
            col = np.where(fresh & (col < n), col + 2 * n, col)
        codes[:, :used] = np.where(busy, _C_BLOCK + col, _C_FREE)
        self._codes = np.concatenate([[_C_BG], codes.reshape(-1)]).astype(np.int32)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(style.PLOT_BG))
        rec = self.record
        if rec is None or self._image is None or self.frame is None:
            self._paint_message(p, self._message or "No simulation")
            p.end()
            return
        area = self._grid_rect()
        pending = self.provisional
        p.setOpacity(0.3 if pending else 1.0)  # blocks per SM the compiler has not decided yet
        p.drawImage(area.topLeft(), self._image)
        self._paint_labels(p, area)
        self._paint_gpcs(p, area)
        p.setOpacity(1.0)
        self._paint_header(p)
        self._paint_queue(p)
        if self._message:
            self._paint_message(p, self._message, overlay=True)
        elif pending:
            self._paint_message(p, f"{pending}\nblocks per SM wait for the compiler's answer",
                                overlay=True, calm=True)
        p.end()
        self.frames_drawn += 1

    def wave_now(self) -> int:
        """The wave the header counts at the current frame (0 without a run)."""
        rec, frame = self.record, self.frame
        return 0 if rec is None or frame is None else wave_number(rec.timeline, frame.queued)

    @property
    def provisional(self) -> str:
        """What the view says while the launch's registers are being compiled ("" once known)."""
        return provisional_text(self.simulation.launch.state.origin)

    def _paint_message(self, p: QPainter, text: str, overlay: bool = False,
                       calm: bool = False) -> None:
        r = self.rect().adjusted(40, 40, -40, -40)
        if overlay:
            box = QRect(0, 0, min(640, self.width() - 40), 64)
            box.moveCenter(self.rect().center())
            fill = QColor(style.PANEL if calm else "#1e181a")  # a notice, or an alarm
            fill.setAlpha(230)
            p.fillRect(box, fill)
            p.setPen(QPen(QColor(style.MUTED if calm else style.BAD)))
            p.drawRect(box)
            r = box.adjusted(10, 6, -10, -6)
        p.setPen(QColor(style.FG if not overlay or calm else style.OVERLAY_TEXT))
        p.drawText(r, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)

    def _paint_labels(self, p: QPainter, area: QRect) -> None:
        lay = self._layout
        if lay.label <= 0:
            return
        f = QFont(self.font())
        f.setPointSizeF(7.0 if lay.cell < 9 else 8.0)
        p.setFont(f)
        fm = p.fontMetrics()
        widest = str(lay.sm_count - 1)
        d = lay.dpr
        tile_w = lay.tile_w / d
        if fm.horizontalAdvance(f"SM {widest}") <= tile_w:
            fmt = "SM {}"
        elif fm.horizontalAdvance(widest) <= tile_w:
            fmt = "{}"
        else:
            return
        p.setPen(QColor(style.MUTED))
        label_h = round(lay.label / d)
        for sm in range(lay.sm_count):
            r = lay.tile_rect(sm)
            p.drawText(
                QRect(
                    area.left() + round(r.left() / d),
                    area.top() + round(r.top() / d) - 1,
                    round(r.width() / d),
                    label_h,
                ),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fmt.format(sm),
            )

    def _paint_gpcs(self, p: QPainter, area: QRect) -> None:
        """With clusters: a frame around each GPC's tiles, alternating in shade, and its number."""
        gpcs, lay = self._gpcs(), self._layout
        if not gpcs:
            return
        d = lay.dpr
        fm = p.fontMetrics()
        labelled = lay.label > 0 and fm.horizontalAdvance(f"SM {lay.sm_count - 1}  G{len(gpcs) - 1}") \
            <= lay.tile_w / d  # else the tooltip names the GPC
        for g, sms in enumerate(gpcs):
            p.setPen(QPen(QColor(style.ACCENT if g % 2 == 0 else style.MUTED), 1.0))
            for sm in sms:
                r = lay.tile_rect(sm)
                p.drawRect(QRect(area.left() + round(r.left() / d) - 2, area.top() + round(r.top() / d) - 2,
                                 round(r.width() / d) + 3, round(r.height() / d) + 3))
            first = lay.tile_rect(sms[0])
            if labelled:
                p.drawText(QRect(area.left() + round(first.left() / d),
                                 area.top() + round(first.top() / d) - 1,
                                 round(first.width() / d), round(lay.label / d)),
                           Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"G{g}")

    def _paint_header(self, p: QPainter) -> None:
        rec, frame = self.record, self.frame
        spec, tl = rec.spec, rec.timeline
        running, queued = frame.running, frame.queued
        wave = wave_number(tl, queued)  # as Geometry counts waves: never "wave 6 of 3.70"
        warps_busy = running * rec.occ.warps_per_block
        full = rec.full_warps
        total_waves = tl.waves_fractional
        f = QFont(self.font())
        f.setPointSizeF(10.5)
        f.setBold(True)
        p.setFont(f)
        p.setPen(QColor(style.FG))
        left = QRect(12, 4, self.width() - 24, 20)
        p.drawText(
            left,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            f"{spec.name} · {spec.sm_count} SMs × {spec.max_warps_per_sm} warp slots",
        )
        f.setBold(False)
        f.setPointSizeF(9.0)
        p.setFont(f)
        share = warps_busy / full if full else 0
        # a grid far smaller than one wave (1 block of 4,224) is a fraction of a wave, not 0.00
        waves_text = f"{total_waves:,.2f}" if total_waves >= 0.01 else f"{total_waves:.1g}"
        # the long form of each part if the line fits, else shorter ones: never cut off mid-word
        parts = [(f"t = {frame.time_us:,.2f} of {tl.makespan_us:,.2f} µs", f"t = {frame.time_us:,.2f} µs"),
                 (f"wave {wave:,} of {waves_text}",) * 2,
                 (f"warp slots busy {warps_busy:,}/{full:,} ({share:.0%} of what this launch can use)",
                  f"busy {warps_busy:,}/{full:,} warps ({share:.0%})", f"{share:.0%} busy")]
        a = getattr(rec, "achieved", None)
        if a is not None:  # over the whole schedule, as Nsight Compute measures it
            parts.append((f"launch: {a.text()}", f"achieved {a.achieved:.0%} of {a.theoretical:.0%}"))
        if tl.skipped_waves:  # the whole grid's time, not the drawn part's (Timeline)
            whole = fmt_us(tl.whole_grid_us)
            parts[0] = (f"t = {frame.time_us:,.2f} µs of the last {tl.waves:,} waves drawn",
                        f"t = {frame.time_us:,.2f} µs (drawn part)")
            parts.append((f"all blocks {whole}: {tl.skipped_waves:,} identical full waves "
                          "before these are not drawn",
                          f"all blocks {whole} ({tl.skipped_waves:,} waves not drawn)",
                          f"all blocks {whole}"))  # the blocks' span: no launch overhead
        p.setPen(QColor(style.MUTED))
        p.drawText(QRect(12, 22, self.width() - 24, 16),
                   Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   _fit_line(p.fontMetrics(), parts, self.width() - 24))
        if frame.in_tail:
            badge = QRect(self.width() - 96, 6, 84, 18)
            p.fillRect(badge, QColor(style.TAIL))
            p.setPen(QColor("#ffffff"))
            p.drawText(badge, Qt.AlignmentFlag.AlignCenter, "TAIL")
        elif queued > 0 and running > 0:
            text = f"WAVE {wave:,}"
            w = max(84, p.fontMetrics().horizontalAdvance(text) + 16)  # wave 1,677,587 fits too
            badge = QRect(self.width() - 12 - w, 6, w, 18)
            p.fillRect(badge, QColor("#2f5d3a"))
            p.setPen(QColor("#ffffff"))
            p.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_legend(self, p: QPainter) -> int:
        """Colour key at the right of the footer; returns the width it took."""
        f = QFont(self.font())
        f.setPointSizeF(8.0)
        p.setFont(f)
        fm = p.fontMetrics()
        dim = style.palette_rgb(0.55, style.PLOT_BG)[0]
        fresh = style.palette_rgb(0.45, "#ffffff")[0]
        entries = [
            (style.PALETTE[0].name(), "block"),
            (QColor(*map(int, dim)).name(), "warp with idle lanes"),
            (QColor(*map(int, fresh)).name(), "just arrived"),
            (style.EMPTY_SLOT, "free"),
            (style.NO_SLOT, "unusable"),
        ]
        if self.record is not None and self.record.occ.threads_per_block % 32 == 0:
            entries.pop(1)
        widths = [14 + fm.horizontalAdvance(t) + 12 for _, t in entries]
        total = sum(widths)
        x = 12
        y = self.height() - 20
        for (color, text), w in zip(entries, widths):
            p.fillRect(QRect(x, y + 2, 10, 10), QColor(color))
            p.setPen(QColor(style.FRAME))
            p.drawRect(QRect(x, y + 2, 10, 10))
            p.setPen(QColor(style.MUTED))
            p.drawText(QRect(x + 14, y, w - 14, 14), Qt.AlignmentFlag.AlignVCenter, text)
            x += w
        return total + 12

    def _paint_queue(self, p: QPainter) -> None:
        """The grid as a bar: retired | running | still queued."""
        f = self.frame
        done, running, queued = f.retired, f.running, f.queued
        total = max(1, done + running + queued)
        self._paint_legend(p)
        r = QRect(12, self.height() - self.FOOTER + 8, self.width() - 24, 14)
        p.fillRect(r, QColor(style.QUEUE_BG))
        w_done = round(r.width() * done / total)
        w_run = max(1 if running else 0, round(r.width() * running / total))
        p.fillRect(QRect(r.left(), r.top(), w_done, r.height()), QColor(style.QUEUE_DONE))
        p.fillRect(QRect(r.left() + w_done, r.top(), w_run, r.height()), QColor(style.GOOD))
        f = QFont(self.font())
        f.setPointSizeF(8.0)
        p.setFont(f)
        text = (
            f"grid: {done:,} retired · {running:,} running · {queued:,} queued of {total:,} blocks"
        )
        flags = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
        p.setPen(QColor(0, 0, 0, 200))  # a shadow keeps the text legible on every segment
        p.drawText(r.adjusted(7, 1, -5, 1), flags, text)
        p.setPen(QColor("#ffffff"))
        p.drawText(r.adjusted(6, 0, -6, 0), flags, text)

    # -- interaction ------------------------------------------------------------------------------
    def describe_at(self, pos: QPoint) -> str:
        rec, lay, frame = self.record, self._layout, self.frame
        if rec is None or lay is None or frame is None:
            return ""
        area = self._grid_rect()
        sm, warp = lay.hit(
            int((pos.x() - area.left()) * lay.dpr), int((pos.y() - area.top()) * lay.dpr)
        )
        if sm < 0:
            return ""
        wpb = rec.occ.warps_per_block
        slot = warp // wpb
        if slot >= rec.timeline.lanes:
            lim = ", ".join(rec.occ.limited_by)
            return (
                f"SM {sm}, warp slot {warp}: never used by this launch — "
                f"only {rec.occ.blocks_per_sm} blocks fit per SM (limited by {lim})"
            )
        b = int(frame.resident[sm, slot])
        if b < 0:
            return f"SM {sm}, warp slot {warp}: free right now"
        tl = rec.timeline
        s, e = float(tl.start_us[b]), float(tl.end_us[b])
        c = rec.simulation.cluster_size
        where = "" if c <= 1 else \
            f", cluster {(b + tl.first_block) // c:,} (GPC {self._gpc_of(sm)})"
        return (
            f"SM {sm}, warp slot {warp}: block {b + tl.first_block:,}{where} (warp {warp % wpb} of "
            f"{wpb}), runs {s:,.2f}–{e:,.2f} µs" + _fold_note(rec.block_dims, warp % wpb)
        )

    def _gpc_of(self, sm: int) -> int:
        return next(g for g, sms in enumerate(self._gpcs() or ()) if sm in sms)

    def mouseMoveEvent(self, event) -> None:
        text = self.describe_at(event.position().toPoint())
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), text, self)
            self.hovered.emit(text)
        else:
            QToolTip.hideText()

    def resizeEvent(self, event) -> None:
        # laid out again once the window's layout has settled (one resize of the window resizes
        # this view several times in one go); until then the last frame is painted as it was
        self._relayout.request()
        super().resizeEvent(event)

    def _relayout_steps(self):
        self._refresh_frame()
        yield

    # -- export -----------------------------------------------------------------------------------
    def csv_rows(self) -> tuple[list[str], list[list]]:
        """Resident blocks at the current time: one row per SM slot."""
        header = ["time_us", "sm", "slot", "block", "start_us", "end_us"]
        rec, frame = self.record, self.frame
        if rec is None or frame is None:
            return header, []
        tl, t = rec.timeline, round(frame.time_us, 4)
        rows = []
        for (sm, slot), b in np.ndenumerate(frame.resident):
            rows.append([t, sm, slot, int(b) + tl.first_block, round(float(tl.start_us[b]), 4),
                         round(float(tl.end_us[b]), 4)] if b >= 0 else [t, sm, slot, -1, "", ""])
        return header, rows


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_sm_view [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("sm_view"))
