"""Record where a real GPU puts each block, and when: the block-placement trace.

Every program of a Triton kernel (kernels/bodies/trace_kernels.py) reads its SM (``%smid``) and the
global nanosecond timer (``%globaltimer``) through inline PTX, stays resident for `spin_us` (busy,
asleep or waiting on DRAM: `wait`) or does one tile of a vector add, and stores (sm, start, end).
numba-cuda exposes neither register, hence Triton. The result is saved in sim/'s trace format
("warpscope-trace/1", source "recorded", see ``sim/traces/trace.py``), so a recorded schedule and a
simulated one load the same way and can be laid side by side. Its meta says everything a
simulation of the same launch needs (grid, warps, registers, predicted occupancy, ...).
The interpreter cannot run inline PTX: recording needs a GPU.
"""

from __future__ import annotations

import datetime
import functools
import math

import numpy as np

from sim.inputs.errors import NeedsGpu, UserError
from sim.traces.trace import MAX_TRACE_BLOCKS, Trace, write_trace

from kernels.launching.launch import LiveLaunch, Resources
from kernels.measure.timing import flush_bytes_for, summarize, time_gpu
from kernels.bodies.trace_kernels import HOLD_REGS, SLEEP_NS, WAITS

# CLI name -> meta["kernel"]; every kernel but spin is a real kernel, stamped at entry and exit
KERNELS = {"spin": "spin-trace", "add": "add-trace", "copy": "copy-trace",
           "square": "square-trace", "softmax": "softmax-trace"}
TILE_KERNELS = ("add", "copy", "square", "softmax")
ARRAYS = {"add": 3, "copy": 2, "square": 2, "softmax": 2}  # fp32 arrays each element touches
MAX_GRID = 10_000_000
MAX_ADD_ELEMENTS = 1 << 30  # three fp32 arrays of 4 GiB: far past any trace worth recording


def check_spin_args(wait: str, num_warps: int, spin_us: float, hold_regs: int = 0) -> None:
    """The wait-kernel's arguments, as one-line errors before anything touches the GPU."""
    if wait not in WAITS:
        raise UserError(f"--wait must be one of {', '.join(WAITS)}, got {wait!r}")
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise UserError(f"--warps must be 1, 2, 4, 8, 16 or 32, got {num_warps}")
    if not 0 < spin_us <= 1e6:
        raise UserError(f"--spin-us must be in (0, 1e6], got {spin_us}")
    if hold_regs not in HOLD_REGS:
        raise UserError(f"--hold-regs must be one of {', '.join(map(str, HOLD_REGS))}, "
                        f"got {hold_regs}")


