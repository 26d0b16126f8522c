"""Record where a real GPU puts each block, and when: the block-placement trace.

Every program of a Triton kernel reads its SM (``%smid``) and the global nanosecond timer
(``%globaltimer``) through inline PTX, spins until `spin_us` have passed, and stores
(sm, start, end). numba-cuda exposes neither register, hence Triton. The result is saved in
sim/'s trace format ("warpscope-trace/1", source "recorded", see ``sim/trace.py``), so a recorded
schedule and a simulated one load the same way and can be laid side by side.
The interpreter cannot run inline PTX: recording needs a GPU.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from sim.errors import UserError
from sim.trace import Trace, save_trace

from .launch import Resources


@triton.jit
def _smid(dummy):
    # The SM this program runs on. A dummy operand (the program id) gives the asm a shape.
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [dummy],
                                     dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _globaltimer(dummy):
    # The GPU's global timer in ns; is_pure=False so every read is a fresh read.
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [dummy],
                                     dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def placement_kernel(
    out_ptr,  # int64 [grid, 3]: sm, start ns, end ns per program
    spin_ns,  # how long each program keeps its SM busy
):
    pid = tl.program_id(axis=0)
    start = _globaltimer(pid)
    now = start
    while now - start < spin_ns:
        now = _globaltimer(pid)
    sm = _smid(pid)
    tl.store(out_ptr + pid * 3 + 0, sm.to(tl.int64))
    tl.store(out_ptr + pid * 3 + 1, start)
    tl.store(out_ptr + pid * 3 + 2, now)


def record_trace(grid: int | None = None, num_warps: int = 4, spin_us: float = 100.0,
                 command: str = "") -> Trace:
    """Launch `grid` programs of 32 x num_warps threads, each spinning spin_us; return the trace.
    grid=None: three full waves at the occupancy sim/ predicts from the compiled kernel."""
    import torch

    from .backends import available, gpu_status
    from .device import detect_device
    from .harness import predict
    from .launch import Launch

    has_gpu, why = gpu_status()
    if not has_gpu:
        raise UserError(f"recording a trace needs a GPU: {why}")
    status = available()["triton"]
    if not status.is_gpu:
        raise UserError(f"recording a trace needs Triton on the GPU: {status.reason}")
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise UserError(f"--warps must be 1, 2, 4, 8, 16 or 32, got {num_warps}")
    if not 0 < spin_us <= 1e6:
        raise UserError(f"--spin-us must be in (0, 1e6], got {spin_us}")
    gpu, _ = detect_device()
    spin_ns = int(spin_us * 1000)
    # compile on one program first (same arguments' specialization): the default grid needs its
    # registers
    probe = torch.zeros((1, 3), dtype=torch.int64, device="cuda")
    ck = placement_kernel[(1,)](probe, spin_ns, num_warps=num_warps)
    res = Resources(int(ck.n_regs), int(ck.metadata.shared), int(ck.n_spills))
    threads = 32 * num_warps
    shape = predict(gpu, Launch(lambda: None, 1, threads, None, num_warps), res)
    if grid is None:
        grid = 3 * gpu.sm_count * max(1, shape.get("blocks_per_sm") or 1)
    if not 1 <= grid <= 10_000_000:
        raise UserError(f"--grid must be 1..10,000,000, got {grid}")
    out = torch.full((grid, 3), -1, dtype=torch.int64, device="cuda")
    placement_kernel[(grid,)](out, spin_ns, num_warps=num_warps)
    torch.cuda.synchronize()
    rows = out.cpu().numpy()
    if (rows[:, 0] < 0).any():
        raise UserError("some programs recorded nothing: "
                        "the trace kernel did not run to completion")
    t0 = rows[:, 1].min()
    shape = predict(gpu, Launch(lambda: None, grid, threads, None, num_warps), res)
    meta = {"command": command, "grid": grid, "num_warps": num_warps, "threads_per_block": threads,
            "spin_us": spin_us, "regs_per_thread": res.regs_per_thread,
            "smem_per_block_bytes": res.smem_per_block_bytes, "sm_count": gpu.sm_count,
            "timer": "%globaltimer (ns), relative to the earliest block start",
            "predicted": {k: (list(v) if isinstance(v, tuple) else v) for k, v in shape.items()}}
    return Trace(source="recorded", gpu=gpu.name, block=np.arange(grid),
                 sm=rows[:, 0].astype(int), slot=np.full(grid, -1),
                 start_us=(rows[:, 1] - t0) / 1e3, end_us=(rows[:, 2] - t0) / 1e3, meta=meta)


def save(trace: Trace, path) -> None:
    records = zip(trace.block, trace.sm, trace.slot, trace.start_us, trace.end_us)
    save_trace(path, source=trace.source, gpu=trace.gpu, records=records, meta=trace.meta)


def summarize_trace(trace: Trace) -> dict:
    """What a recorded trace says about the schedule, next to what sim/ predicted."""
    resident = trace.max_resident_per_sm()
    used = np.unique(trace.sm)
    first = trace.sm[np.argsort(trace.start_us, kind="stable")][: min(16, len(trace.sm))]
    return {"blocks": int(len(trace.block)), "sms_used": int(len(used)),
            "makespan_us": float(trace.end_us.max() - trace.start_us.min()),
            "max_resident_per_sm": int(resident.max()),
            "median_max_resident_per_sm": float(np.median(resident[used])),
            "first_blocks_sm": [int(s) for s in first],
            "predicted_blocks_per_sm": (trace.meta.get("predicted") or {}).get("blocks_per_sm")}


def check_trace(trace: Trace) -> list[str]:
    """What must hold in any real trace; returns the problems (empty = fine)."""
    problems = []
    n = len(trace.block)
    if sorted(trace.block.tolist()) != list(range(n)):
        problems.append("block ids are not 0..grid-1 exactly once")
    sm_count = trace.meta.get("sm_count")
    if sm_count and ((trace.sm < 0) | (trace.sm >= sm_count)).any():
        problems.append(f"SM ids outside 0..{sm_count - 1}")
    spin = float(trace.meta.get("spin_us", 0))
    short = int(((trace.end_us - trace.start_us) < 0.9 * spin).sum())
    if short:
        problems.append(f"{short} blocks ended before spinning {spin} us")
    predicted = (trace.meta.get("predicted") or {}).get("blocks_per_sm")
    if predicted and trace.max_resident_per_sm().max() > predicted:
        problems.append(f"an SM held more blocks at once than the predicted {predicted}")
    return problems
