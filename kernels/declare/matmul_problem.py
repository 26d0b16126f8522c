"""Matrix multiplication, the problem's side: inputs, the float64 reference and its tolerance,
FLOPs and bytes, and the declarations of the Triton kernels in kernels/bodies/matmul.py and
kernels/bodies/matmul_tma.py (docs/KERNEL_FILES.md). numpy only, so the registry, the simulator and the window can read it
without triton; each kernel is named as "kernels.bodies.matmul:<function>" and imported when launched.
"""

from __future__ import annotations

import numpy as np

from kernels.declare.spec import cdiv
from sim.model.matmul_choice import (CANDIDATE_TILES, TMA_MIN_CC, candidate_tiles,
                                     tile_params)

KERNELS = "kernels.bodies.matmul"
TMA_KERNELS = "kernels.bodies.matmul_tma"


# --------------------------------------------------------------------------------------------
# Truth and cost
# --------------------------------------------------------------------------------------------
def reference(a, b) -> np.ndarray:
    """A @ B in float64 on the CPU, from the (fp16/bf16-rounded) inputs themselves."""
    def f64(x):
        if hasattr(x, "detach"):  # a torch tensor (numpy has no bfloat16)
            x = x.detach().float().cpu().numpy()
        return np.asarray(x, dtype=np.float64)
    return f64(a) @ f64(b)


def relative_error(out, ref: np.ndarray) -> float:
    """||out - ref||_F / ||ref||_F; NaN stays NaN (and fails any tolerance)."""
    if hasattr(out, "detach"):
        out = out.detach().float().cpu().numpy()
    out = np.asarray(out, dtype=np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


# Relative Frobenius error allowed against the float64 reference: fp16 keeps 11 significant bits,
# bf16 8 (rounding of C alone: ~2^-12 and ~2^-9 relative); fp32 runs as tf32 in tl.dot on a GPU.
TOLERANCE = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 5e-3}


def matmul_flops(M: int, N: int, K: int) -> int:
    """One multiply and one add per (m, n, k)."""
    return 2 * M * N * K


def matmul_bytes(M: int, N: int, K: int, itemsize: int = 2) -> int:
    """The fewest bytes through DRAM: A and B read once, C written once."""
    return itemsize * (M * K + K * N + M * N)


# --------------------------------------------------------------------------------------------
# Declarations (docs/KERNEL_FILES.md). fp16 inputs: numpy has no bfloat16.
# --------------------------------------------------------------------------------------------
def _inputs(M, N, K):
    return [np.random.randn(M, K).astype(np.float16), np.random.randn(K, N).astype(np.float16)]


def _ws_inputs(M, N, K):
    # A, B, then the stream-K workspace and counters, zeroed, large enough for any tile up to
    # 256 x 256 and at least 16 x 16 (leftover tiles < all tiles).
    return _inputs(M, N, K) + [np.zeros((M + 255) * (N + 255), dtype=np.float32),
                               np.zeros(cdiv(M, 16) * cdiv(N, 16), dtype=np.int32)]


def _strides(M, N, K):
    return (K, 1, N, 1, N, 1)  # row-major A, B and C


_BLOCK = tile_params(CANDIDATE_TILES[0])  # tutorial 03's Hopper winner, 128x256x64 w8 s3
# The TMA persistent kernel's loop options (kernels/bodies/matmul_tma.py) per variant, as
# declared and as its launchers' defaults (tma_loop), C stored in one box. Both variants: the
# tile loop and the K loop pipelined as one (flatten), no warp specialisation. On the H200, WS
# ran 0.996-1.026 x at 8 of 9 sizes and flatten=False 0.950 x (median over 59 sizes); stream-K
# with flatten=False + WS gained nothing one could measure on two H200s (0.994 x over 11 sizes,
# benchmarks/RESULTS.md).
TMA_LOOP = {"tma_persistent": dict(FLATTEN=True, WARP_SPECIALIZE=False, EPILOGUE_SUBTILE=False),
            "tma_stream_k": dict(FLATTEN=True, WARP_SPECIALIZE=False, EPILOGUE_SUBTILE=False)}