def check_tile_args(kernel: str, elements: int, block_size: int, num_warps: int) -> None:
    """A real kernel's trace arguments (add, copy, square: one BLOCK_SIZE tile per program;
    softmax: rows of BLOCK_SIZE columns, one row per program), checked before any GPU work."""
    if kernel not in TILE_KERNELS:
        raise UserError(f"--kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if not 1 <= elements <= MAX_ADD_ELEMENTS:
        raise UserError(f"--elements must be 1..{MAX_ADD_ELEMENTS:,}, got {elements:,}")
    from kernels.declare.registry import get_kernel  # the Triton tile rules: a power-of-two BLOCK_SIZE, num_warps

    get_kernel("add_triton").check_block({"BLOCK_SIZE": block_size, "num_warps": num_warps})
    grid = tile_grid(kernel, elements, block_size)
    if grid > MAX_TRACE_BLOCKS:
        raise UserError(f"{grid:,} programs is more than a trace file holds ({MAX_TRACE_BLOCKS:,}): "
                        "give fewer --elements or a larger --block")
    if kernel == "softmax" and elements < block_size:
        raise UserError(f"--kernel softmax: --elements {elements:,} is less than one row of "
                        f"--block {block_size} columns")


def tile_grid(kernel: str, elements: int, block_size: int) -> int:
    """Programs of a tile kernel: one per tile (softmax: one per whole row)."""
    return elements // block_size if kernel == "softmax" else math.ceil(elements / block_size)


def check_grid(grid: int | None, waves: float | None) -> None:
    if grid is not None and waves is not None:
        raise UserError("give --grid or --waves, not both")
    if grid is not None and not 1 <= grid <= MAX_GRID:
        raise UserError(f"--grid must be 1..{MAX_GRID:,}, got {grid}")
    if waves is not None and not 0 < waves <= 1000:
        raise UserError(f"--waves must be in (0, 1000], got {waves}")


def stamp_cost(untraced, traced, reps: int, flush_bytes: int) -> dict:
    """The instrument's cost: the same launch timed plain and stamped (device events, L2
    flushed, medians), as every trace's meta records it."""
    timing = {}
    for label, run in (("untraced", untraced), ("traced", traced)):
        times = time_gpu(run, reps=reps, flush_bytes=flush_bytes)
        timing[f"{label}_median_us"] = 1e3 * summarize(times)[0]
    timing["overhead_percent"] = 100.0 * (timing["traced_median_us"]
                                          / timing["untraced_median_us"] - 1)
    timing["timing_method"] = ("CUDA events, L2 flushed before each rep, median of at least "
                               f"{reps} (kernels/measure/timing.py time_gpu)")
    return timing


def require_gpu(backend: str | None = "triton"):
    """The device as a sim GpuSpec. NeedsGpu (exit 2) where there is no GPU, or where `backend`
    ("triton", "numba"; None: any) cannot run on it here (numba-cuda's simulator, Triton's
    interpreter: neither has %smid or %globaltimer)."""
    from kernels.launching.backends import available, gpu_status
    from kernels.launching.device import detect_device

    has_gpu, why = gpu_status()
    if not has_gpu:
        raise NeedsGpu(f"recording a trace needs a GPU: {why}")
    if backend is not None:
        status = available()[backend]
        if not status.is_gpu:
            name = {"triton": "Triton", "numba": "numba-cuda"}.get(backend, backend)
            raise NeedsGpu(f"recording a trace needs {name} on the GPU: {status.reason}")
    return detect_device()[0]


def predicted_shape(gpu, grid: int, threads: int, res: Resources) -> dict:
    """sim/'s occupancy of the compiled kernel (blocks per SM, occupancy, limiter, waves)."""
    from kernels.measure.harness import model_view

    shape = model_view(gpu, LiveLaunch(lambda: None, grid, threads, None, threads // 32), res)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in shape.items()}


def grid_for_waves(gpu, waves: float, threads: int, res: Resources) -> int:
    """Blocks in `waves` full waves at the occupancy sim/ predicts (at least one block)."""
    per_sm = predicted_shape(gpu, 1, threads, res).get("blocks_per_sm") or 1
    return max(1, round(waves * gpu.sm_count * per_sm))


def trace_meta(gpu, *, kernel: str, grid: int, num_warps: int, res: Resources, command: str,
               wait: str | None, spin_us: float | None, **extra) -> dict:
    """What a simulation of the recorded launch needs, in one dict (every recorder uses it)."""
    threads = 32 * num_warps
    return {"kernel": kernel, "wait": wait, "grid": grid, "num_warps": num_warps,
            "threads_per_block": threads, "spin_us": spin_us,
            "regs_per_thread": res.regs_per_thread,
            "smem_per_block_bytes": res.smem_per_block_bytes,
            "spills": res.spills, "sm_count": gpu.sm_count, **extra,
            "timer": "%globaltimer (ns) of thread 0, relative to the earliest block start",
            "predicted": predicted_shape(gpu, grid, threads, res), "command": command,
            **_versions(), "date": datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds")}


def _versions() -> dict:
    import torch
    import triton

    return {"triton_version": str(triton.__version__), "torch_version": str(torch.__version__)}  # plain str: TorchVersion does not cross the kernel host


def trace_from_stamps(stamps: np.ndarray, gpu_name: str, meta: dict) -> Trace:
    """A Trace from the kernel's int64 [grid, 3] rows (sm, start ns, end ns)."""
    rows = np.asarray(stamps, dtype=np.int64).reshape(-1, 3)
    if (rows[:, 0] < 0).any():
        raise UserError("some programs recorded nothing: "
                        "the trace kernel did not run to completion")
    t0 = rows[:, 1].min()
    grid = len(rows)
    return Trace(source="recorded", gpu=gpu_name, block=np.arange(grid),
                 sm=rows[:, 0].astype(int), slot=np.full(grid, -1),
                 start_us=(rows[:, 1] - t0) / 1e3, end_us=(rows[:, 2] - t0) / 1e3, meta=meta)


def _resources(compiled) -> Resources:
    return Resources(int(compiled.n_regs), int(compiled.metadata.shared), int(compiled.n_spills))


@functools.lru_cache(maxsize=1)
def chase_buffer():
    """int32 next-pointers forming ONE cycle through CHASE_ENTRIES slots in random order (a
    permutation's cycles could be short enough to live in L2; one cycle cannot)."""
    import torch

    from kernels.bodies.trace_kernels import CHASE_ENTRIES

    order = torch.randperm(CHASE_ENTRIES, device="cuda")
    nxt = torch.empty_like(order)
    nxt[order] = torch.roll(order, -1)  # each slot points at the next one in `order`
    return nxt.to(torch.int32)


def compile_spin(wait: str, num_warps: int, spin_us: float, hold_regs: int = 0):
    """Compile (and run on one program) the wait kernel as record_trace launches it. Returns
    (compiled kernel, its launch arguments, its constexprs) for launching it again."""
    import torch

    from kernels.bodies.trace_kernels import held_values, placement_kernel

    # two chase entries when there is no chase: a length of 1 would be specialized away
    chase = (chase_buffer() if wait == "memory"
             else torch.zeros(2, dtype=torch.int32, device="cuda"))
    args = (int(spin_us * 1000), chase, chase.numel())
    consts = dict(WAIT=WAITS.index(wait), HELD=held_values(hold_regs, num_warps),
                  num_warps=num_warps)
    probe = torch.zeros((1, 3), dtype=torch.int64, device="cuda")
    compiled = placement_kernel[(1,)](probe, *args, **consts)
    torch.cuda.synchronize()
    return compiled, args, consts


def record_trace(grid: int | None = None, num_warps: int = 4, spin_us: float = 100.0,
                 command: str = "", *, wait: str = "spin", hold_regs: int = 0,
                 waves: float | None = None) -> Trace:
    """Launch `grid` programs of 32 x num_warps threads, each resident spin_us (waiting as `wait`
    says, holding `hold_regs` extra registers per thread); return the trace. grid=None: `waves`
    full waves at the occupancy sim/ predicts for the compiled kernel (default three)."""
    check_spin_args(wait, num_warps, spin_us, hold_regs)
    check_grid(grid, waves)
    gpu = require_gpu()
    import torch

    from kernels.bodies.trace_kernels import placement_kernel

    # compiled on one program first: the grid in waves needs its registers
    compiled, args, consts = compile_spin(wait, num_warps, spin_us, hold_regs)
    res = _resources(compiled)
    if grid is None:
        grid = grid_for_waves(gpu, 3.0 if waves is None else waves, 32 * num_warps, res)
        check_grid(grid, None)
    out = torch.full((grid, 3), -1, dtype=torch.int64, device="cuda")
    placement_kernel[(grid,)](out, *args, **consts)
    torch.cuda.synchronize()
    extra = {"hold_regs": hold_regs, "launched_by": "triton"}
    if wait == "sleep":
        extra["sleep_ns"] = SLEEP_NS
    if wait == "memory":
        extra["chase_buffer_bytes"] = args[1].numel() * args[1].element_size()
    meta = trace_meta(gpu, kernel=KERNELS["spin"], grid=grid, num_warps=num_warps, res=res,
                      command=command, wait=wait, spin_us=spin_us, **extra)
    return trace_from_stamps(out.cpu().numpy(), gpu.name, meta)


def tile_launch(kernel: str, elements: int, block_size: int, num_warps: int,
                device: str = "cuda"):
    """(launch(stamp, stamps), the output, its expected value) for one tile kernel on random data
    (device "cpu": the interpreter, unstamped only: it cannot run inline PTX)."""
    import torch

    from kernels.bodies import trace_kernels as tk

    grid = tile_grid(kernel, elements, block_size)
    x = torch.randn(elements, device=device)
    out = torch.full_like(x, float("nan"))
    opts = dict(BLOCK_SIZE=block_size, num_warps=num_warps)
    if kernel == "add":
        y = torch.randn_like(x)
        return (lambda stamp, st: tk.add_trace_kernel[(grid,)](x, y, out, st, elements,
                                                               STAMP=stamp, **opts)), out, x + y
    if kernel == "softmax":
        rows = grid
        x2, out2 = x[: rows * block_size], out[: rows * block_size]
        want = torch.softmax(x2.view(rows, block_size), dim=1).reshape(-1)
        return (lambda stamp, st: tk.softmax_trace_kernel[(grid,)](
            out2, x2, block_size, st, STAMP=stamp, **opts)), out2, want
    square = kernel == "square"
    return (lambda stamp, st: tk.unary_trace_kernel[(grid,)](
        x, out, st, elements, SQUARE=square, STAMP=stamp, **opts)), out, (x * x if square else x)


def record_tile_trace(kernel: str, elements: int, block_size: int = 1024, num_warps: int = 4,
                      command: str = "", *, overhead_reps: int = 20) -> Trace:
    """A real kernel (add, copy, square of `elements` fp32 values, one BLOCK_SIZE tile per
    program; softmax: rows of BLOCK_SIZE columns, one per program), every program stamped at
    entry and after its store; the result is checked. With overhead_reps, the same kernel is
    also timed unstamped and stamped (device events, L2 flushed, median) and the trace's meta
    says what the stamps cost."""
    check_tile_args(kernel, elements, block_size, num_warps)
    gpu = require_gpu()
    import torch

    grid = tile_grid(kernel, elements, block_size)
    launch, out, want = tile_launch(kernel, elements, block_size, num_warps)
    stamps = torch.full((grid, 3), -1, dtype=torch.int64, device="cuda")
    compiled = launch(True, stamps)
    torch.cuda.synchronize()
    ok = (torch.equal(out, want) if kernel != "softmax"
          else torch.allclose(out, want, rtol=1e-5, atol=1e-7))
    if not ok:
        raise UserError(f"the stamped {kernel} kernel gave wrong results")
    flush = flush_bytes_for(gpu.l2_bytes)
    timing = stamp_cost(lambda: launch(False, stamps), lambda: launch(True, stamps),
                        overhead_reps, flush) if overhead_reps else {}
    # Record a launch that is compiled already, with L2 full of other data first (do_bench's
    # flush), so that every block reads its tile from DRAM as a cold run would
    stamps.fill_(-1)
    torch.empty(flush, dtype=torch.int8, device="cuda").zero_()
    torch.cuda.synchronize()
    launch(True, stamps)
    torch.cuda.synchronize()
    moved = ARRAYS[kernel] * 4 * (grid * block_size if kernel == "softmax" else elements)
    meta = trace_meta(gpu, kernel=KERNELS[kernel], grid=grid, num_warps=num_warps,
                      res=_resources(compiled), command=command, wait=None, spin_us=None,
                      elements=elements, block_size=block_size, bytes_moved=moved,
                      l2_flushed=True, launched_by="triton", **timing)
    return trace_from_stamps(stamps.cpu().numpy(), gpu.name, meta)


def save(trace: Trace, path) -> None:
    write_trace(path, trace)


def summarize_trace(trace: Trace) -> dict:
    """What a recorded trace says about the schedule, next to what sim/ predicted: how many
    blocks started at once, the peak residency per SM, and the makespan against the textbook's
    ceil(waves) x block duration (spin_us, or the median block of a real kernel)."""
    resident = trace.max_resident_per_sm()
    used = np.unique(trace.sm)
    first = trace.sm[np.argsort(trace.start_us, kind="stable")][: min(16, len(trace.sm))]
    predicted = trace.meta.get("predicted") or {}
    duration = trace.meta.get("spin_us") or float(np.median(trace.end_us - trace.start_us))
    waves = predicted.get("waves")
    start0 = trace.start_us.min()
    return {"blocks": int(len(trace.block)), "sms_used": int(len(used)),
            "makespan_us": float(trace.end_us.max() - start0),
            "textbook_makespan_us": float(math.ceil(waves - 1e-9) * duration) if waves else None,
            "started_within_0_5us": int((trace.start_us - start0 <= 0.5).sum()),
            "max_resident_per_sm": int(resident.max()),
            "median_max_resident_per_sm": float(np.median(resident[used])),
            "first_blocks_sm": [int(s) for s in first],
            "predicted_blocks_per_sm": predicted.get("blocks_per_sm")}


def say_trace(trace: Trace, out) -> None:
    """The two lines `trace` prints: what the recorded schedule says, and where it went."""
    s = summarize_trace(trace)
    print(f"{s['blocks']} blocks on {s['sms_used']} SMs in {s['makespan_us']:.1f} us "
          f"(textbook {s['textbook_makespan_us'] or float('nan'):.1f}); "
          f"{s['started_within_0_5us']} started within 0.5 us; at most "
          f"{s['max_resident_per_sm']} resident per SM (predicted {s['predicted_blocks_per_sm']}); "
          f"first blocks on SMs {s['first_blocks_sm']}")
    print(f"wrote {out}")


def check_trace(trace: Trace) -> list[str]:
    """What must hold in any real trace; returns the problems (empty = fine)."""
    problems = []
    n = len(trace.block)
    if sorted(trace.block.tolist()) != list(range(n)):
        problems.append("block ids are not 0..grid-1 exactly once")
    sm_count = trace.meta.get("sm_count")
    if sm_count and ((trace.sm < 0) | (trace.sm >= sm_count)).any():
        problems.append(f"SM ids outside 0..{sm_count - 1}")
    spin = float(trace.meta.get("spin_us") or 0)  # a real kernel's blocks take what they take
    short = int(((trace.end_us - trace.start_us) < 0.9 * spin).sum())
    if short:
        problems.append(f"{short} blocks ended before spinning {spin} us")
    predicted = (trace.meta.get("predicted") or {}).get("blocks_per_sm")
    if predicted and trace.max_resident_per_sm().max() > predicted:
        problems.append(f"an SM held more blocks at once than the predicted {predicted}")
    return problems
