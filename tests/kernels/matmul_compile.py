"""Compile every matmul kernel variant for sm_90 without a GPU and report what the compiler gave it.

    python tests/kernels/matmul_compile.py [--quick]        # any Python with triton and numpy

Run in a process where TRITON_INTERPRET is unset (the interpreter replaces @triton.jit). The
arguments are specialized as Triton's launcher specializes them for contiguous fp16/bf16 matrices
whose sizes are multiples of 16: pointers and sizes 16-divisible, unit strides constant 1, unused
pointers None. Prints one JSON object per variant: registers, shared memory, spills (cuobjdump
-res-usage) and whether the PTX holds the instructions the variant is about (wgmma, atomics,
%smid / %globaltimer reads). tests/kernels/test_matmul.py runs it with --quick.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _signature(kernel, dtype: str, unused: set[str], constants: dict):
    """(signature, constexprs, attrs) for ASTSource, as the JIT would build them."""
    signature, constexprs, attrs = {}, {}, {}
    for i, name in enumerate(kernel.arg_names):
        if name in constants:
            signature[name], constexprs[name] = "constexpr", constants[name]
        elif name in unused:
            signature[name], constexprs[name] = "constexpr", None
        elif name in ("stride_ak", "stride_bn", "stride_cn"):  # == 1: the JIT makes it constant
            signature[name], constexprs[name] = "constexpr", 1
        elif name.endswith("_ptr"):
            signature[name] = {"ws_ptr": "*fp32", "counts_ptr": "*i32",
                               "stamps_ptr": "*i64"}.get(name, f"*{dtype}")
            attrs[(i,)] = [["tt.divisibility", 16]]
        else:  # M, N, K and the leading strides
            signature[name] = "i32"
            attrs[(i,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def _res_usage(cubin: bytes) -> dict:
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(cubin)
        fh.flush()
        text = subprocess.run([tool, "-res-usage", fh.name], capture_output=True, text=True,
                              check=True).stdout
    found = dict(re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", text))
    return {k.lower(): int(v) for k, v in found.items()}


def compile_variant(kernel_name: str, config, dtype: str, *, stream_k=False, stamp=False) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernels.bodies import matmul as mm

    kernel = getattr(mm, kernel_name)
    constants = {k: v for k, v in config.meta().items() if k.isupper()}
    constants["STAMP"] = stamp
    unused = set() if stamp else {"stamps_ptr"}
    if kernel is mm.matmul_persistent_kernel:
        constants["STREAM_K"] = stream_k
        if not stream_k:
            unused |= {"ws_ptr", "counts_ptr"}
    signature, constexprs, attrs = _signature(kernel, dtype, unused, constants)
    t0 = time.time()
    ck = triton.compile(ASTSource(fn=kernel, signature=signature, constexprs=constexprs,
                                  attrs=attrs),
                        target=GPUTarget("cuda", 90, 32),
                        options={"num_warps": config.num_warps, "num_stages": config.num_stages})
    ptx = ck.asm["ptx"]
    return {"kernel": kernel_name, "dtype": dtype, "config": config.label,
            "stream_k": stream_k, "stamp": stamp, "triton": triton.__version__,
            "compile_s": round(time.time() - t0, 2), "shared_metadata": ck.metadata.shared,
            **_res_usage(ck.asm["cubin"]),
            "wgmma": "wgmma.mma_async" in ptx, "smid": "%smid" in ptx,
            "globaltimer": "%globaltimer" in ptx,
            "atomics": bool(re.search(r"\b(red|atom)\.", ptx))}


def variants(quick: bool):
    """Every kernel x config x dtype, then the stamping variants; quick: the two stamping
    variants of a small config, which between them hold every path of both kernels."""
    from kernels.bodies import matmul as mm

    if quick:
        small = mm.MatmulConfig(64, 64, 32, 8, 4, 3)
        yield "matmul_kernel", small, "bf16", {"stamp": True}
        yield "matmul_persistent_kernel", small, "bf16", {"stream_k": True, "stamp": True}
        return
    for dtype in ("fp16", "bf16"):
        for config in mm.HOPPER_CONFIGS:
            yield "matmul_kernel", config, dtype, {}
            yield "matmul_persistent_kernel", config, dtype, {}
            yield "matmul_persistent_kernel", config, dtype, {"stream_k": True}
    for flags in ({"stamp": True}, {"stamp": True, "stream_k": True}):
        yield "matmul_kernel" if "stream_k" not in flags else "matmul_persistent_kernel", \
            mm.DEFAULT_CONFIG, "bf16", flags
    yield "matmul_persistent_kernel", mm.DEFAULT_CONFIG, "bf16", {"stamp": True}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="the two stamping variants of one small config")
    args = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        print("unset TRITON_INTERPRET: the interpreter cannot compile", file=sys.stderr)
        return 2
    failed = 0
    for name, config, dtype, flags in variants(args.quick):
        try:
            print(json.dumps(compile_variant(name, config, dtype, **flags)), flush=True)
        except Exception as exc:  # report every variant, then fail
            failed += 1
            print(json.dumps({"kernel": name, "dtype": dtype, "config": config.label, **flags,
                              "error": f"{type(exc).__name__}: {exc}"[:2000]}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
