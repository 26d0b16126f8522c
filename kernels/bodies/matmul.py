"""Matrix multiplication in Triton: tiled, persistent, and persistent + stream-K for the last wave.

C = A @ B with A (M, K) and B (K, N) in fp16 or bf16, accumulated in fp32, C in the inputs' dtype.
Read it like Triton's tutorials 03 and 09: each kernel, then its launcher.

* `matmul_kernel` (tutorial 03): one program per BLOCK_M x BLOCK_N tile of C, tiles in GROUP_M
  swizzled order so that programs running together share rows of A and columns of B in L2.
* `matmul_persistent_kernel` (tutorial 09): as many programs as fit on the GPU at once, each
  looping over tiles. With STREAM_K=False it only saves launches: 133 tiles on 132 programs still
  leave one program with two tiles, so the second "wave" costs a whole tile's time for 1/133 of the
  work (wave quantization). With STREAM_K=True ("hybrid stream-K") the full waves go tile by tile
  and the K-iterations of the leftover tiles are spread evenly over *all* programs; partial sums
  meet in an fp32 workspace through atomic adds, and the program that completes a tile's K range
  (an atomic counter says which) reads the sum back, writes C and zeroes the workspace for the
  next call.

Every kernel can stamp, per tile (or per stream-K work unit), the SM it ran on (%smid) and the
global nanosecond timer (%globaltimer) when its K loop starts and after its store, into an int64
buffer of STAMP_COLUMNS columns: a real schedule to lay beside the simulated one. With STAMP=False
the stamping code is not compiled in. Inline PTX cannot run under TRITON_INTERPRET=1.

Their declarations (docs/KERNEL_FILES.md) and the problem's side (inputs, float64 reference,
FLOPs, bytes) are in kernels/declare/matmul_problem.py, which needs no triton.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import triton
import triton.language as tl

from kernels.bodies.trace_kernels import _globaltimer, _smid  # the per-block stamps, one definition

STAMP_COLUMNS = ("tile", "sm", "start_ns", "end_ns", "k_begin", "k_end", "program")


# --------------------------------------------------------------------------------------------
# Shared pieces: which tile, the K loop, the stamps
# --------------------------------------------------------------------------------------------
@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Tile number -> (tile row, tile column), GROUP_M tile rows at a time (for L2 reuse)."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _dot_k_range(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, pid_m, pid_n,
                 k_begin, k_end, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    """fp32 sum over K-iterations [k_begin, k_end) of one tile's A-panel x B-panel products."""
    # Rows past M and columns past N wrap around (% M, % N) instead of being masked: the loads
    # stay in bounds and the store below drops them (tutorial 03's trick).
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    k0 = k_begin * BLOCK_K
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + (k0 + offs_k[None, :]) * stride_ak
    b_ptrs = b_ptr + (k0 + offs_k[:, None]) * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_begin, k_end):
        # K is masked: the last K-iteration may run past the end of the rows of A / columns of B
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc


@triton.jit
def _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, pid_m, pid_n,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


@triton.jit
def _stream_k_range(pid, programs, leftover_tiles, k_tiles):
    """Program `pid`'s K-iterations [it, it_end) of the leftover tiles' K-iterations laid end to
    end and cut into `programs` equal ranges. A range is shorter than one tile's K (fewer
    leftover tiles than programs), so it touches at most two tiles: two work units."""
    total = leftover_tiles * k_tiles
    return pid * total // programs, (pid + 1) * total // programs


@triton.jit
def _stream_k_unit(it, it_end, k_tiles):
    """The work unit starting at iteration `it`: (leftover tile, k_begin, k_end) within it."""
    sk = it // k_tiles
    k_begin = it - sk * k_tiles
    return sk, k_begin, min(k_tiles, k_begin + it_end - it)