# Triton's NVGPUWarpSpecialization pass fails ("PassManager::run failed") on 4-warp programs of
# this kernel for sm_90: 3.6.0 on the H200 (128x128x64 w4 s4) and 3.7.1 here (64x128x64
# w4 s4, stream-K): a launch with fewer warps drops warp_specialize
WARP_SPECIALIZE_MIN_WARPS = 8


def tma_loop(variant: str, num_warps: int) -> dict:
    """The declared loop flags (FLATTEN, WARP_SPECIALIZE, EPILOGUE_SUBTILE) of a launch of TMA
    variant `variant` ("tma_persistent" or "tma_stream_k") with `num_warps` warps."""
    return supported_loop(TMA_LOOP[variant], num_warps)


def supported_loop(flags: dict, num_warps: int) -> dict:
    """`flags` as the compiler can take them at `num_warps`: no warp specialisation below
    WARP_SPECIALIZE_MIN_WARPS."""
    if int(num_warps) < WARP_SPECIALIZE_MIN_WARPS and flags.get("WARP_SPECIALIZE"):
        return {**flags, "WARP_SPECIALIZE": False}
    return dict(flags)


_COMMON = dict(
    output=lambda a, *_, M, N: np.empty((M, N), dtype=a.dtype),
    flops=matmul_flops,
    bytes=lambda M, N, K: matmul_bytes(M, N, K),
    reference=lambda a, b, *_: reference(a, b),
    rtol=1e-2, atol=1e-2,
    peer=lambda torch, a, b, *_: torch.matmul(a, b),
    dims=lambda n: dict(M=n, N=n, K=n),
    check_sizes=[64, 100, 256],
    group="matmul",
)

