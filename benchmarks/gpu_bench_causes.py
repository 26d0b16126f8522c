"""gpu_bench.py's two "why" sections: what splits the fast adds' differences into causes
(`run_variants`, the `configs` section's variants beside torch.add) and what the compiler gave the
Numba and Triton adds (`numba_analysis`: registers, PTX loads per thread, bytes in flight), with
the PTX counts both read (`ptx_stats`). Run through benchmarks/gpu_bench.py, not alone."""

from __future__ import annotations

import os
import re


def run_variants(n: int, on_gpu: bool, gpu) -> dict:
    """Split the fast kernels' differences into causes: each Triton change alone, and Numba's
    four-per-thread kernel as a plain loop (fewer blocks, no loads in flight) — with torch.add
    measured in the same loop. Each variant is checked against float64 once."""
    import gpu_variants as gv
    import torch

    from kernels.measure.harness import compare
    from kernels.bodies.reference import add
    from kernels.measure.timing import bandwidth_gbps, flush_bytes_for, summarize, time_gpu

    dev = "cuda" if on_gpu else "cpu"
    x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
    out = torch.full((n,), float("nan"), device=dev)
    cases = {"torch.add": lambda: torch.add(x, y, out=out)}
    for block, warps in ((1024, 4), (2048, 8), (4096, 8)):
        for int64, evict, cs in ((False, False, False), (True, False, False), (False, True, False),
                                 (False, False, True), (True, True, True)):
            label = (f"triton {block}x{warps}" + (" int64" if int64 else "")
                     + (" evict_first" if evict else "") + (" .cs" if cs else ""))
            cases[label] = gv.triton_variant(x, y, out, block, warps, int64, evict, cs)
    cases["numba loop4 (256 threads)"] = gv.numba_loop4(x, y, out)
    rows = {}
    for label, fn in cases.items():
        out.fill_(float("nan"))
        fn()
        acc = compare(out, add(x, y))
        if not acc.ok:
            raise RuntimeError(f"variant {label} is wrong: {acc.detail}")
        if not on_gpu:
            rows[label] = {"checked": True}
            continue
        ms = summarize(time_gpu(fn, reps=50, flush_bytes=flush_bytes_for(gpu.l2_bytes)))[0]
        rows[label] = {"median_ms": ms, "gbps": bandwidth_gbps(3 * 4 * n, ms)}
    if on_gpu:
        base = rows["torch.add"]["gbps"]
        for label, r in rows.items():
            r["ratio_to_torch"] = r["gbps"] / base
            print(f"  {label:40s} {r['gbps']:8.0f} GB/s {r['ratio_to_torch']:6.1%}", flush=True)
    return {"elements": n, "rows": rows}


def ptx_stats(ptx: str) -> dict:
    """Counts in a kernel's PTX that say how it touches memory (loads may be predicated: @%p)."""
    from collections import Counter

    loads = Counter(re.findall(r"\bld\.global[\w.:]*", ptx))
    stores = Counter(re.findall(r"\bst\.global[\w.:]*", ptx))
    return {"ld_global": sum(loads.values()), "st_global": sum(stores.values()),
            "load_kinds": dict(loads), "store_kinds": dict(stores),
            "mul_wide_or_64bit_ops": len(re.findall(r"\b(?:mul\.wide|\w+\.[su]64)\b", ptx)),
            "lines": ptx.count("\n")}