@triton.jit
def _stream_k_add(ws_ptr, counts_ptr, acc, sk, k_begin, k_end, k_tiles,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Add a unit's partial sum into its tile's fp32 workspace; (whether this unit completed the
    tile's K range, the workspace tile's pointers)."""
    offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    ws_tile = ws_ptr + sk * BLOCK_M * BLOCK_N + offs
    tl.atomic_add(ws_tile, acc, sem="relaxed")
    # Every thread's adds are issued before one thread publishes them (release) ...
    tl.debug_barrier()
    done = tl.atomic_add(counts_ptr + sk, k_end - k_begin, sem="acq_rel")
    return done + (k_end - k_begin) == k_tiles, ws_tile


@triton.jit
def _stream_k_take(ws_tile):
    """... and the program that completed the tile takes the sum (acquire), leaving zeros in the
    workspace for the next call (the caller zeroes the counter after its store of C)."""
    total_acc = tl.load(ws_tile, cache_modifier=".cg")  # .cg: at L2, where the atomics landed
    tl.store(ws_tile, tl.zeros_like(total_acc))
    return total_acc


@triton.jit
def _stamp(stamps_ptr, row, tile, start, k_begin, k_end, pid):
    """One row of STAMP_COLUMNS: called right after the tile's store, so `end` follows it."""
    end = _globaltimer(pid)
    out = stamps_ptr + row * 7
    tl.store(out + 0, tl.cast(tile, tl.int64))
    tl.store(out + 1, tl.cast(_smid(pid), tl.int64))
    tl.store(out + 2, start)
    tl.store(out + 3, end)
    tl.store(out + 4, tl.cast(k_begin, tl.int64))
    tl.store(out + 5, tl.cast(k_end, tl.int64))
    tl.store(out + 6, tl.cast(pid, tl.int64))


# --------------------------------------------------------------------------------------------
# The tiled kernel (tutorial 03): one program per tile of C
# --------------------------------------------------------------------------------------------
@triton.jit
def matmul_kernel(
    a_ptr,  # A, (M, K), fp16 or bf16
    b_ptr,  # B, (K, N), same dtype
    c_ptr,  # C, (M, N), written in the same dtype
    M, N, K,  # the matrix sizes
    stride_am, stride_ak,  # elements to step one row / one column of A
    stride_bk, stride_bn,  # ... of B
    stride_cm, stride_cn,  # ... of C
    stamps_ptr,  # int64 [tiles, 7] (STAMP_COLUMNS) when STAMP, else unused (None)
    BLOCK_M: tl.constexpr,  # rows of C per tile
    BLOCK_N: tl.constexpr,  # columns of C per tile
    BLOCK_K: tl.constexpr,  # depth of one K-iteration (one tl.dot)
    GROUP_M: tl.constexpr,  # rows of tiles swizzled together for L2 reuse
    STAMP: tl.constexpr,  # record (tile, sm, start, end, ...) per tile
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    pid_m, pid_n = _tile_coords(pid, num_pid_m, num_pid_n, GROUP_M)
    if STAMP:
        start = _globaltimer(pid)
    acc = _dot_k_range(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                       pid_m, pid_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K)
    _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)
    if STAMP:
        _stamp(stamps_ptr, pid, pid, start, 0, k_tiles, pid)


# --------------------------------------------------------------------------------------------
# The persistent kernel (tutorial 09), with hybrid stream-K for the last, partial wave
# --------------------------------------------------------------------------------------------
@triton.jit
def matmul_persistent_kernel(
    a_ptr,  # A, (M, K), fp16 or bf16
    b_ptr,  # B, (K, N), same dtype
    c_ptr,  # C, (M, N), written in the same dtype
    ws_ptr,  # STREAM_K: fp32 [leftover tiles, BLOCK_M, BLOCK_N], all zeros between calls
    counts_ptr,  # STREAM_K: int32 [leftover tiles], K-iterations done per tile, zeros between calls
    M, N, K,  # the matrix sizes
    stride_am, stride_ak,  # elements to step one row / one column of A
    stride_bk, stride_bn,  # ... of B
    stride_cm, stride_cn,  # ... of C
    stamps_ptr,  # int64 [rows, 7] (STAMP_COLUMNS) when STAMP, else unused (None)
    BLOCK_M: tl.constexpr,  # rows of C per tile
    BLOCK_N: tl.constexpr,  # columns of C per tile
    BLOCK_K: tl.constexpr,  # depth of one K-iteration (one tl.dot)
    GROUP_M: tl.constexpr,  # rows of tiles swizzled together for L2 reuse
    STREAM_K: tl.constexpr,  # split the leftover tiles' K-iterations over all programs
    STAMP: tl.constexpr,  # record one row per tile (full waves) and per stream-K work unit
):
    pid = tl.program_id(axis=0)
    programs = tl.num_programs(axis=0)  # the launch's grid: SMs x programs per SM
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    if STREAM_K:
        full_tiles = (num_tiles // programs) * programs  # the full waves, tile by tile
    else:
        full_tiles = num_tiles  # every tile whole: the last wave may be almost empty

    # Full waves: program p takes tiles p, p + programs, p + 2 * programs, ...
    for tile_id in range(pid, full_tiles, programs):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        if STAMP:
            start = _globaltimer(pid)
        acc = _dot_k_range(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                           pid_m, pid_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K)
        _store_tile(c_ptr, acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BLOCK_M, BLOCK_N)
        if STAMP:
            _stamp(stamps_ptr, tile_id, tile_id, start, 0, k_tiles, pid)

    if STREAM_K:
        # The leftover tiles' K-iterations spread evenly over all programs (_stream_k_range)
        it, it_end = _stream_k_range(pid, programs, num_tiles - full_tiles, k_tiles)
        unit = 0
        while it < it_end:
            sk, k_begin, k_end = _stream_k_unit(it, it_end, k_tiles)
            tile_id = full_tiles + sk
            pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
            if STAMP:
                start = _globaltimer(pid)
            acc = _dot_k_range(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                               pid_m, pid_n, k_begin, k_end, BLOCK_M, BLOCK_N, BLOCK_K)
            finished, ws_tile = _stream_k_add(ws_ptr, counts_ptr, acc, sk, k_begin, k_end,
                                              k_tiles, BLOCK_M, BLOCK_N)
            if finished:
                _store_tile(c_ptr, _stream_k_take(ws_tile), M, N, stride_cm, stride_cn, pid_m,
                            pid_n, BLOCK_M, BLOCK_N)
                tl.atomic_xchg(counts_ptr + sk, 0, sem="relaxed")
            if STAMP:
                _stamp(stamps_ptr, full_tiles + 2 * pid + unit, tile_id, start, k_begin, k_end, pid)
            it += k_end - k_begin
            unit += 1


# --------------------------------------------------------------------------------------------
# Launchers
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MatmulConfig:
    """The block parameters of one compiled variant (tutorial 03's triton.Config, spelled out)."""

    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    group_m: int = 8
    num_warps: int = 8
    num_stages: int = 3

    def meta(self) -> dict:
        """Keyword arguments of a launch: the constexprs and the compiler options."""
        return dict(BLOCK_M=self.block_m, BLOCK_N=self.block_n, BLOCK_K=self.block_k,
                    GROUP_M=self.group_m, num_warps=self.num_warps, num_stages=self.num_stages)

    @property
    def label(self) -> str:
        return (f"{self.block_m}x{self.block_n}x{self.block_k} g{self.group_m} "
                f"w{self.num_warps} s{self.num_stages}")

    def to_dict(self) -> dict:
        return asdict(self)


# Tutorial 03's configurations for Hopper-class GPUs (the first is its usual winner there).
HOPPER_CONFIGS = (
    MatmulConfig(128, 256, 64, 8, 8, 3),
    MatmulConfig(128, 128, 64, 8, 8, 4),
    MatmulConfig(128, 128, 64, 8, 4, 3),
    MatmulConfig(256, 128, 64, 8, 8, 3),
    MatmulConfig(64, 256, 32, 8, 4, 4),
)
DEFAULT_CONFIG = HOPPER_CONFIGS[0]


def tiles(M: int, N: int, config: MatmulConfig) -> int:
    """Tiles of C: programs of the tiled kernel, work items of the persistent ones."""
    return triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n)


def stream_k_split(M: int, N: int, K: int, config: MatmulConfig, programs: int) -> dict:
    """How the hybrid stream-K kernel divides the work among `programs` (mirrors the kernel)."""
    n = tiles(M, N, config)
    full = n // programs * programs
    k_tiles = triton.cdiv(K, config.block_k)
    return {"tiles": n, "full_wave_tiles": full, "leftover_tiles": n - full, "k_tiles": k_tiles,
            "leftover_iterations_per_program": (n - full) * k_tiles / programs}


def stamp_rows(M: int, N: int, config: MatmulConfig, programs: int | None = None,
               stream_k: bool = False) -> int:
    """Rows of the stamp buffer: one per tile, or for stream-K full tiles + 2 per program."""
    n = tiles(M, N, config)
    if not stream_k:
        return n
    return n // programs * programs + 2 * programs


def _check(a, b, c) -> None:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    if c.shape != (a.shape[0], b.shape[1]) or a.dtype != b.dtype:
        raise ValueError("C must be (M, N) and A, B of one dtype")


def stream_k_workspace(n_tiles: int, config: MatmulConfig, programs: int, device):
    """Stream-K's zeroed fp32 workspace (one BLOCK_M x BLOCK_N tile per leftover tile) and its
    int32 counters (K-iterations done per leftover tile); the kernels leave them zeroed."""
    import torch

    leftover = max(n_tiles - n_tiles // programs * programs, 1)
    return (torch.zeros(leftover * config.block_m * config.block_n, dtype=torch.float32,
                        device=device),
            torch.zeros(leftover, dtype=torch.int32, device=device))


def bind_matmul(a, b, c, config: MatmulConfig = DEFAULT_CONFIG, stamps=None):
    """A zero-argument launch of the tiled kernel: C = A @ B (stamps: int64 [tiles, 7] or None)."""
    _check(a, b, c)
    M, K = a.shape
    N = b.shape[1]
    grid = (tiles(M, N, config),)
    meta = config.meta()

    def run():
        return matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                   b.stride(1), c.stride(0), c.stride(1), stamps,
                                   STAMP=stamps is not None, **meta)

    return run


def bind_matmul_persistent(a, b, c, config: MatmulConfig = DEFAULT_CONFIG, *, programs: int,
                           stream_k: bool = False, stamps=None):
    """A zero-argument launch of the persistent kernel on `programs` programs (SMs x programs per
    SM for one full wave). stream_k: allocate the zeroed workspace and counters it needs."""
    _check(a, b, c)
    M, K = a.shape
    N = b.shape[1]
    if programs < 1:
        raise ValueError(f"programs must be at least 1, got {programs}")
    n = tiles(M, N, config)
    ws = counts = None
    if stream_k:
        ws, counts = stream_k_workspace(n, config, programs, a.device)
    else:
        programs = min(programs, n)  # no idle programs in the plain loop
    grid = (programs,)
    meta = config.meta()

    def run():
        return matmul_persistent_kernel[grid](
            a, b, c, ws, counts, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), stamps, STREAM_K=stream_k, STAMP=stamps is not None, **meta)

    return run