MATMUL = [
    dict(kernel=f"{KERNELS}:matmul_kernel", backend="triton", name="matmul_tiled", title="Matmul, one program per tile",
         description="Tutorial 03: one program per BLOCK_M x BLOCK_N tile; the last wave may be "
                     "nearly empty (wave quantization).",
         inputs=_inputs,
         args=lambda a, b, out, M, N, K: (a, b, out, M, N, K, *_strides(M, N, K), None),
         grid=lambda M, N, BLOCK_M, BLOCK_N: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),
         block=dict(_BLOCK), constants=dict(STAMP=False), **_COMMON),
    dict(kernel=f"{KERNELS}:matmul_persistent_kernel", backend="triton", name="matmul_persistent",
         title="Matmul, persistent (one program per SM)",
         description="Tutorial 09: one program per SM loops over the tiles; saves launches, "
                     "not the quantization of the last wave.",
         inputs=_inputs,
         args=lambda a, b, out, M, N, K: (a, b, out, None, None, M, N, K, *_strides(M, N, K),
                                          None),
         grid=lambda M, N, BLOCK_M, BLOCK_N, sm_count: min(
             sm_count, cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)),
         block=dict(_BLOCK), constants=dict(STREAM_K=False, STAMP=False), **_COMMON),
    dict(kernel=f"{KERNELS}:matmul_persistent_kernel", backend="triton", name="matmul_stream_k",
         title="Matmul, persistent + stream-K last wave",
         description="Full waves tile by tile; the leftover tiles' K-iterations split evenly over "
                     "all programs, summed with fp32 atomics: no nearly empty last wave.",
         inputs=_ws_inputs,
         args=lambda a, b, ws, counts, out, M, N, K: (a, b, out, ws, counts, M, N, K,
                                                      *_strides(M, N, K), None),
         grid=lambda sm_count: sm_count,
         block=dict(_BLOCK), constants=dict(STREAM_K=True, STAMP=False), **_COMMON),
    # The TMA kernels take descriptors, made from A, B, C and the launch's BLOCK sizes by the
    # declared wrapper; TMA needs K and N multiples of 8 (16-byte rows), hence their check sizes.
    dict(kernel=f"{TMA_KERNELS}:matmul_tma_declared", backend="triton", name="matmul_tma",
         title="Matmul, TMA, one program per tile",
         description="Tiled, with A, B and C through Hopper tensor descriptors (TMA boxes into "
                     "shared memory, no address arithmetic); the schedule of matmul_tiled.",
         inputs=_inputs, args=lambda a, b, out, M, N, K: (a, b, out, M, N, K),
         grid=lambda M, N, BLOCK_M, BLOCK_N: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),
         block=tile_params(candidate_tiles("tma")[0]), min_cc=TMA_MIN_CC,  # its own stages
         **{**_COMMON, "check_sizes": [64, 104, 256]}),
    dict(kernel=f"{TMA_KERNELS}:matmul_tma_persistent_declared", backend="triton",
         name="matmul_tma_persistent", title="Matmul, TMA, persistent (one program per SM)",
         description="Tutorial 09's TMA persistent loop: one program per SM over the tiles, the "
                     "tile and K loops pipelined as one (flatten); the schedule of "
                     "matmul_persistent.",
         inputs=_inputs, args=lambda a, b, out, M, N, K: (a, b, out, None, None, M, N, K),
         grid=lambda M, N, BLOCK_M, BLOCK_N, sm_count: min(
             sm_count, cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)),
         block=dict(_BLOCK), constants=dict(TMA_LOOP["tma_persistent"], STREAM_K=False),
         min_cc=TMA_MIN_CC,
         **{**_COMMON, "check_sizes": [64, 104, 256]}),
    dict(kernel=f"{TMA_KERNELS}:matmul_tma_persistent_declared", backend="triton",
         name="matmul_tma_stream_k", title="Matmul, TMA, persistent + stream-K last wave",
         description="matmul_stream_k's schedule (full waves tile by tile, the leftover tiles' "
                     "K-iterations split evenly over all programs, fp32 atomics) with A, B and C "
                     "through Hopper tensor descriptors.",
         inputs=_ws_inputs,
         args=lambda a, b, ws, counts, out, M, N, K: (a, b, out, ws, counts, M, N, K),
         grid=lambda sm_count: sm_count,
         block=dict(_BLOCK), constants=dict(TMA_LOOP["tma_stream_k"], STREAM_K=True),
         min_cc=TMA_MIN_CC,
         **{**_COMMON, "check_sizes": [64, 104, 256]}),
    dict(kernel=f"{KERNELS}:matmul_auto_kernel", backend="triton", name="matmul_auto",
         title="Matmul, auto (variant and tile chosen by the model)",
         description="Tiled, persistent, stream-K, TMA tiled, TMA persistent or TMA stream-K, "
                     "and one of "
                     "three tiles: whichever the launch model predicts fastest for these sizes on this GPU, with no autotuning run "
                     "(sim/model/matmul_choice.py; `explain --kernel matmul_auto` says why).",
         inputs=_ws_inputs,
         args=lambda a, b, ws, counts, out, M, N, K: (a, b, out, ws, counts, M, N, K,
                                                      *_strides(M, N, K), None),
         grid=lambda M, N, K, sm_count: _auto_programs(M, N, K, sm_count),
         block=dict(num_warps=8), **_COMMON),
]


# matmul_auto's candidates: variant (sim.model.matmul_choice.VARIANTS) -> its declaration's name
AUTO_VARIANTS = {"tiled": "matmul_tiled", "persistent": "matmul_persistent",
                 "stream_k": "matmul_stream_k", "tma": "matmul_tma",
                 "tma_persistent": "matmul_tma_persistent", "tma_stream_k": "matmul_tma_stream_k"}


def _auto_programs(M, N, K, sm_count):
    """matmul_auto's grid: the programs of the candidate it chose (kernels.declare.registry)."""
    from kernels.declare.registry import auto_gpu, matmul_choice

    return matmul_choice(dict(M=M, N=N, K=K), auto_gpu(sm_count)).chosen.programs
