"""Matrix multiplication in Triton with Hopper's Tensor Memory Accelerator (TMA): tiled, persistent
and persistent + stream-K for the last wave.

The same products as kernels/bodies/matmul.py (C = A @ B, fp16/bf16 in, fp32 accumulator, C in the
inputs' dtype), but A, B and C are reached through tensor descriptors (`TensorDescriptor`, made on
the host and passed as kernel parameters), as in Triton's tutorial 09. A descriptor load is one
TMA copy of a whole BLOCK x BLOCK box into shared memory, issued by one thread; on sm_90 the
compiler pipelines these copies (num_stages boxes in flight) and feeds wgmma straight from shared
memory, where the pointer kernels spend every thread's registers on addresses and masks. Boxes
past the matrix are filled with zeros on load and dropped on store, so there are no masks here.

* `matmul_tma_kernel`: one program per tile (tutorial 03's schedule), GROUP_M swizzled.
* `matmul_tma_persistent_kernel`: as many programs as run at once, each looping over tiles
  p, p + P, ...; `tl.range(..., flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE)` lets the
  compiler run the tile loop and the K loop as one pipeline (the next tile's loads start during
  this tile's last products) and, where Triton supports it on the GPU, give the loads and the
  products their own warps. EPILOGUE_SUBTILE stores C in two half-width boxes, halving the shared
  memory the store stages through. With STREAM_K=True the full waves go tile by tile through that
  loop and the leftover tiles' K-iterations are split evenly over all programs, exactly as the
  pointer kernel's hybrid stream-K (kernels/bodies/matmul.py: the same split, fp32 workspace,
  atomic counters and helpers), with the A and B boxes through the descriptors.

TMA needs every row of A, B and C to start on a 16-byte boundary (K and N multiples of 8 for
16-bit types) and the matrices to be contiguous in their last dimension; `tma_fits` says whether
a product qualifies, and the launchers refuse one that does not. No stamps: the pointer kernels
carry the per-tile stamps. Its declarations are in kernels/declare/matmul_problem.py.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from kernels.bodies.matmul import (DEFAULT_CONFIG, MatmulConfig, _check, _stream_k_add,
                                   _stream_k_range, _stream_k_take, _stream_k_unit, _tile_coords,
                                   stream_k_workspace, tiles)
from kernels.declare.matmul_problem import supported_loop, tma_loop
from sim.model.matmul_choice import TMA_ROW_ALIGN_BYTES, tma_fits


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------
@triton.jit
def _tma_tile(a_desc, b_desc, pid_m, pid_n, k_begin, k_end, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One tile's fp32 sum over K-iterations [k_begin, k_end): a box of A and one of B per tl.dot."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_begin, k_end):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _tma_store(c_desc, acc, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               EPILOGUE_SUBTILE: tl.constexpr):
    """C's tile through its descriptor: one box, or two half-width ones (EPILOGUE_SUBTILE)."""
    dtype = c_desc.dtype
    if EPILOGUE_SUBTILE:
        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
        left, right = tl.split(halves)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(dtype))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(dtype))
    else:
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(dtype))


@triton.jit
def matmul_tma_kernel(
    a_desc,  # A (M, K): boxes of BLOCK_M x BLOCK_K
    b_desc,  # B (K, N): boxes of BLOCK_K x BLOCK_N
    c_desc,  # C (M, N): boxes of BLOCK_M x BLOCK_N
    M, N, K,  # the matrix sizes
    BLOCK_M: tl.constexpr,  # rows of C per tile
    BLOCK_N: tl.constexpr,  # columns of C per tile
    BLOCK_K: tl.constexpr,  # depth of one K-iteration (one tl.dot)
    GROUP_M: tl.constexpr,  # rows of tiles swizzled together for L2 reuse
):
    pid_m, pid_n = _tile_coords(tl.program_id(axis=0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N),
                                GROUP_M)
    acc = _tma_tile(a_desc, b_desc, pid_m, pid_n, 0, tl.cdiv(K, BLOCK_K), BLOCK_M, BLOCK_N,
                    BLOCK_K)
    _tma_store(c_desc, acc, pid_m, pid_n, BLOCK_M, BLOCK_N, False)