def bind_matmul_auto(a, b, c, gpu, dtype: str | None = None, choice=None):
    """A zero-argument launch of what matmul_auto chose for this product on `gpu` (a GpuSpec):
    the variant (this file's kernels or kernels/bodies/matmul_tma.py's) and tile the launch model predicts fastest (kernels.declare.registry.matmul_choice), no
    autotuning run. The choice is made here, once (or passed in, made for these sizes);
    `run.choice` says what and why."""
    from kernels.declare.registry import matmul_choice

    _check(a, b, c)
    dtype = dtype or str(a.dtype).removeprefix("torch.")
    dims = dict(M=a.shape[0], N=b.shape[1], K=a.shape[1])
    if choice is None or choice.dims != dims:
        choice = matmul_choice(dims, gpu, dtype)
    run = bind_candidate(a, b, c, choice.chosen)
    run.choice = choice
    return run


def bind_candidate(a, b, c, candidate):
    """A zero-argument launch of one of matmul_auto's candidates (sim.model.matmul_choice.
    Candidate: its variant, tile and programs) on these arrays, as matmul_auto launches it."""
    p = candidate.params
    config = MatmulConfig(p["BLOCK_M"], p["BLOCK_N"], p["BLOCK_K"], p["GROUP_M"], p["num_warps"],
                          p["num_stages"])
    if candidate.variant == "tiled":
        return bind_matmul(a, b, c, config)
    if candidate.variant in ("persistent", "stream_k"):
        return bind_matmul_persistent(a, b, c, config, programs=candidate.programs,
                                      stream_k=candidate.variant == "stream_k")
    from kernels.bodies.matmul_tma import bind_matmul_tma_variant

    return bind_matmul_tma_variant(a, b, c, candidate.variant, config, candidate.programs)


