"""Registers compiled without a GPU beside what the driver reports, for every Triton and Numba
kernel of WarpScope at several block sizes; and the example kernels' GB/s beside their torch
peers. One call records everything into one JSON file.

    PYTHONUNBUFFERED=1 python3 benchmarks/registers_run.py --out $OUT --budget-s 120

The rows are the registry's Triton and Numba kernels (vector adds, add+ReLU, copy, square,
the matmuls, warp lanes, the placement trace) and the example files in resources/examples.
First every row is compiled WITHOUT loading it (kernels/offline_compile/compile.py, in parallel child
processes, with the same Triton as the launcher); then, on a GPU, each is launched as
WarpScope launches it and the driver's numbers are read (Triton: CompiledKernel.n_regs,
4 x n_spills, metadata.shared, the function's static shared memory and
cuOccupancyMaxActiveBlocksPerMultiprocessor; Numba: the overload's registers and shared
memory), beside the blocks per SM sim/ predicts from the compiled-here numbers. Last, the
examples are timed beside their torch peers (kernels.measure.harness.measure: CUDA events, L2 flushed,
median). Writes DIR/registers_<gpu>.json. Without a GPU only the compiled-here columns are
filled, for --cc (default 9.0): DIR/registers_sm90_triton<version>.json.
Survives a failing row (its error is recorded), prints progress, stops at the time budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernels.offline_compile.compile import (CompiledResources, CompileRequest, ResourceCache,  # noqa: E402
                             numba_argtypes_from_args, numba_request, resources_many,
                             signature_from_args, spec_request, triton_request)
from sim.inputs.files import write_json_atomic  # noqa: E402

FORMAT = "warpscope-registers/1"
EXAMPLES = ROOT / "resources" / "examples"
EXAMPLE_FILES = ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py")
N_ELEMENTWISE = 1 << 20  # a multiple of 16, as real sizes usually are: "i32:16"
MATMUL_BLOCKS = [dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, num_warps=w)
                 for m, n, k, w in ((128, 256, 64, 8), (128, 128, 64, 4), (64, 64, 32, 4))]
BLOCKS = {  # block settings per kernel (the first is its own default); others: see blocks_for
    "softmax_kernel": [dict(num_warps=w) for w in (8, 2, 4, 16)],
    "layer_norm_fwd_kernel": [dict(BLOCK_SIZE=b) for b in (1024, 256, 4096, 16384)],
    "stencil_kernel": [dict(threads=t) for t in ((32, 8), (16, 16), (32, 32))],
    "matmul_tiled": MATMUL_BLOCKS, "matmul_persistent": MATMUL_BLOCKS,
    "matmul_stream_k": MATMUL_BLOCKS,
}
TRACE_SETTINGS = [(4, 0), (4, 16), (4, 64), (8, 0)]  # (num_warps, extra registers held)
TIMING_N = {"softmax_kernel": 4096 * 8192, "layer_norm_fwd_kernel": 4096 * 8192,
            "stencil_kernel": 5792 * 5792}
TIMING_RESERVE_S = 30  # the examples' timings run last, in what the rows leave


def log(message: str) -> None:
    print(message, flush=True)


@dataclass
class Row:
    """One kernel at one block setting: the compile request, and how to load it on the GPU."""

    kernel: str
    source: str
    backend: str
    block: dict
    request: CompileRequest
    drive: Callable[[object], dict]  # (gpu) -> what the driver reports; GPU only
    threads_per_block: int


# --------------------------------------------------------------------------------------------
# The rows
# --------------------------------------------------------------------------------------------
def blocks_for(spec) -> list[dict]:
    if spec.name in BLOCKS:
        return BLOCKS[spec.name]
    if spec.backend == "numba":
        return [dict(threads=t) for t in (128, 256, 1024)]
    return [dict(BLOCK_SIZE=b, num_warps=w) for b, w in ((256, 4), (1024, 4), (4096, 4), (4096, 8))]


def spec_rows(spec, cc, on_gpu: bool) -> list[Row]:
    from kernels.measure.harness import make_arrays

    n = N_ELEMENTWISE if spec.arity else max(spec.check_sizes)
    arrays = make_arrays(spec, n, on_gpu=False, seed=0)  # the ints, and so the code, follow n
    rows = []
    for block in blocks_for(spec):
        params = spec.check_block(block)
        source = spec.kernel.partition(":")[0] if isinstance(spec.kernel, str) else spec.origin
        rows.append(Row(spec.name, source, spec.backend, params,
                        spec_request(spec, n, block, cc, arrays=arrays),
                        lambda gpu, block=block: drive_spec(spec, n, block, gpu),
                        spec.threads_per_block(params)))
    return rows


def trace_rows(cc) -> list[Row]:
    """The placement-trace kernel as kernels/tracing/trace.py compiles it (spin wait), at a few warps and
    held registers: HELD is exactly the knob that moves its register count."""
    from kernels.bodies.trace_kernels import held_values, placement_kernel

    out, chase = np.zeros((1, 3), np.int64), np.zeros(2, np.int32)
    args = (out, 20_000, chase, chase.size)
    rows = []
    for warps, hold in TRACE_SETTINGS:
        consts = dict(WAIT=0, HELD=held_values(hold, warps))
        rows.append(Row("placement_kernel", "kernels/bodies/trace_kernels.py", "triton",
                        dict(num_warps=warps, hold_regs=hold),
                        triton_request(placement_kernel, signature_from_args(args), consts,
                                       warps, 3, cc),
                        lambda gpu, a=args, c=consts, w=warps: drive_triton(
                            placement_kernel, (1,), a, c, dict(num_warps=w)),
                        32 * warps))
    return rows


def lanes_rows(cc) -> list[Row]:
    from kernels.bodies import numba_kernels as nk

    lanes = np.full(1024, -1, np.int32)
    return [Row("lanes_kernel", "kernels/bodies/numba_kernels.py", "numba", dict(threads=t),
                numba_request(nk.lanes_kernel, numba_argtypes_from_args((lanes,)), cc),
                lambda gpu, t=t: drive_lanes(t), t) for t in (32, 250, 1024)]


def all_rows(cc, on_gpu: bool) -> list[Row]:
    from kernels.declare.kernel_file import load_kernel_file
    from kernels.declare.registry import all_kernels
    from kernels.declare.spec import declare

    specs = [s for s in all_kernels() if s.backend in ("triton", "numba") and s.launchable]
    for file in EXAMPLE_FILES:
        specs += [declare(d, origin=f"resources/examples/{file}")
                  for d in load_kernel_file(EXAMPLES / file)]
    rows = []
    for spec in specs:
        rows += spec_rows(spec, cc, on_gpu)
    matmuls = [r for r in rows if r.kernel.startswith("matmul")]  # the slowest compiles: last
    return [r for r in rows if r not in matmuls] + trace_rows(cc) + lanes_rows(cc) + matmuls


# --------------------------------------------------------------------------------------------
# On the GPU: what the driver reports
# --------------------------------------------------------------------------------------------
def drive_spec(spec, n: int, block: dict, gpu) -> dict:
    """Launch as WarpScope launches (kernels.launching.launcher); Triton once more, straight from the JIT's
    cache, for the CompiledKernel and its function handle."""
    from kernels.measure import harness
    from kernels.launching.launcher import TRITON_OPTIONS, kernel_args
    from kernels.declare.spec import resolve

    inputs, out = harness.make_arrays(spec, n, on_gpu=True, seed=0)
    launch = harness.bind(spec, inputs, out, n, block, gpu)
    harness.first_run(spec, launch)
    res = launch.resources()
    if spec.backend == "numba":
        return {"regs_per_thread": res.regs_per_thread,
                "static_smem_bytes": res.smem_per_block_bytes}
    shape = spec.launch_shape(n, block, gpu.sm_count)
    params = dict(shape.params)
    options = {k: params.pop(k) for k in TRITON_OPTIONS if k in params}
    found = drive_triton(resolve(spec.kernel), shape.grid, kernel_args(spec, inputs, out, n),
                         {**spec.constants, **params}, options)
    found["launcher_regs_per_thread"] = res.regs_per_thread  # the same kernel, via the launcher
    return found


def drive_triton(fn, grid, args, constexprs: dict, options: dict) -> dict:
    import torch

    args = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in args]
    ck = fn[grid](*args, **constexprs, **options)
    torch.cuda.synchronize()
    found = {"regs_per_thread": int(ck.n_regs), "spills_bytes": 4 * int(ck.n_spills),
             "dynamic_smem_bytes": int(ck.metadata.shared)}
    try:
        from cuda.bindings import driver as cu

        handle = cu.CUfunction(ck.function)
        A = cu.CUfunction_attribute
        for key, attr in (("static_smem_bytes", A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                          ("local_bytes", A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                          ("max_threads_per_block", A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)):
            err, value = cu.cuFuncGetAttribute(attr, handle)
            if err == cu.CUresult.CUDA_SUCCESS:
                found[key] = int(value)
        err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            handle, 32 * options.get("num_warps", 4), found["dynamic_smem_bytes"])
        if err == cu.CUresult.CUDA_SUCCESS:
            found["blocks_per_sm"] = int(blocks)
    except Exception as exc:  # cuda-bindings missing or different: the rest still counts
        found["cu_error"] = f"{type(exc).__name__}: {exc}"
    return found


def drive_lanes(threads: int) -> dict:
    from kernels.bodies.numba_kernels import warp_lanes

    _, res = warp_lanes(threads)
    return {"regs_per_thread": res.regs_per_thread, "static_smem_bytes": res.smem_per_block_bytes}


def predicted(gpu, compiled: dict, threads: int) -> dict:
    """sim/'s blocks per SM from the compiled-here numbers, counting the cubin's static shared
    memory and not (sm_90+ Triton cubins carry a 1 KiB section the driver may also reserve)."""
    from sim.rules.occupancy import occupancy

    if "error" in compiled or gpu is None:
        return {}
    regs, dyn = compiled["regs_per_thread"], compiled["dynamic_smem_bytes"]
    return {"with_static": occupancy(gpu, threads, regs,
                                     dyn + compiled["static_smem_bytes"]).blocks_per_sm,
            "dynamic_only": occupancy(gpu, threads, regs, dyn).blocks_per_sm}


def agree(compiled: dict, driver: dict | None) -> bool | None:
    """Registers equal, and for Triton the spill bytes too."""
    if not driver or "error" in compiled or "error" in driver:
        return None
    same = compiled["regs_per_thread"] == driver["regs_per_thread"]
    if "spills_bytes" in driver:
        same = same and compiled["stack_bytes"] == driver["spills_bytes"]
    return bool(same)


# --------------------------------------------------------------------------------------------
# The examples beside their torch peers
# --------------------------------------------------------------------------------------------
def time_examples(gpu, budget_left) -> list[dict]:
    from kernels.measure import harness
    from kernels.declare.kernel_file import load_kernel_file
    from kernels.declare.spec import declare

    rows = []
    for file in EXAMPLE_FILES:
        for decl in load_kernel_file(EXAMPLES / file):
            spec = declare(decl, origin=f"resources/examples/{file}")
            for who in (spec, spec.peer_spec()):
                if budget_left() < 8:
                    log(f"  timing: budget spent, {who.name} skipped")
                    return rows
                try:
                    m = harness.measure(who, TIMING_N[spec.name], reps=30, gpu=gpu,
                                        device_name=gpu.name)
                    rows.append(dataclasses.asdict(m))
                    log(f"  {who.name}: {m.bandwidth_gbps:,.0f} GB/s (median {m.median_ms:.3f} ms)")
                except Exception as exc:
                    rows.append({"kernel": who.name, "error": f"{type(exc).__name__}: {exc}",
                                 "traceback": traceback.format_exc()[-2000:]})
                    log(f"  {who.name} FAILED: {exc}")
    return rows


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


def _device(cc_text: str):
    """(gpu spec or None, has_gpu, compute capability, file tag)."""
    from kernels.launching.backends import gpu_status

    has_gpu, _ = gpu_status()
    if has_gpu:
        from kernels.launching.device import detect_device

        gpu, _ = detect_device()
        tag = "h200" if "H200" in gpu.name else "".join(c for c in gpu.name.lower() if c.isalnum())
        return gpu, True, gpu.compute_capability, tag
    from sim.rules.devices import preset, presets

    cc = tuple(int(p) for p in cc_text.split("."))
    gpu = next((preset(n) for n in presets() if preset(n).compute_capability == cc), None)
    return gpu, False, cc, f"sm{cc[0]}{cc[1]}_triton{_versions()['triton']}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the JSON file")
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--cc", default="9.0", help="target without a GPU (default 9.0)")
    opts = ap.parse_args()
    t0 = time.time()
    budget_left = lambda: opts.budget_s - (time.time() - t0)  # noqa: E731
    gpu, has_gpu, cc, tag = _device(opts.cc)
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    path = Path(opts.out) / f"registers_{tag}.json"
    name = gpu.name if has_gpu else "CPU (no GPU)"
    log(f"registers_run: {name}, cc {cc[0]}.{cc[1]}, budget {opts.budget_s:.0f} s -> {path}")
    result = {"format": FORMAT, "command": " ".join(sys.argv), "device": name,
              "compute_capability": f"{cc[0]}.{cc[1]}", "gpu": has_gpu, "versions": _versions(),
              "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "rows": [], "timings": [], "stopped_at_budget": False,
              "notes": ["compiled: kernels/offline_compile/compile.py without loading (cuobjdump -res-usage of "
                        "the cubin); driver: the loaded kernel after one launch",
                        "spills: Triton's n_spills is LOCAL_SIZE_BYTES / 4; spills_bytes = 4 x "
                        "n_spills compares with the cubin's STACK (stack_bytes)"]}
    try:
        rows = all_rows(cc, has_gpu)
    except Exception:
        result["error"] = traceback.format_exc()[-3000:]
        write_json_atomic(path, result, indent=1)
        raise
    workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    log(f"{len(rows)} rows: compiling each without loading it ({workers} processes)")
    t1 = time.time()
    compiled = resources_many([r.request for r in rows], ResourceCache(), workers=workers,
                              timeout_s=max(30.0, budget_left() / 2))
    result["compile_all_s"] = round(time.time() - t1, 1)
    log(f"compiled {len(rows)} configurations in {result['compile_all_s']} s")
    reserve = TIMING_RESERVE_S if has_gpu else 0
    for i, (row, res) in enumerate(zip(rows, compiled)):
        if budget_left() < reserve + 5:
            result["stopped_at_budget"] = True
            log(f"budget spent: stopped before row {i + 1} of {len(rows)}")
            break
        entry = {"kernel": row.kernel, "source": row.source, "backend": row.backend,
                 "block": {k: list(v) if isinstance(v, tuple) else v for k, v in row.block.items()},
                 "threads_per_block": row.threads_per_block, "cc": f"{cc[0]}.{cc[1]}",
                 "compiled": (res.to_dict() if isinstance(res, CompiledResources)
                              else {"error": str(res), "log_tail": res.log[-2000:]})}
        if has_gpu:
            try:
                entry["driver"] = row.drive(gpu)
            except Exception as exc:
                entry["driver"] = {"error": f"{type(exc).__name__}: {exc}",
                                   "traceback": traceback.format_exc()[-2000:]}
            entry["predicted_blocks_per_sm"] = predicted(gpu, entry["compiled"],
                                                         row.threads_per_block)
            entry["agree"] = agree(entry["compiled"], entry["driver"])
        result["rows"].append(entry)
        c, d = entry["compiled"], entry.get("driver") or {}
        log(f"[{i + 1}/{len(rows)}] {row.kernel} {row.block}: compiled "
            f"{c.get('regs_per_thread', c.get('error'))} regs"
            + (f", driver {d.get('regs_per_thread', d.get('error'))}" if has_gpu else "")
            + f" ({time.time() - t0:.0f} s)")
        if i % 10 == 9:
            write_json_atomic(path, result, indent=1)
    if has_gpu:
        write_json_atomic(path, result, indent=1)
        log("timing the examples beside their torch peers")
        result["timings"] = time_examples(gpu, budget_left)
    result["elapsed_s"] = round(time.time() - t0, 1)
    compared = [r for r in result["rows"] if r.get("agree") is not None]
    result["summary"] = {"rows": len(result["rows"]), "compared": len(compared),
                         "registers_and_spills_agree": sum(r["agree"] for r in compared)}
    write_json_atomic(path, result, indent=1)
    log(f"done in {result['elapsed_s']} s: {result['summary']} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
