"""What a recorded matmul trace says about its launch, for sim.traces.compare.

A matmul trace stamps, per tile (or per stream-K unit), the SM it ran on and when it
started and ended (%smid, %globaltimer), with the program, tile and K range in the trace's
`extra` columns (tests/data/matmul_traces/). Its meta names the kernel, M, N, K, the tile
configuration, the compiled registers and shared memory and the programs launched: enough to
predict the launch with the compute-bound model (sim.model.throughput.predict_matmul) from the launch
alone, tile by tile, so the two schedules compare like for like.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from sim.inputs.errors import UserError
from sim.model.throughput import MatmulPrediction
from sim.traces.trace import Trace

KERNELS = {"tiled": "matmul_tiled", "persistent": "matmul_persistent", "stream_k": "matmul_stream_k"}


def is_matmul_trace(trace: Trace) -> bool:
    meta = trace.meta
    return meta.get("kernel") in KERNELS and all(k in meta for k in ("M", "N", "K", "config"))


@dataclass(frozen=True)
class RecordedMatmul:
    """The kernel as the trace recorded its launch, in the shape sim.model.throughput reads a
    declaration (kernels.declare.spec.KernelSpec): its tile, its M x N x K and the programs it launched
    (the grid that ran, not a rule for one)."""
    name: str
    dims: dict
    block: dict
    programs: int
    constants: dict = field(default_factory=dict)

    def size_dims(self, n, dims=None) -> dict:
        return dict(self.dims)

    def block_params(self, block=None) -> dict:
        return {**self.block, **(block or {})}

    def launch_shape(self, n, params, sm_count, dims=None):
        return SimpleNamespace(grid_blocks=self.programs)


def _whole(meta: dict, key: str) -> int:
    value = meta.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 2**31:
        raise UserError(f"the matmul trace's meta '{key}' must be a whole number, got {value!r}")
    return value


def recorded_matmul(trace: Trace) -> RecordedMatmul:
    """The launch a matmul trace recorded; UserError (one line) where its meta cannot say."""
    meta = trace.meta
    cfg = meta.get("config")
    if not isinstance(cfg, dict):
        raise UserError("the matmul trace's meta has no tile 'config'")
    block = dict(BLOCK_M=_whole(cfg, "block_m"), BLOCK_N=_whole(cfg, "block_n"),
                 BLOCK_K=_whole(cfg, "block_k"), GROUP_M=_whole(cfg, "group_m"),
                 num_warps=_whole(cfg, "num_warps"), num_stages=_whole(cfg, "num_stages"))
    dims = {d: _whole(meta, d) for d in "MNK"}
    tiles = -(-dims["M"] // block["BLOCK_M"]) * -(-dims["N"] // block["BLOCK_N"])
    programs = _whole(meta, "programs") if "programs" in meta else tiles
    return RecordedMatmul(KERNELS[meta["kernel"]], dims, block, programs,
                          {"STREAM_K": meta["kernel"] == "stream_k"})


def resources(trace: Trace) -> tuple[int, int] | None:
    meta = trace.meta
    return (_whole(meta, "regs"), int(meta["smem"])) if "regs" in meta and "smem" in meta else None


def dtype(trace: Trace) -> str:
    return str(trace.meta.get("dtype", "float16"))


def details(trace: Trace, pred: MatmulPrediction) -> tuple[str, ...]:
    """What a matmul comparison adds: the tiles, a whole tile's time and the device events."""
    p, cfg = pred, pred.params
    event = trace.meta.get("event_ms")
    event_line = (f"device events: recorded {float(event) * 1e3:,.1f} µs, predicted "
                  f"{p.time_us:,.1f} µs ({p.time_us / (float(event) * 1e3) - 1:+.0%})"
                  if isinstance(event, (int, float)) and event > 0 else "")
    k_tiles = p.problem.k_tiles
    whole = _extra(trace)[:, 2] - _extra(trace)[:, 1] == k_tiles
    sim = p.item_timeline()
    order = np.lexsort((p.work.round, p.work.tile))  # the item timeline's order
    sim_whole = (p.work.k_end - p.work.k_begin == k_tiles)[order]
    rec_tile = float(np.median((trace.end_us - trace.start_us)[whole])) if whole.any() else float("nan")
    sim_tile = float(np.median((sim.end_us - sim.start_us)[sim_whole])) if sim_whole.any() else float("nan")
    lines = [f"{p.kernel}: {p.tiles:,} tiles of {cfg['BLOCK_M']}x{cfg['BLOCK_N']} "
             f"(K = {p.problem.K:,}) on {p.programs:,} programs; {p.work.describe()}",
             f"a whole tile: recorded {rec_tile:,.1f} µs (median), simulated {sim_tile:,.1f} µs"]
    return tuple(lines + ([event_line] if event_line else []))


def _extra(trace: Trace) -> np.ndarray:
    cols = trace.meta.get("extra_columns") or []
    extra = np.asarray(trace.meta.get("extra") or [], dtype=np.int64)
    if not {"program", "k_begin", "k_end"} <= set(cols) or extra.ndim != 2 \
            or extra.shape[0] != len(trace.block):
        raise UserError("the trace lacks its per-row program and K range (meta 'extra')")
    return extra[:, [cols.index("program"), cols.index("k_begin"), cols.index("k_end")]]


def program_sms(trace: Trace) -> list[int]:
    """The SM each program ran on, program by program (for the 'recorded' placement)."""
    program = _extra(trace)[:, 0]
    if program.min() < 0 or program.max() >= 2**21:
        raise UserError("the matmul trace's program numbers are out of range")
    sms = np.full(int(program.max()) + 1, -1, dtype=np.int64)
    sms[program] = trace.sm
    return [int(s) for s in sms]