class _AutoKernel:
    """matmul_auto as the registry launches a Triton kernel (`kernel[grid](*args, **meta)`): the
    choice is made for the arrays' sizes and the device's SM count, bound once per set of arrays
    (the stream-K workspace is allocated then), and run."""

    def __init__(self) -> None:
        self._bound: dict = {}

    def __getitem__(self, grid):
        return self._launch

    def run(self, *args, grid=None, **meta):  # JITFunction's spelling of a launch
        return self._launch(*args, **meta)

    def _launch(self, a, b, c, _ws, _counts, M, N, K, *_rest, **_meta):
        import torch

        from kernels.declare.registry import auto_gpu

        key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K, a.dtype)
        run = self._bound.get(key)
        if run is None:
            sms = (torch.cuda.get_device_properties(a.device).multi_processor_count
                   if a.is_cuda else 4)  # 4: the simulator's SMs (kernels.measure.harness)
            if len(self._bound) >= 8:
                self._bound.clear()
            run = self._bound[key] = bind_matmul_auto(a, b, c, auto_gpu(sms))
        run()


matmul_auto_kernel = _AutoKernel()


def matmul(a, b, config: MatmulConfig = DEFAULT_CONFIG):
    """C = A @ B with the tiled kernel."""
    import torch

    c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    bind_matmul(a, b, c, config)()
    return c


def matmul_persistent(a, b, config: MatmulConfig = DEFAULT_CONFIG, *, programs: int,
                      stream_k: bool = False):
    """C = A @ B with the persistent kernel (stream_k=True: hybrid stream-K)."""
    import torch

    c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    bind_matmul_persistent(a, b, c, config, programs=programs, stream_k=stream_k)()
    return c