def numba_analysis(out_dir: str, gpu, headline: dict) -> dict:
    """Registers, PTX loads per thread, predicted occupancy and bytes in flight for the Numba
    adds (and the Triton fast add's loads, for contrast)."""
    import numba
    import torch

    from kernels.measure.harness import bind, first_run, make_arrays, predict
    from kernels.launching.launch import Launch, Resources
    from kernels.declare.registry import get_kernel

    on_gpu = gpu is not None
    if not on_gpu:
        raise RuntimeError("needs a GPU (compiled resources and PTX)")
    import kernels.bodies.numba_kernels as nk

    out = {}
    ptx_dump = []
    elements_per_thread = {"add_numba_naive": 1, "add_numba": nk.ELEMENTS_PER_THREAD,
                           "add_numba_gridstride": None}
    kern = {"add_numba_naive": nk.add_naive_kernel, "add_numba": nk.add_kernel,
            "add_numba_gridstride": nk.add_gridstride_kernel}
    med = headline.get("median_gbps", {})
    for name, k in kern.items():
        spec = get_kernel(name)
        inputs, dst = make_arrays(spec, 1 << 20, True)
        launch = bind(spec, inputs, dst, None, None)
        first_run(spec, launch)
        res = launch.resources()
        shape = predict(gpu, launch, res)
        sig = tuple(numba.typeof(a) for a in nk.device_arrays((*inputs, dst)))
        ptx = k.inspect_asm(sig) if hasattr(k, "inspect_asm") else ""
        if isinstance(ptx, dict):
            ptx = next(iter(ptx.values()))
        stats = ptx_stats(ptx)
        ept = elements_per_thread[name]
        resident_threads = (shape.get("blocks_per_sm") or 0) * launch.threads_per_block
        # bytes each thread has requested before its first result can be stored: 2 inputs x 4 B
        # per element it loads up front (the naive and grid-stride kernels: one element at a time)
        in_flight_per_sm = resident_threads * 8 * (ept or 1)
        gbps = med.get(name)
        implied_latency_ns = (in_flight_per_sm * gpu.sm_count / (gbps * 1e9) * 1e9
                              if gbps else None)
        out[name] = {"regs_per_thread": res.regs_per_thread,
                     "smem_per_block_bytes": res.smem_per_block_bytes,
                     "threads_per_block": launch.threads_per_block, **shape,
                     "limited_by": list(shape.get("limited_by", ())),
                     "ptx": stats, "elements_per_thread": ept,
                     "resident_threads_per_sm": resident_threads,
                     "load_bytes_in_flight_per_sm": in_flight_per_sm,
                     "gbps_at_2_28": gbps, "implied_latency_ns": implied_latency_ns}
        print(f"  {name:22s} regs={res.regs_per_thread} occ={shape.get('occupancy')} "
              f"ld.global={stats['ld_global']} {stats['load_kinds']} "
              f"in flight/SM={in_flight_per_sm:,} B "
              f"GB/s={gbps} implied latency={implied_latency_ns}", flush=True)
        ptx_dump.append(f"//// {name}: {spec.description}\n{ptx}")
        del inputs, dst, launch
    # the Triton adds' PTX, for contrast: how wide their loads are and how many per thread
    from kernels.bodies import triton_kernels as tk

    n = 1 << 20
    x, y, o = (torch.randn(n, device="cuda") for _ in range(3))
    for name, k in (("add_triton", tk.add_fast_kernel), ("add_triton_tutorial", tk.add_kernel)):
        spec = get_kernel(name)
        block, warps = spec.default_block, spec.default_num_warps
        ck = k[(-(-n // block),)](x, y, o, n, BLOCK_SIZE=block, num_warps=warps)
        stats = ptx_stats(ck.asm["ptx"])
        ept = block // (32 * warps)
        res = Resources(int(ck.n_regs), int(ck.metadata.shared), int(ck.n_spills))
        grid = -(-(1 << 28) // block)
        shape = predict(gpu, Launch(lambda: None, grid, 32 * warps, block, warps), res)
        resident_threads = (shape.get("blocks_per_sm") or 0) * 32 * warps
        in_flight = resident_threads * 8 * ept
        gbps = med.get(name)
        out[name] = {"regs_per_thread": res.regs_per_thread, "ptx": stats,
                     "elements_per_thread": ept,
                     **shape, "limited_by": list(shape.get("limited_by", ())),
                     "resident_threads_per_sm": resident_threads,
                     "load_bytes_in_flight_per_sm": in_flight, "gbps_at_2_28": gbps,
                     "implied_latency_ns": (in_flight * gpu.sm_count / (gbps * 1e9) * 1e9
                                            if gbps else None)}
        print(f"  {name:22s} regs={res.regs_per_thread} ld.global={stats['ld_global']} "
              f"{stats['load_kinds']} in flight/SM={in_flight:,} B", flush=True)
        ptx_dump.append(f"//// {name} (BLOCK_SIZE={block}, num_warps={warps})\n{ck.asm['ptx']}")
    with open(os.path.join(out_dir, "numba_ptx.txt"), "w") as fh:
        fh.write("\n\n".join(ptx_dump))
    return out
