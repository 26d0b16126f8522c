"""A recorded matmul schedule beside its simulation.

benchmarks/matmul_run.py stamps, per tile (or per stream-K unit), the SM it ran on and when it
started and ended (%smid, %globaltimer), with the program, tile and K range in the trace's
`extra` columns (tests/data/matmul_traces/). Here the same launch is predicted from the kernel's
declaration alone (sim.throughput.predict_matmul, programs on the SMs the hardware gave them) and
laid out tile by tile, so the two schedules compare like for like.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.compare import RecordedPlacement
from sim.devices import GpuSpec
from sim.errors import UserError
from sim.throughput import MatmulPrediction, predict_matmul
from sim.timeline import Timeline, timeline_of_trace
from sim.trace import Trace

KERNELS = {"tiled": "matmul_tiled", "persistent": "matmul_persistent", "stream_k": "matmul_stream_k"}


def is_matmul_trace(trace: Trace) -> bool:
    meta = trace.meta
    return meta.get("kernel") in KERNELS and all(k in meta for k in ("M", "N", "K", "config"))


@dataclass(frozen=True)
class MatmulTraceComparison:
    kernel: str
    prediction: MatmulPrediction
    recorded_span_us: float
    recorded_event_us: float | None
    recorded_tile_us: float  # median recorded time of a whole tile
    simulated_tile_us: float
    recorded_last_start_us: float  # when the last tile (or unit) started
    simulated_last_start_us: float

    def lines(self) -> list[str]:
        p = self.prediction
        cfg = p.params
        event = (f"; device events {self.recorded_event_us:,.1f} µs, predicted {p.time_us:,.1f} µs"
                 if self.recorded_event_us else "")
        return [
            f"{self.kernel}: {p.tiles:,} tiles of {cfg['BLOCK_M']}x{cfg['BLOCK_N']} (K = {p.problem.K:,}) "
            f"on {p.programs:,} programs; {p.work.describe()}",
            f"span of the tiles: recorded {self.recorded_span_us:,.1f} µs, simulated "
            f"{p.simulation.makespan_us:,.1f} µs ({p.simulation.makespan_us / self.recorded_span_us - 1:+.0%}){event}",
            f"a whole tile: recorded {self.recorded_tile_us:,.1f} µs (median), simulated "
            f"{self.simulated_tile_us:,.1f} µs",
            f"last tile or unit starts: recorded {self.recorded_last_start_us:,.1f} µs, simulated "
            f"{self.simulated_last_start_us:,.1f} µs",
            f"simulated from the declaration alone ({p.gpu}, compute-bound model), programs on the "
            "SMs the hardware gave them",
        ]


def compare_matmul_trace(trace: Trace, gpu: GpuSpec, kernel) -> tuple[MatmulTraceComparison,
                                                                        Timeline, Timeline]:
    """(comparison, recorded timeline, simulated timeline, tile by tile). `kernel`: the
    declaration named by the trace (kernels.registry; sim cannot import it)."""
    meta = trace.meta
    if not is_matmul_trace(trace):
        raise UserError("not a matmul trace (benchmarks/matmul_run.py writes those)")
    cfg = meta["config"]
    params = dict(BLOCK_M=cfg["block_m"], BLOCK_N=cfg["block_n"], BLOCK_K=cfg["block_k"],
                  GROUP_M=cfg["group_m"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    resources = (int(meta["regs"]), int(meta["smem"])) if "regs" in meta and "smem" in meta else None
    placement = RecordedPlacement(tuple(_program_sms(trace)))
    pred = predict_matmul(kernel, {d: int(meta[d]) for d in "MNK"}, gpu, params,
                          dtype=meta.get("dtype", "float16"), resources=resources,
                          placement=placement)
    recorded = timeline_of_trace(trace, pred.blocks_per_sm, gpu.sm_count).prepare()
    simulated = pred.item_timeline().prepare()
    k_tiles = pred.problem.k_tiles
    rec_whole, sim_whole = _whole_tiles(trace, k_tiles), pred.work.k_end - pred.work.k_begin == k_tiles
    sim_dur = simulated.end_us - simulated.start_us
    order = np.lexsort((pred.work.round, pred.work.tile))  # the simulated timeline's order
    event = meta.get("event_ms")
    return (MatmulTraceComparison(
        kernel=KERNELS[meta["kernel"]], prediction=pred, recorded_span_us=recorded.makespan_us,
        recorded_event_us=float(event) * 1e3 if event else None,
        recorded_tile_us=float(np.median((trace.end_us - trace.start_us)[rec_whole])),
        simulated_tile_us=float(np.median(sim_dur[sim_whole[order]])),
        recorded_last_start_us=recorded.last_dispatch_us,
        simulated_last_start_us=simulated.last_dispatch_us), recorded, simulated)


def _extra(trace: Trace) -> np.ndarray:
    cols = trace.meta.get("extra_columns") or []
    extra = np.asarray(trace.meta.get("extra") or [], dtype=np.int64)
    if not {"program", "k_begin", "k_end"} <= set(cols) or extra.shape[0] != len(trace.block):
        raise UserError("the trace lacks its per-row program and K range (meta 'extra')")
    return extra[:, [cols.index("program"), cols.index("k_begin"), cols.index("k_end")]]


def _program_sms(trace: Trace) -> list[int]:
    """The SM each program ran on, program by program."""
    program = _extra(trace)[:, 0]
    sms = np.full(int(program.max()) + 1, -1, dtype=np.int64)
    sms[program] = trace.sm
    return [int(s) for s in sms]


def _whole_tiles(trace: Trace, k_tiles: int) -> np.ndarray:
    extra = _extra(trace)
    return extra[:, 2] - extra[:, 1] == k_tiles
