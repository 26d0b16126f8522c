"""Compile the TMA matmul kernels (kernels/bodies/matmul_tma.py) for sm_90 without a GPU.

    python tests/kernels/matmul_tma_compile.py        # TRITON_INTERPRET unset

Host-side tensor descriptors are specialized as Triton's launcher specializes a TensorDescriptor
argument: "tensordesc<dtype[box]>". Prints one JSON object per configuration: registers, shared
memory, spills (tests/kernels/matmul_compile.py's cuobjdump reading), whether the PTX holds wgmma
and TMA copies (cp.async.bulk.tensor) and whether the TTGIR was warp-specialised. A configuration
that fails prints its error; tests/kernels/test_matmul_tma.py says which must compile.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# (kernel, (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages), loop flags, must compile)
CONFIGS = (
    ("matmul_tma_kernel", (128, 256, 64, 8, 8, 3), {}, True),
    ("matmul_tma_kernel", (128, 256, 64, 8, 8, 4), {}, True),  # matmul_auto's (candidate_tiles)
    ("matmul_tma_kernel", (64, 128, 64, 8, 4, 4), {}, True),
    ("matmul_tma_persistent_kernel", (128, 256, 64, 8, 8, 3), dict(FLATTEN=True), True),
    ("matmul_tma_persistent_kernel", (128, 256, 64, 8, 8, 3),
     dict(FLATTEN=False, EPILOGUE_SUBTILE=True), True),
    ("matmul_tma_persistent_kernel", (128, 256, 64, 8, 8, 3),
     dict(FLATTEN=False, WARP_SPECIALIZE=True), True),
    # TMA stream-K (the leftover tiles' K split over the programs, fp32 atomics) at the three
    # matmul_auto tiles, with its declared loop flags (no warp specialisation at w4: tma_loop)
    ("matmul_tma_persistent_kernel", (128, 256, 64, 8, 8, 3), dict(STREAM_K=True), True),
    ("matmul_tma_persistent_kernel", (128, 128, 64, 8, 8, 4), dict(STREAM_K=True), True),
    ("matmul_tma_persistent_kernel", (64, 128, 64, 8, 4, 4), dict(STREAM_K=True), True),
    # Triton 3.7.1's NVGPUWarpSpecialization pass rejects this one for sm_90 (recorded, not required)
    ("matmul_tma_persistent_kernel", (128, 128, 64, 8, 4, 4),
     dict(FLATTEN=False, WARP_SPECIALIZE=True), False),
)


def compile_config(name: str, tile: tuple, loop: dict, dtype: str = "bf16") -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernels.bodies import matmul_tma as mt
    from kernels.declare.matmul_problem import tma_loop
    from matmul_compile import _res_usage

    bm, bn, bk, gm, warps, stages = tile
    kernel = getattr(mt, name)
    constants = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm)
    persistent = kernel is mt.matmul_tma_persistent_kernel
    if persistent:
        declared = tma_loop("tma_stream_k" if loop.get("STREAM_K") else "tma_persistent", warps)
        constants.update({**declared, "STREAM_K": False, **loop})  # the variant's, then `loop`
    c_box = bn // 2 if constants.get("EPILOGUE_SUBTILE") else bn
    signature = {"a_desc": f"tensordesc<{dtype}[{bm}, {bk}]>",
                 "b_desc": f"tensordesc<{dtype}[{bk}, {bn}]>",
                 "c_desc": f"tensordesc<{dtype}[{bm}, {c_box}]>"}
    if persistent and constants["STREAM_K"]:  # the stream-K workspace and counters
        signature.update(ws_ptr="*fp32", counts_ptr="*i32")
    elif persistent:  # unused: None, a constexpr, as the launcher passes them
        signature.update(ws_ptr="constexpr", counts_ptr="constexpr")
        constants.update(ws_ptr=None, counts_ptr=None)
    first = len(signature)  # M's position
    signature.update(M="i32", N="i32", K="i32")
    signature.update({k: "constexpr" for k in constants if k not in signature})
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(first, first + 3)}  # M, N, K
    t0 = time.time()
    ck = triton.compile(ASTSource(fn=kernel, signature=signature, constexprs=constants, attrs=attrs),
                        target=GPUTarget("cuda", 90, 32),
                        options={"num_warps": warps, "num_stages": stages})
    ptx = ck.asm["ptx"]
    return {"kernel": name, "tile": list(tile), "loop": loop, "triton": triton.__version__,
            "compile_s": round(time.time() - t0, 2), "shared_metadata": ck.metadata.shared,
            **_res_usage(ck.asm["cubin"]), "wgmma": "wgmma.mma_async" in ptx,
            "tma": "cp.async.bulk.tensor" in ptx, "atomics": bool(re.search(r"\b(red|atom)\.", ptx)),
            "warp_specialized": "ttg.warp_specialize" in ck.asm["ttgir"]}


def main() -> int:
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        print("unset TRITON_INTERPRET: the interpreter cannot compile", file=sys.stderr)
        return 2
    for name, tile, loop, required in CONFIGS:
        try:
            row = compile_config(name, tile, loop)
        except Exception as exc:  # report every configuration
            row = {"kernel": name, "tile": list(tile), "loop": loop,
                   "error": f"{type(exc).__name__}: {exc}"[:500]}
        print(json.dumps({**row, "required": required}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
