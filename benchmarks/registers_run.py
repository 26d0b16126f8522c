"""Registers compiled without a GPU beside what the driver reports, for every Triton and Numba
kernel of WarpScope at several block sizes; and the example kernels' GB/s beside their torch
peers. One call records everything into one JSON file.

    PYTHONUNBUFFERED=1 python3 benchmarks/registers_run.py --out $OUT --budget-s 120

On a GPU each row compiles the kernel WITHOUT loading it (kernels/compile.py, the same Triton
as the launcher) and then launches it and reads what the driver reports (Triton:
CompiledKernel.n_regs, .n_spills, .metadata.shared and the function's static shared memory;
Numba: the overload's regs_per_thread, shared_mem_per_block, local_mem_per_thread), plus the
driver's blocks per SM next to the occupancy sim/ predicts from the compiled-here numbers.
Writes DIR/registers_<gpu>.json. Without a GPU only the compiled-here columns are filled, for
--cc (default 9.0): DIR/registers_sm90_triton<version>.json.
Survives a failing row (its error is recorded), prints progress, stops at the time budget.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernels.compile import (CompiledResources, ResourceCache,  # noqa: E402
                             numba_argtypes_from_args, numba_request, resources_many,
                             signature_from_args, triton_request)
from kernels.kernel_file import import_file, launch_arguments, launch_grid  # noqa: E402
from sim.files import write_json_atomic  # noqa: E402

FORMAT = "warpscope-registers/1"
N_ELEMENTWISE = 1 << 20  # a multiple of 16, as real sizes usually are: "i32:16"
EXAMPLES = ROOT / "resources" / "examples"
# block parameters each example is compiled and launched at (the first is the declaration's own)
EXAMPLE_BLOCKS = {
    "softmax_kernel": [dict(num_warps=w) for w in (8, 2, 4, 16)],
    "layer_norm_fwd_kernel": [dict(BLOCK_SIZE=b) for b in (1024, 256, 4096, 16384)],
    "stencil_kernel": [dict(threads=t) for t in ((32, 8), (16, 16), (32, 32))],
}
MATMUL_BLOCKS = [dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, num_warps=w)
                 for m, n, k, w in ((128, 256, 64, 8), (128, 128, 64, 4), (64, 64, 32, 4))]
EXAMPLE_BLOCKS |= {"matmul_kernel": MATMUL_BLOCKS, "matmul_persistent_kernel": MATMUL_BLOCKS}
TIMING_RESERVE_S = 25  # the examples' timings run last, in what the rows leave
EXAMPLE_TIMING_N = {"softmax_kernel": 4096 * 8192, "layer_norm_fwd_kernel": 4096 * 8192,
                    "stencil_kernel": 5792 * 5792}


def log(message: str) -> None:
    print(message, flush=True)


@dataclass
class Case:
    """One kernel at one block configuration: what to compile and how to launch it."""

    name: str  # the kernel's name in its module
    source: str  # module or file it comes from
    kernel: object
    backend: str
    block: dict  # the block parameters of this row, for the table
    args: tuple  # numpy arrays and scalars, as the launcher gets them
    grid: tuple
    constexprs: dict = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    threads: object = None  # Numba: threads per block (int or tuple)


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------
def elementwise_triton() -> list[Case]:
    from kernels import triton_kernels as tk

    cases = []
    for name in ("add_kernel", "add_fast_kernel", "add_relu_kernel", "copy_kernel",
                 "square_kernel"):
        fn = getattr(tk, name)
        pointers = sum(p.name.endswith("_ptr") for p in fn.params)
        arrays = [np.zeros(N_ELEMENTWISE, np.float32) for _ in range(pointers)]
        for block, warps in ((256, 4), (1024, 4), (4096, 4), (4096, 8)):
            cases.append(Case(name, "kernels/triton_kernels.py", fn, "triton",
                              dict(BLOCK_SIZE=block, num_warps=warps), (*arrays, N_ELEMENTWISE),
                              (math.ceil(N_ELEMENTWISE / block),), dict(BLOCK_SIZE=block), warps))
    return cases


def trace_triton() -> list[Case]:
    from kernels import trace

    out = np.zeros((1, 3), np.int64)
    return [Case("placement_kernel", "kernels/trace.py", trace.placement_kernel, "triton",
                 dict(num_warps=w),
                 (out, 1000), (1,), {}, w) for w in (1, 4, 8)]


def numba_builtin() -> list[Case]:
    from kernels import numba_kernels as nk

    x = np.zeros(N_ELEMENTWISE, np.float32)
    kernels = {"add_naive_kernel": 3, "add_kernel": 3, "add_gridstride_kernel": 3,
               "add_relu_kernel": 3, "square_kernel": 2}
    cases = []
    for name, arity in kernels.items():
        arrays = tuple(np.zeros_like(x) for _ in range(arity))
        for threads in (128, 256, 1024):
            grid = (min(math.ceil(N_ELEMENTWISE / threads), 4096),)
            cases.append(Case(name, "kernels/numba_kernels.py", getattr(nk, name), "numba",
                              dict(threads=threads), arrays, grid, threads=threads))
    lanes = np.full(1024, -1, np.int32)
    cases += [Case("lanes_kernel", "kernels/numba_kernels.py", nk.lanes_kernel, "numba",
                   dict(threads=t),
                   (lanes,), (1,), threads=t) for t in (32, 250, 1024)]
    return cases


def declared(decls, source: str, sm_count: int) -> list[Case]:
    """Cases from kernel-file declarations (the examples, the matmuls) at their block sweeps."""
    cases = []
    for decl in decls:
        decl = dict(decl)
        decl.setdefault("backend", "triton" if "triton" in type(decl["kernel"]).__module__
                        else "numba")
        name = (getattr(decl["kernel"], "fn", None) or decl["kernel"].py_func).__name__
        dims, _, _, args = launch_arguments(decl, _small_n(decl))
        for change in EXAMPLE_BLOCKS.get(name, [{}]):
            block = dict(decl["block"]) | change
            grid = launch_grid(decl, dims, block, sm_count)
            consts = decl.get("constants", {}) | {k: v for k, v in block.items()
                                                   if k not in ("num_warps", "num_stages",
                                                                "threads")}
            cases.append(Case(decl.get("name", name), source, decl["kernel"], decl["backend"],
                              block, args, grid, consts,
                              block.get("num_warps", 4), block.get("num_stages", 3),
                              block.get("threads")))
    return cases


def _small_n(decl) -> int:
    sizes = decl.get("check_sizes") or [4096]
    return max(sizes)


def all_cases(sm_count: int) -> list[Case]:
    cases = elementwise_triton() + trace_triton() + numba_builtin()
    for file in ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py"):
        module = import_file(EXAMPLES / file)
        cases += declared([module.WARPSCOPE], f"resources/examples/{file}", sm_count)
    if (ROOT / "kernels" / "matmul.py").exists():
        import kernels.matmul as mm

        decls = getattr(mm, "WARPSCOPE", None) or getattr(mm, "MATMUL", [])
        cases += declared(decls if isinstance(decls, list) else [decls], "kernels/matmul.py",
                          sm_count)
    return cases


# --------------------------------------------------------------------------------------------
# Compiled here, and loaded on the GPU
# --------------------------------------------------------------------------------------------
def compile_all(cases: list[Case], cc, budget_s: float) -> list[dict]:
    """Every case compiled without loading, in parallel child processes (one core each)."""
    requests = []
    for case in cases:
        if case.backend == "triton":
            requests.append(triton_request(case.kernel, signature_from_args(case.args),
                                           case.constexprs, case.num_warps, case.num_stages, cc))
        else:
            requests.append(numba_request(case.kernel, numba_argtypes_from_args(case.args), cc))
    workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    results = resources_many(requests, ResourceCache(), workers=workers, timeout_s=budget_s)
    return [r.to_dict() if isinstance(r, CompiledResources)
            else {"error": str(r), "log_tail": r.log[-2000:]} for r in results]


def _cu_attributes(function_handle) -> dict:
    from cuda.bindings import driver as cu

    fn = cu.CUfunction(function_handle)
    A = cu.CUfunction_attribute
    out = {}
    for key, attr in (("static_smem_bytes", A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                      ("local_bytes", A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                      ("regs_per_thread", A.CU_FUNC_ATTRIBUTE_NUM_REGS),
                      ("max_threads_per_block", A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)):
        err, value = cu.cuFuncGetAttribute(attr, fn)
        if err == cu.CUresult.CUDA_SUCCESS:
            out[key] = int(value)
    return out


def _blocks_per_sm(function_handle, threads: int, dynamic_smem: int) -> int | None:
    from cuda.bindings import driver as cu

    err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        cu.CUfunction(function_handle), threads, dynamic_smem)
    return int(blocks) if err == cu.CUresult.CUDA_SUCCESS else None


def _device_args(case: Case, torch):
    return [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in case.args]


def load_on_gpu(case: Case, torch) -> dict:
    """Launch once; what the driver says about the loaded kernel."""
    tensors = _device_args(case, torch)
    if case.backend == "triton":
        ck = case.kernel[case.grid](*tensors, **case.constexprs, num_warps=case.num_warps,
                                    num_stages=case.num_stages)
        torch.cuda.synchronize()
        out = {"regs_per_thread": int(ck.n_regs), "spills_bytes": 4 * int(ck.n_spills),
               "dynamic_smem_bytes": int(ck.metadata.shared)}
        try:
            out |= {f"cu_{k}": v for k, v in _cu_attributes(ck.function).items()}
            out["blocks_per_sm"] = _blocks_per_sm(ck.function, 32 * case.num_warps,
                                                  out["dynamic_smem_bytes"])
        except Exception as exc:  # cuda-bindings missing or different: the rest still counts
            out["cu_error"] = f"{type(exc).__name__}: {exc}"
        return out
    from kernels.compat import numba_cuda

    cuda = numba_cuda()
    import numba

    arrays = [cuda.as_cuda_array(t) if hasattr(t, "data_ptr") else t for t in tensors]
    case.kernel[case.grid, case.threads](*arrays)
    cuda.synchronize()
    overload = case.kernel.overloads[tuple(numba.typeof(a) for a in arrays)]
    return {"regs_per_thread": int(overload.regs_per_thread),
            "static_smem_bytes": int(overload.shared_mem_per_block),
            "local_bytes": getattr(overload, "local_mem_per_thread", None)}


def predicted_blocks(gpu, compiled: dict, case: Case) -> dict:
    """sim/'s blocks per SM from the compiled-here numbers, with the cubin's static shared
    memory counted and not (sm_90 cubins carry a 1 KiB section the driver may also reserve)."""
    from sim.occupancy import occupancy

    if "error" in compiled or gpu is None:
        return {}
    threads = compiled["threads_per_block"] or int(np.prod(case.threads))
    regs = compiled["regs_per_thread"]
    dyn, static = compiled["dynamic_smem_bytes"], compiled["static_smem_bytes"]
    return {"with_static": occupancy(gpu, threads, regs, dyn + static).blocks_per_sm,
            "dynamic_only": occupancy(gpu, threads, regs, dyn).blocks_per_sm}


def agree(compiled: dict, driver: dict | None) -> bool | None:
    if not driver or "error" in compiled or "error" in driver:
        return None
    same = compiled["regs_per_thread"] == driver["regs_per_thread"]
    if "spills_bytes" in driver:
        same &= compiled["stack_bytes"] == driver["spills_bytes"]
    return bool(same)


# --------------------------------------------------------------------------------------------
# Example kernels beside their torch peers
# --------------------------------------------------------------------------------------------
def time_examples(torch, gpu, budget_left) -> list[dict]:
    from kernels.timing import flush_bytes_for, gpu_method

    flush = flush_bytes_for(gpu.l2_bytes if gpu else None)
    rows = []
    for file in ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py"):
        if budget_left() < 15:
            log(f"  timing: budget spent, {file} skipped")
            break
        try:
            rows.append(time_one(import_file(EXAMPLES / file).WARPSCOPE, torch, gpu, flush))
            r = rows[-1]
            log(f"  timed {r['kernel']}: {r['kernel_gbps']:.0f} GB/s, torch {r['peer_gbps']:.0f}"
                f" GB/s (max error {r['max_abs_error']:.2e})")
        except Exception as exc:
            rows.append({"file": file, "error": f"{type(exc).__name__}: {exc}",
                         "traceback": traceback.format_exc()[-2000:]})
            log(f"  timing {file} FAILED: {exc}")
    for r in rows:
        r["method"] = gpu_method("flush", 30, flush)
    return rows


def time_one(decl: dict, torch, gpu, flush: int) -> dict:
    from kernels.compat import numba_cuda
    from kernels.timing import bandwidth_gbps, summarize, time_gpu

    decl = dict(decl, backend="triton" if "triton" in type(decl["kernel"]).__module__
                else "numba")
    name = (getattr(decl["kernel"], "fn", None) or decl["kernel"].py_func).__name__
    block = dict(decl["block"])
    kernel = decl["kernel"]

    def launcher(n):
        dims, inputs, out, args = launch_arguments(decl, n)
        grid = launch_grid(decl, dims, block, gpu.sm_count if gpu else None)
        dev = {id(a): torch.from_numpy(a).cuda() for a in (*inputs, out)}
        targs = [dev.get(id(a), a) for a in args]
        if decl["backend"] == "triton":
            consts = decl.get("constants", {}) | {k: v for k, v in block.items()
                                                   if k not in ("num_warps", "num_stages")}
            run = lambda: kernel[grid](*targs, **consts, num_warps=block.get("num_warps", 4),  # noqa: E731
                                       num_stages=block.get("num_stages", 3))
        else:
            cuda = numba_cuda()
            arrays = [cuda.as_cuda_array(t) if hasattr(t, "data_ptr") else t for t in targs]
            configured = kernel[grid, block["threads"]]
            run = lambda: configured(*arrays)  # noqa: E731
        peer = lambda: decl["peer"](torch, *[dev[id(a)] for a in inputs])  # noqa: E731
        return dims, inputs, dev[id(out)], run, peer

    dims, inputs, out, run, _ = launcher(max(decl.get("check_sizes", [4096])))
    run()
    torch.cuda.synchronize()
    want = decl["reference"](*inputs)
    error = float(np.max(np.abs(out.cpu().numpy().astype(np.float64) - want)))
    n = EXAMPLE_TIMING_N[name]
    dims, _, _, run, peer = launcher(n)
    nbytes = call_bytes(decl, dims)
    k_med, k_p20, k_p80 = summarize(time_gpu(run, reps=30, flush_bytes=flush))
    p_med, _, _ = summarize(time_gpu(peer, reps=30, flush_bytes=flush))
    return {"kernel": name, "elements": n, "dims": dims, "block": block, "bytes": nbytes,
            "max_abs_error": error, "kernel_median_ms": k_med, "kernel_p20_ms": k_p20,
            "kernel_p80_ms": k_p80, "kernel_gbps": bandwidth_gbps(nbytes, k_med),
            "peer_median_ms": p_med, "peer_gbps": bandwidth_gbps(nbytes, p_med)}


def call_bytes(decl, dims) -> int:
    from kernels.kernel_file import call_declared

    return int(call_declared(decl["bytes"], names=dims))


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------
def _versions() -> dict:
    out = {"python": platform.python_version()}
    for dist in ("triton", "numba", "numba-cuda", "torch", "numpy", "cuda-bindings"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the JSON file")
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--cc", default="9.0", help="target without a GPU (default 9.0)")
    opts = ap.parse_args()
    t0 = time.time()
    budget_left = lambda: opts.budget_s - (time.time() - t0)  # noqa: E731
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        torch, has_gpu = None, False
    gpu, gpu_name = None, "CPU (no GPU)"
    if has_gpu:
        from kernels.device import detect_device

        gpu, _ = detect_device()
        gpu_name = gpu.name
        cc = gpu.compute_capability
        tag = "h200" if "H200" in gpu_name else "".join(c for c in gpu_name.lower()
                                                        if c.isalnum())
    else:
        from sim.devices import preset

        cc = tuple(int(p) for p in opts.cc.split("."))
        gpu = next((preset(n) for n in ("H200", "H100 SXM") if preset(n).compute_capability
                    == cc), None)
        tag = f"sm{cc[0]}{cc[1]}_triton{_versions()['triton']}"
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    path = Path(opts.out) / f"registers_{tag}.json"
    log(f"registers_run: {gpu_name}, cc {cc[0]}.{cc[1]}, budget {opts.budget_s:.0f} s -> {path}")
    result = {"format": FORMAT, "command": " ".join(sys.argv), "device": gpu_name,
              "compute_capability": f"{cc[0]}.{cc[1]}", "gpu": has_gpu, "versions": _versions(),
              "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "rows": [], "timings": [], "stopped_at_budget": False,
              "notes": ["compiled: kernels/compile.py without loading (cuobjdump -res-usage of "
                        "the cubin); driver: the loaded kernel after one launch",
                        "spills: Triton's n_spills is LOCAL_SIZE_BYTES / 4; spills_bytes = 4 x "
                        "n_spills compares with the cubin's STACK (stack_bytes)"]}
    try:
        cases = all_cases(gpu.sm_count if gpu else 132)
    except Exception as exc:
        result["error"] = f"building the cases failed: {type(exc).__name__}: {exc}"
        write_json_atomic(path, result, indent=1)
        raise
    log(f"{len(cases)} rows: compiling each without loading it, in parallel")
    t1 = time.time()
    compiled = compile_all(cases, cc, max(30.0, budget_left() / 2))
    result["compile_all_s"] = round(time.time() - t1, 1)
    log(f"compiled {len(cases)} configurations in {result['compile_all_s']} s")
    reserve = TIMING_RESERVE_S if has_gpu else 0
    for i, case in enumerate(cases):
        if budget_left() < reserve + 5:
            result["stopped_at_budget"] = True
            log(f"budget spent: stopped before row {i + 1} of {len(cases)}")
            break
        row = {"kernel": case.name, "source": case.source, "backend": case.backend,
               "block": {k: list(v) if isinstance(v, tuple) else v
                         for k, v in case.block.items()},
               "num_warps": case.num_warps if case.backend == "triton" else None,
               "num_stages": case.num_stages if case.backend == "triton" else None,
               "cc": f"{cc[0]}.{cc[1]}"}
        row["compiled"] = compiled[i]
        if has_gpu:
            try:
                row["driver"] = load_on_gpu(case, torch)
            except Exception as exc:
                row["driver"] = {"error": f"{type(exc).__name__}: {exc}",
                                 "traceback": traceback.format_exc()[-2000:]}
            row["predicted_blocks_per_sm"] = predicted_blocks(gpu, row["compiled"], case)
            row["agree"] = agree(row["compiled"], row["driver"])
        result["rows"].append(row)
        c, d = row["compiled"], row.get("driver") or {}
        log(f"[{i + 1}/{len(cases)}] {case.name} {case.block}: compiled "
            f"{c.get('regs_per_thread', c.get('error'))} regs"
            + (f", driver {d.get('regs_per_thread', d.get('error'))}" if has_gpu else "")
            + f" ({time.time() - t0:.0f} s)")
        if i % 10 == 9:
            write_json_atomic(path, result, indent=1)
    if has_gpu:
        write_json_atomic(path, result, indent=1)
        log("timing the examples beside their torch peers")
        result["timings"] = time_examples(torch, gpu, budget_left)
    result["elapsed_s"] = round(time.time() - t0, 1)
    rows = [r for r in result["rows"] if r.get("agree") is not None]
    result["summary"] = {"rows": len(result["rows"]), "compared": len(rows),
                         "registers_and_spills_agree": sum(r["agree"] for r in rows)}
    write_json_atomic(path, result, indent=1)
    log(f"done in {result['elapsed_s']} s: {result['summary']} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