@triton.jit
def matmul_tma_persistent_kernel(
    a_desc,  # A (M, K): boxes of BLOCK_M x BLOCK_K
    b_desc,  # B (K, N): boxes of BLOCK_K x BLOCK_N
    c_desc,  # C (M, N): boxes of BLOCK_M x BLOCK_N, or BLOCK_N // 2 wide (EPILOGUE_SUBTILE)
    ws_ptr,  # STREAM_K: fp32 [leftover tiles, BLOCK_M, BLOCK_N], all zeros between calls
    counts_ptr,  # STREAM_K: int32 [leftover tiles], K-iterations done per tile, zeros between calls
    M, N, K,  # the matrix sizes
    BLOCK_M: tl.constexpr,  # rows of C per tile
    BLOCK_N: tl.constexpr,  # columns of C per tile
    BLOCK_K: tl.constexpr,  # depth of one K-iteration (one tl.dot)
    GROUP_M: tl.constexpr,  # rows of tiles swizzled together for L2 reuse
    STREAM_K: tl.constexpr,  # split the leftover tiles' K-iterations over all programs
    FLATTEN: tl.constexpr,  # pipeline the tile loop and the K loop as one loop
    WARP_SPECIALIZE: tl.constexpr,  # loads and products in warps of their own
    EPILOGUE_SUBTILE: tl.constexpr,  # store C in two half-width boxes
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    pid = tl.program_id(axis=0)
    programs = tl.num_programs(axis=0)
    num_tiles = num_pid_m * num_pid_n
    if STREAM_K:
        full_tiles = (num_tiles // programs) * programs  # the full waves, tile by tile
    else:
        full_tiles = num_tiles  # every tile whole: the last wave may be almost empty
    for tile_id in tl.range(pid, full_tiles, programs,
                            flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = _tma_tile(a_desc, b_desc, pid_m, pid_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K)
        _tma_store(c_desc, acc, pid_m, pid_n, BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE)

    if STREAM_K:
        # The leftover tiles' K-iterations spread evenly over all programs: at most two units each
        it, it_end = _stream_k_range(pid, programs, num_tiles - full_tiles, k_tiles)
        while it < it_end:
            sk, k_begin, k_end = _stream_k_unit(it, it_end, k_tiles)
            pid_m, pid_n = _tile_coords(full_tiles + sk, num_pid_m, num_pid_n, GROUP_M)
            acc = _tma_tile(a_desc, b_desc, pid_m, pid_n, k_begin, k_end, BLOCK_M, BLOCK_N,
                            BLOCK_K)
            finished, ws_tile = _stream_k_add(ws_ptr, counts_ptr, acc, sk, k_begin, k_end,
                                              k_tiles, BLOCK_M, BLOCK_N)
            if finished:
                _tma_store(c_desc, _stream_k_take(ws_tile), pid_m, pid_n, BLOCK_M, BLOCK_N,
                           EPILOGUE_SUBTILE)
                tl.atomic_xchg(counts_ptr + sk, 0, sem="relaxed")
            it += k_end - k_begin


# --------------------------------------------------------------------------------------------
# Launchers
# --------------------------------------------------------------------------------------------
def _descriptors(a, b, c, config: MatmulConfig, subtile: bool = False):
    """A's, B's and C's descriptors with the tile's boxes; ValueError where TMA cannot reach."""
    _check(a, b, c)
    M, K = a.shape
    N = b.shape[1]
    if not tma_fits(M, N, K, a.element_size()):
        raise ValueError(f"TMA needs K and N multiples of "
                         f"{TMA_ROW_ALIGN_BYTES // a.element_size()}, got K={K} N={N}")
    for name, x in (("A", a), ("B", b), ("C", c)):
        if (x.stride(1) != 1 or (x.stride(0) * x.element_size()) % TMA_ROW_ALIGN_BYTES
                or x.data_ptr() % TMA_ROW_ALIGN_BYTES):
            raise ValueError(f"TMA needs {name} row-major with 16-byte aligned rows, got strides "
                             f"{tuple(x.stride())} of {x.element_size()}-byte elements")
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    return (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
            TensorDescriptor.from_tensor(c, [bm, bn // 2 if subtile else bn]))


def bind_matmul_tma(a, b, c, config: MatmulConfig = DEFAULT_CONFIG):
    """A zero-argument launch of the tiled TMA kernel: C = A @ B, one program per tile."""
    a_desc, b_desc, c_desc = _descriptors(a, b, c, config)
    M, K = a.shape
    N = b.shape[1]
    grid = (tiles(M, N, config),)
    meta = config.meta()

    def run():
        return matmul_tma_kernel[grid](a_desc, b_desc, c_desc, M, N, K, **meta)

    return run


def bind_matmul_tma_persistent(a, b, c, config: MatmulConfig = DEFAULT_CONFIG, *, programs: int,
                               stream_k: bool = False, flatten: bool | None = None,
                               warp_specialize: bool | None = None,
                               epilogue_subtile: bool | None = None):
    """A zero-argument launch of the persistent TMA kernel on `programs` programs (at most one
    per tile, except with stream_k: then all of them, with the zeroed workspace and counters it
    needs). The flags are the kernel's loop options; None: as declared for the variant at the
    config's warps (kernels/declare/matmul_problem.py tma_loop)."""
    if programs < 1:
        raise ValueError(f"programs must be at least 1, got {programs}")
    declared = tma_loop("tma_stream_k" if stream_k else "tma_persistent", config.num_warps)
    given = dict(FLATTEN=flatten, WARP_SPECIALIZE=warp_specialize,
                 EPILOGUE_SUBTILE=epilogue_subtile)
    loop = {k: declared[k] if v is None else bool(v) for k, v in given.items()}
    a_desc, b_desc, c_desc = _descriptors(a, b, c, config, loop["EPILOGUE_SUBTILE"])
    M, K = a.shape
    N = b.shape[1]
    n = tiles(M, N, config)
    ws = counts = None
    if stream_k:
        ws, counts = stream_k_workspace(n, config, programs, a.device)
    else:
        programs = min(programs, n)
    grid = (programs,)
    meta = dict(config.meta(), STREAM_K=stream_k, **loop)

    def run():
        return matmul_tma_persistent_kernel[grid](a_desc, b_desc, c_desc, ws, counts, M, N, K,
                                                  **meta)

    return run


def bind_matmul_tma_variant(a, b, c, variant: str, config: MatmulConfig, programs: int, **loop):
    """matmul_auto's launch of a TMA candidate (sim.model.matmul_choice.TMA_VARIANTS): "tma" one
    program per tile, "tma_persistent" and "tma_stream_k" on `programs` programs (`loop`: their
    flags)."""
    if variant == "tma":
        return bind_matmul_tma(a, b, c, config)
    if variant in ("tma_persistent", "tma_stream_k"):
        return bind_matmul_tma_persistent(a, b, c, config, programs=programs,
                                          stream_k=variant == "tma_stream_k", **loop)
    raise ValueError(f"not a TMA variant: {variant!r}")


class _DeclaredTma:
    """A TMA kernel as the registry launches a Triton kernel (`kernel[grid](*args, **meta)`, the
    arguments of kernels/declare/matmul_problem.py's declarations: A, B, C, then the kernel's
    own (the stream-K workspace and counters, M, N, K)): the descriptors, whose boxes are the
    launch's BLOCK sizes, are made here from A, B and C, then the kernel runs."""

    def __init__(self, kernel) -> None:
        self.kernel = kernel

    def __getitem__(self, grid):
        return lambda *args, **meta: self._launch(grid, *args, **meta)

    def run(self, *args, grid=None, **meta):  # JITFunction's spelling of a launch
        return self._launch(grid, *args, **meta)

    def compile_signature(self, args, constexprs: dict, num_warps: int):
        """(the JIT kernel, its signature, its constexprs) for the compiler without a GPU
        (kernels.offline_compile.compile.spec_request): each descriptor typed as Triton's launcher types a
        TensorDescriptor, "tensordesc<bf16[BLOCK_M, BLOCK_K]>", then the rest (stream-K's
        workspace and counters, M, N, K) as the arguments they are; the loop flags as the
        launcher gives them at `num_warps` (no warp specialisation below 8 warps)."""
        from kernels.offline_compile.toolchain import POINTER_TYPES, signature_entry

        a, _, _, *rest = args
        dtype = POINTER_TYPES[str(a.dtype).removeprefix("torch.")]
        bm, bn, bk = (int(constexprs[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        c_bn = bn // 2 if constexprs.get("EPILOGUE_SUBTILE") else bn
        boxes = ([bm, bk], [bk, bn], [bm, c_bn])
        signature = [f"tensordesc<{dtype}[{x}, {y}]>" for x, y in boxes] + \
            [signature_entry(v) for v in rest]
        return self.kernel, signature, supported_loop(constexprs, num_warps)

    def _launch(self, grid, a, b, c, *rest, **meta):
        config = MatmulConfig(meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"],
                              meta.get("GROUP_M", 8), meta.get("num_warps", 4),
                              meta.get("num_stages", 3))
        meta = supported_loop(meta, config.num_warps)  # the declared flags at fewer warps
        descs = _descriptors(a, b, c, config, bool(meta.get("EPILOGUE_SUBTILE", False)))
        return self.kernel[grid](*descs, *rest, **meta)


matmul_tma_declared = _DeclaredTma(matmul_tma_kernel)
matmul_tma_persistent_declared = _DeclaredTma(matmul_tma_persistent_kernel)
