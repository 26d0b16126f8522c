"""Where each SM tile and warp cell of the SM view lands in its image (pure numpy geometry)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRect

TILE_COLS = 8  # warp slots per row inside a tile


class SmLayout:
    """Where each SM tile and warp cell lands in a W x H image."""

    def __init__(
        self, width: int, height: int, sm_count: int, warps_per_sm: int, dpr: float = 1.0,
        order=None,
    ) -> None:
        """Sizes in device pixels; `dpr` (device pixels per logical pixel) scales the label
        strip so SM numbers stay readable on high-DPI screens. `order`: the SM id of each tile
        position (GPC by GPC, for clusters); default SM 0, 1, 2, ..."""
        self.dpr = max(1.0, float(dpr))
        self.order = np.arange(sm_count) if order is None else np.asarray(order, dtype=np.int64)
        self.position = np.empty(sm_count, dtype=np.int64)  # tile position of each SM id
        self.position[self.order] = np.arange(sm_count)
        self.width, self.height = max(1, width), max(1, height)
        self.sm_count, self.warps = sm_count, warps_per_sm
        best = None
        # try a few tile shapes (warp slots per tile row) and keep the one with the biggest cells
        for cw in sorted({c for c in (4, 6, 8, 12, 16) if c <= warps_per_sm} or {warps_per_sm}):
            ch = math.ceil(warps_per_sm / cw)
            found = self._fit(cw, ch)
            # 8 warp slots per row reads best (a block of 8 warps is one row); another shape
            # must give clearly bigger cells to win
            score = None if found is None else found[0] * (1.0 if cw == TILE_COLS else 0.75)
            if score is not None and (best is None or score > best[3]):
                best = (found, cw, ch, score)
        if best is None:
            cw = min(TILE_COLS, warps_per_sm)
            ch = math.ceil(warps_per_sm / cw)
            cols = max(1, min(sm_count, (self.width + 1) // (cw + 1)))
            best = ((1, 0, 0, cw, ch, 1, cols, math.ceil(sm_count / cols)), cw, ch, 0)
        found, self.cw, self.ch, _ = best
        (
            self.cell,
            self.gap,
            self.label,
            self.tile_w,
            self.tile_h,
            self.tgap,
            self.cols,
            self.rows,
        ) = found
        self.grid_w = self.cols * (self.tile_w + self.tgap) - self.tgap
        self.grid_h = self.rows * (self.tile_h + self.tgap) - self.tgap
        self.x0 = (self.width - self.grid_w) // 2
        self.y0 = (self.height - self.grid_h) // 2
        self.index = self._pixel_index()

    def _fit(self, cw: int, ch: int):
        """Largest cell size for which every SM tile fits, or None."""
        for cell in range(40, 0, -1):
            gap = 1 if cell >= 4 else 0
            label = round(12 * self.dpr) if cell >= 5 * self.dpr else 0
            tile_w = cw * cell + (cw - 1) * gap
            tile_h = ch * cell + (ch - 1) * gap + label
            tgap = max(4, cell // 2 + 2)
            cols = max(1, min(self.sm_count, (self.width + tgap) // (tile_w + tgap)))
            rows = math.ceil(self.sm_count / cols)
            cols = math.ceil(self.sm_count / rows)  # same rows, balanced columns
            if (
                rows * (tile_h + tgap) - tgap <= self.height
                and cols * (tile_w + tgap) - tgap <= self.width
            ):
                return (cell, gap, label, tile_w, tile_h, tgap, cols, rows)
        return None

    def _axis(
        self,
        n_tiles: int,
        origin: int,
        tile: int,
        tgap: int,
        cells: int,
        length: int,
        label: int = 0,
    ):
        """Per pixel along one axis: (tile number or -1, cell number or -1)."""
        p = np.arange(length) - origin
        period = tile + tgap
        t = np.where(p >= 0, p // period, -1)
        within = p - t * period - label
        pitch = self.cell + self.gap
        c = np.where(within >= 0, within // pitch, -1)
        in_cell = (within >= 0) & ((within % pitch) < self.cell) & (c < cells)
        valid = (p >= 0) & (t < n_tiles) & (within < tile - label) & in_cell
        return np.where(valid, t, -1), np.where(valid, c, -1)

    def _pixel_index(self) -> np.ndarray:
        tx, cx = self._axis(self.cols, self.x0, self.tile_w, self.tgap, self.cw, self.width)
        ty, cy = self._axis(
            self.rows, self.y0, self.tile_h, self.tgap, self.ch, self.height, self.label
        )
        pos = ty[:, None] * self.cols + tx[None, :]
        warp = cy[:, None] * self.cw + cx[None, :]
        ok = (ty[:, None] >= 0) & (tx[None, :] >= 0) & (pos < self.sm_count) & (warp < self.warps)
        sm = self.order[np.clip(pos, 0, self.sm_count - 1)]
        ok &= (cy[:, None] >= 0) & (cx[None, :] >= 0)
        # 0 = background; 1 + flat warp-slot index otherwise
        return np.where(ok, sm * self.warps + warp + 1, 0).astype(np.int32)

    def tile_rect(self, sm: int) -> QRect:
        r, c = divmod(int(self.position[sm]), self.cols)
        return QRect(
            self.x0 + c * (self.tile_w + self.tgap),
            self.y0 + r * (self.tile_h + self.tgap),
            self.tile_w,
            self.tile_h,
        )

    def hit(self, x: int, y: int) -> tuple[int, int]:
        """(sm, warp slot) under a pixel, or (-1, -1)."""
        if 0 <= x < self.width and 0 <= y < self.height:
            v = int(self.index[y, x]) - 1
            if v >= 0:
                return divmod(v, self.warps)
        return -1, -1
