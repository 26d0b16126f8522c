"""The steps of benchmarks/matmul_run.py and what they share: run state, binding, compiling,
occupancy, timing. Import after kernels.available() (no GPU: Triton's interpreter)."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import time

import kernels
from kernels.measure.timing import SPIN_CYCLES

KINDS = ("tiled", "persistent", "stream_k", "torch")
SUMMARY: list[tuple[str, str, str]] = []  # (claim, figure, verdict)
S: dict = {}  # run state: gpu, device, sm_count, spec, deadline, flush_bytes, configs, best ...


def left_s() -> float:
    return S["deadline"] - time.time()


def claim(what: str, figure: str, ok: bool | None) -> None:
    SUMMARY.append((what, figure, {True: "PASS", False: "MISS", None: "info"}[ok]))
    print(f"  -> {what}: {figure} [{SUMMARY[-1][2]}]", flush=True)


# --------------------------------------------------------------------------------------------
# Kernels: bind, compile, resources, occupancy, timing
# --------------------------------------------------------------------------------------------
def make(kind, a, b, c, config=None, programs=None, stamps=None):
    from kernels.bodies import matmul as mm

    if kind == "tiled":
        return mm.bind_matmul(a, b, c, config, stamps=stamps)
    if kind in ("persistent", "stream_k"):
        return mm.bind_matmul_persistent(a, b, c, config, programs=programs,
                                         stream_k=kind == "stream_k", stamps=stamps)
    import torch
    return lambda: torch.matmul(a, b, out=c)


def compiled_info(kind, ck, config) -> dict:
    """Registers and shared memory of the compiled kernel; blocks per SM by sim.rules.occupancy (and by
    the driver, where cuda-bindings can ask it); concurrent tiles = SMs x blocks per SM."""
    from sim.rules.occupancy import occupancy

    info = {"kind": kind, "config": config.label, "num_warps": config.num_warps}
    if kind == "torch" or ck is None or not hasattr(ck, "n_regs"):  # interpreter: nothing compiled
        bps = 1
        info.update(regs=None, smem_bytes=None, spills=None)
    else:
        info.update(regs=int(ck.n_regs), smem_bytes=int(ck.metadata.shared),
                    spills=int(ck.n_spills))
        occ = occupancy(S["spec"], 32 * config.num_warps, info["regs"], info["smem_bytes"])
        bps = occ.blocks_per_sm
        info.update(limited_by=list(occ.limited_by), occupancy=occ.occupancy)
        try:
            from cuda.bindings import driver as cu
            err, n = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                cu.CUfunction(ck.function), 32 * config.num_warps, info["smem_bytes"])
            info["driver_blocks_per_sm"] = int(n) if int(err) == 0 else f"error {err}"
        except Exception as exc:  # noqa: BLE001  (optional cross-check)
            info["driver_blocks_per_sm"] = f"unavailable: {type(exc).__name__}: {exc}"[:200]
    info.update(blocks_per_sm=bps, concurrent_tiles=S["sm_count"] * bps)
    return info


def prepare(kind, a, b, c, config):
    """Bind, launch once (compiles), read the resources; a persistent kernel is rebound to one
    program per concurrent tile slot (SMs x blocks per SM). Returns (run, info)."""
    from kernels.bodies import matmul as mm

    run = make(kind, a, b, c, config, programs=S["sm_count"])
    ck = run()
    sync()
    info = compiled_info(kind, ck, config) if kind != "torch" else {"kind": "torch"}
    if kind in ("persistent", "stream_k"):
        info["programs"] = info["concurrent_tiles"]
        if info["programs"] != S["sm_count"]:
            run = make(kind, a, b, c, config, programs=info["programs"])
        if kind == "stream_k":
            info["split"] = mm.stream_k_split(a.shape[0], b.shape[1], a.shape[1], config,
                                              info["programs"])
    return run, info


def sync() -> None:
    if S["gpu"]:
        import torch
        torch.cuda.synchronize()


def measure(fn, M, N, K, fast=False) -> dict:
    from kernels.declare import matmul_problem as mp
    from kernels.measure.timing import summarize, time_gpu, time_host

    if S["gpu"]:
        times = time_gpu(fn, reps=10 if fast else 20, flush_bytes=S["flush_bytes"],
                         warmup_ms=5 if fast else 25, rep_ms=30 if fast else 100)
    else:
        times = time_host(fn, reps=1, warmup=0)
    med, p20, p80 = summarize(times)
    flops = mp.matmul_flops(M, N, K)
    return {"median_ms": med, "p20_ms": p20, "p80_ms": p80, "reps": len(times),
            "tflops": flops / (med * 1e-3) / 1e12, "tflops_p20": flops / (p80 * 1e-3) / 1e12,
            "tflops_p80": flops / (p20 * 1e-3) / 1e12}


def rand(rows, cols, dtype):
    import torch
    return torch.randn(rows, cols, device=S["device"]).to(dtype)


def tiles_shape(target: int, config) -> tuple[int, int, int, int]:
    """(M, N, tiles_m, tiles_n) with exactly `target` tiles, as square in tiles as it factors."""
    m = max(d for d in range(1, int(math.isqrt(target)) + 1) if target % d == 0)
    return m * config.block_m, target // m * config.block_n, m, target // m


# --------------------------------------------------------------------------------------------
# Compiling ahead: worker processes launch each later variant once on a tiny problem of the same
# specialization, filling Triton's on-disk cache while the main process checks correctness.
# --------------------------------------------------------------------------------------------
def _prewarm(task):
    from kernels.bodies import matmul as mm

    kind, cfg, dtype, shape, stamp = task
    config = mm.MatmulConfig(**cfg)
    t0 = time.time()
    label = f"{kind} {config.label} {dtype} {shape} stamp={stamp}"
    try:
        _launch_once(kind, config, dtype, shape, stamp)
    except Exception as exc:  # noqa: BLE001  (reported; the main process compiles it inline)
        return f"{label}: {type(exc).__name__}: {exc}"[:300]
    return f"{label}: {time.time() - t0:.1f} s"


def _launch_once(kind, config, dtype, shape, stamp) -> None:
    import torch

    from kernels.bodies import matmul as mm


    gpu = torch.cuda.is_available()  # (no GPU: only to test this code path, interpreted)
    S.update(gpu=gpu, device="cuda" if gpu else "cpu",
             sm_count=torch.cuda.get_device_properties(0).multi_processor_count if gpu else 4)
    M, N, K = shape
    a, b = rand(M, K, getattr(torch, dtype)), rand(K, N, getattr(torch, dtype))
    c = torch.empty(M, N, dtype=a.dtype, device=S["device"])
    programs = S["sm_count"]
    stamps = (torch.full((mm.stamp_rows(M, N, config, programs, kind == "stream_k"), 7), -1,
                         dtype=torch.int64, device=S["device"]) if stamp else None)
    make(kind, a, b, c, config, programs, stamps)()
    sync()


def start_prewarm(configs, persistent_configs):
    import multiprocessing as mp

    # Shapes of the same specialization as the real ones (Triton specializes integers divisible
    # by 16): the odd correctness shape, then 16-aligned sizes. The main process compiles the
    # fp16 odd-shape variants itself, first, while these start.
    odd, aligned = (127, 255, 129), (256, 512, 256)
    tasks = [(k, configs[0].to_dict(), "bfloat16", odd, False) for k in KINDS[:3]]
    tasks += [(k, configs[0].to_dict(), "float16", aligned, False) for k in KINDS[:3]]
    tasks += [("tiled", c.to_dict(), "bfloat16", aligned, False) for c in configs]
    tasks += [(k, c.to_dict(), "bfloat16", aligned, False) for c in persistent_configs
              for k in ("persistent", "stream_k")]
    tasks += [(k, configs[0].to_dict(), "bfloat16", aligned, True) for k in KINDS[:3]]
    tasks = list({(k, str(c), d, s, st): (k, c, d, s, st) for k, c, d, s, st in tasks}.values())
    pool = mp.get_context("spawn").Pool(min(8, max(1, (os.cpu_count() or 2) // 2)))
    return pool, pool.map_async(_prewarm, tasks)


def finish_prewarm():
    """Wait (bounded) for the compile workers and stop them before anything is timed: their tiny
    launches must not overlap a measurement. Returns what they reported."""
    pool, pending = S.pop("prewarm", (None, None))
    if pool is None:
        return None
    try:
        result = pending.get(timeout=max(5.0, min(60.0, left_s() - 120)))
    except Exception as exc:  # noqa: BLE001  (a timeout or a worker's error: compile inline)
        result = f"{type(exc).__name__}: {exc}"[:500]
    pool.terminate()
    pool.join()
    print(f"  prewarm: {result}", flush=True)
    return result


# --------------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------------
def check_correctness(out: dict) -> None:
    import torch


    from kernels.declare import matmul_problem as mp

    big = S["configs"][0]
    over = tiles_shape(S["sm_count"] + 1, big)  # one tile past a 1-block-per-SM wave
    shapes = [(127, 255, 129), (1021, 769, 1283), (over[0], over[1], 1024)] if S["gpu"] else \
        [(37, 45, 29), (64, 96, 80)]
    rows = out["rows"] = []
    # the interpreter's bfloat16 is wrong upstream: a dry run checks float32 instead
    for dtype in (torch.float16, torch.bfloat16 if S["gpu"] else torch.float32):
        name = str(dtype).removeprefix("torch.")
        for M, N, K in shapes:
            a, b = rand(M, K, dtype), rand(K, N, dtype)
            # float64 truth from the rounded inputs, on the device (or numpy on the CPU)
            ref = a.double() @ b.double()
            for kind in KINDS:
                c = torch.empty(M, N, dtype=dtype, device=S["device"])
                run = make(kind, a, b, c, big, programs=S["sm_count"])
                errs = []
                for _ in range(2):  # the second call shows the stream-K workspace came back clean
                    c.fill_(float("nan"))
                    run()
                    sync()
                    errs.append(float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref)))
                ok = all(e < mp.TOLERANCE[name] for e in errs)  # NaN fails
                rows.append({"kind": kind, "dtype": name, "M": M, "N": N, "K": K,
                             "rel_frobenius_error": errs, "tolerance": mp.TOLERANCE[name],
                             "ok": ok})
                print(f"  {kind:10s} {name:8s} {M}x{N}x{K}: {max(errs):.2e} "
                      f"{'ok' if ok else 'FAIL'}", flush=True)
    bad = [r for r in rows if not r["ok"]]
    claim("correctness vs float64 (rel. Frobenius: fp16 < 2e-3, bf16 < 1e-2)",
          f"{len(rows) - len(bad)}/{len(rows)} ok", not bad)


def compare_configs(out: dict) -> None:
    import torch

    n = 8192 if S["gpu"] else 128
    a, b = rand(n, n, torch.bfloat16), rand(n, n, torch.bfloat16)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=S["device"])
    rows = out["at_8192"] = []
    torch_ms = measure(make("torch", a, b, c), n, n, n)
    rows.append({"kind": "torch", "n": n, **torch_ms})
    S["torch_8192_tflops"] = torch_ms["tflops"]
    for kinds, configs in ((("tiled",), S["configs"]), (("persistent", "stream_k"), None)):
        for kind in kinds:
            best = None
            for config in configs or S["persistent_configs"]:
                if left_s() < S["reserve_after_configs"]:
                    break
                try:
                    run, info = prepare(kind, a, b, c, config)
                    row = {**info, "n": n, **measure(run, n, n, n)}
                except Exception as exc:  # a config that does not compile or fit: keep going
                    row = {"kind": kind, "config": config.label, "error": f"{exc}"[:300]}
                rows.append(row)
                print(f"  {kind:10s} {config.label:24s} {row.get('tflops', 0):7.1f} TFLOP/s "
                      f"regs={row.get('regs')} smem={row.get('smem_bytes')} "
                      f"blocks/SM={row.get('blocks_per_sm')}", flush=True)
                if "tflops" in row and (best is None or row["tflops"] > best[1]["tflops"]):
                    best = (config, row)
            if best:
                S.setdefault("best", {})[kind] = best[0]
                out.setdefault("best", {})[kind] = best[0].label
                if kind == "tiled":  # persistent kernels try the best tiled config too
                    S["persistent_configs"] = list(dict.fromkeys(
                        [best[0], *S["persistent_configs"]]))
    try:  # our median against triton.testing.do_bench's, same kernel, asked for the median
        import triton.testing
        run, _ = prepare("tiled", a, b, c, S["best"]["tiled"])
        q = triton.testing.do_bench(run, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
        out["do_bench_tiled_best_ms"] = {"median": q[0], "p20": q[1], "p80": q[2]}
    except Exception as exc:  # noqa: BLE001  (do_bench needs a GPU)
        out["do_bench_tiled_best_ms"] = f"{type(exc).__name__}: {exc}"[:200]
    scaling = out["scaling"] = []
    for size in ((2048, 4096, 8192) if S["gpu"] else (64, 128)):
        a, b = rand(size, size, torch.bfloat16), rand(size, size, torch.bfloat16)
        c = torch.empty(size, size, dtype=torch.bfloat16, device=S["device"])
        row = {"n": size, "torch": measure(make("torch", a, b, c), size, size, size)}
        for kind, config in S.get("best", {}).items():
            run, info = prepare(kind, a, b, c, config)
            row[kind] = {"config": config.label, **measure(run, size, size, size)}
            row[kind]["of_torch"] = row[kind]["tflops"] / row["torch"]["tflops"]
        scaling.append(row)
        print("  n=%d " % size + "  ".join(f"{k} {v['tflops']:.0f}" for k, v in row.items()
                                          if isinstance(v, dict)) + " TFLOP/s", flush=True)
    top = scaling[-1]
    if "tiled" in top:
        claim(f"tiled best ({top['tiled']['config']}) vs torch.matmul, bf16 n={top['n']}",
              f"{top['tiled']['tflops']:.0f} vs {top['torch']['tflops']:.0f} TFLOP/s = "
              f"{top['tiled']['of_torch']:.0%} (target >= 80%)", top["tiled"]["of_torch"] >= 0.8)
    for kind in ("persistent", "stream_k"):
        if kind in top:
            claim(f"{kind} best ({top[kind]['config']}) vs torch.matmul, bf16 n={top['n']}",
                  f"{top[kind]['of_torch']:.0%}", None)


def sawtooth(out: dict, k_depth: int) -> None:
    """Fixed M and K; N steps one tile width at a time, so the tile count climbs by tiles_m per
    point and crosses >= 3 multiples of the concurrent tiles (C = SMs x blocks per SM)."""
    import torch

    config = S.get("best", {}).get("tiled", S["configs"][0])
    K = k_depth if S["gpu"] else 64
    a0, b0 = rand(config.block_m, K, torch.bfloat16), rand(K, config.block_n, torch.bfloat16)
    c0 = torch.empty(config.block_m, config.block_n, dtype=torch.bfloat16, device=S["device"])
    info = {kind: prepare(kind, a0, b0, c0, config)[1] for kind in KINDS[:3]}
    C = info["tiled"]["concurrent_tiles"]
    tiles_m = math.ceil(3.3 * C / 60)  # about 60 points to 3.3 waves
    points = math.ceil(3.3 * C / tiles_m) if S["gpu"] else 5
    M = tiles_m * config.block_m
    out.update(config=config.label, M=M, K=K, tiles_m=tiles_m, concurrent_tiles=C,
               dtype="bfloat16", kernels=info, points=[])
    print(f"  {config.label}: C = {C} concurrent tiles, M = {M}, K = {K}, {points} points",
          flush=True)
    a = rand(M, K, torch.bfloat16)
    for j in range(1, points + 1):
        if left_s() < S["reserve_after_sawtooth"]:
            out["stopped"] = f"budget, after {j - 1} of {points} points"
            break
        N = j * config.block_n
        b = rand(K, N, torch.bfloat16)
        c = torch.empty(M, N, dtype=torch.bfloat16, device=S["device"])
        row = {"M": M, "N": N, "K": K, "tiles": tiles_m * j, "waves": tiles_m * j / C}
        for kind in KINDS:
            kinfo = info.get(kind, {})
            row[kind] = measure(make(kind, a, b, c, config, kinfo.get("programs")), M, N, K,
                                fast=True)
            row[kind].update({k: kinfo[k] for k in ("config", "regs", "smem_bytes",
                                                    "blocks_per_sm", "programs") if k in kinfo})
        out["points"].append(row)
        print(f"  N={N:6d} tiles={row['tiles']:4d} waves={row['waves']:.2f}  " + "  ".join(
            f"{k} {row[k]['tflops']:6.1f}" for k in KINDS) + " TFLOP/s", flush=True)


def quantization(out: dict) -> None:
    """One tile past a full wave against the full wave: tiled pays a whole second wave."""
    import torch

    config = S.get("best", {}).get("tiled", S["configs"][0])
    K = 8192 if S["gpu"] else 64
    a0, b0 = rand(config.block_m, K, torch.bfloat16), rand(K, config.block_n, torch.bfloat16)
    c0 = torch.empty(config.block_m, config.block_n, dtype=torch.bfloat16, device=S["device"])
    info = out["kernels"] = {k: prepare(k, a0, b0, c0, config)[1] for k in KINDS[:3]}
    C = info["tiled"]["concurrent_tiles"]
    sizes = {}
    for label, target in (("full", C), ("over", C + 1)):
        M, N, _, _ = tiles_shape(target, config)
        sizes[label] = (M, N, rand(M, K, torch.bfloat16), rand(K, N, torch.bfloat16),
                        torch.empty(M, N, dtype=torch.bfloat16, device=S["device"]), target)
    rows = out["rows"] = []
    for rnd in range(3):
        for label, (M, N, a, b, c, n_tiles) in sizes.items():
            if left_s() < S["reserve_after_quantization"]:
                out["stopped"] = f"budget, in round {rnd}"
                break
            row = {"round": rnd, "label": label, "M": M, "N": N, "K": K, "tiles": n_tiles,
                   "config": config.label}
            for kind in KINDS:
                programs = info.get(kind, {}).get("programs")
                row[kind] = measure(make(kind, a, b, c, config, programs), M, N, K)
            rows.append(row)
            print(f"  round {rnd} {label:4s} {M}x{N}x{K} tiles={n_tiles}  " + "  ".join(
                f"{k} {row[k]['median_ms']:.4f} ms" for k in KINDS), flush=True)
    ratio = out["over_vs_full_time"] = {}
    for kind in KINDS:
        times = {lab: [r[kind]["median_ms"] for r in rows if r["label"] == lab] for lab in sizes}
        if all(times.values()):
            ratio[kind] = min(times["over"]) / min(times["full"])
    claim(f"time at {C + 1} tiles / time at {C} tiles (work +{1 / C:.1%})",
          ", ".join(f"{k} {v:.2f}" for k, v in ratio.items()), None)


def record_traces(out: dict, command: str) -> None:
    """Per tile (or stream-K work unit): which SM, when its K loop started, when it stored."""
    import numpy as np
    import torch

    from kernels.bodies import matmul as mm

    from sim.traces.trace import trace_document

    config = S.get("best", {}).get("tiled", S["configs"][0])
    K = 8192 if S["gpu"] else 64
    a0, b0 = rand(config.block_m, K, torch.bfloat16), rand(K, config.block_n, torch.bfloat16)
    c0 = torch.empty(config.block_m, config.block_n, dtype=torch.bfloat16, device=S["device"])
    plain = {k: prepare(k, a0, b0, c0, config)[1] for k in KINDS[:3]}
    C = plain["tiled"]["concurrent_tiles"]
    flush = torch.empty(S["flush_bytes"], dtype=torch.int8, device=S["device"])
    docs = out["traces"] = []
    for target in (C, C + 1, round(2.5 * C)):
        M, N, _, _ = tiles_shape(target, config)
        a, b = rand(M, K, torch.bfloat16), rand(K, N, torch.bfloat16)
        c = torch.empty(M, N, dtype=torch.bfloat16, device=S["device"])
        for kind in KINDS[:3]:
            if left_s() < 3:
                out["stopped"] = "budget"
                return
            programs = plain[kind].get("programs")
            n_rows = mm.stamp_rows(M, N, config, programs, kind == "stream_k")
            stamps = torch.full((n_rows, 7), -1, dtype=torch.int64, device=S["device"])
            run = make(kind, a, b, c, config, programs, stamps)
            info = compiled_info(kind, run(), config)  # compiles and warms up
            stamps.fill_(-1)
            flush.zero_()  # as before a timed rep: inputs come from DRAM ...
            torch.cuda._sleep(SPIN_CYCLES)  # ... and the events time the GPU, not the launch gap
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            sync()
            rows = stamps.cpu().numpy()
            rows = rows[rows[:, 0] >= 0]
            problems = check_stamps(rows, M, N, K, config)
            t0 = rows[:, 2].min()
            records = [(i, r[1], -1, (r[2] - t0) / 1e3, (r[3] - t0) / 1e3)
                       for i, r in enumerate(rows)]
            meta = {"kernel": kind, "dtype": "bfloat16", "M": M, "N": N, "K": K,
                    "config": config.to_dict(), "config_label": config.label,
                    "regs": info["regs"], "smem": info["smem_bytes"],
                    "blocks_per_sm": info["blocks_per_sm"], "tiles": target,
                    "programs": programs if kind != "tiled" else target,
                    "sm_count": S["sm_count"], "command": command,
                    "timer": "%globaltimer (ns): start when the tile's K loop starts, end after "
                             "its store; relative to the earliest start",
                    "event_ms": start.elapsed_time(end), "problems": problems,
                    "extra_columns": ["tile", "program", "k_begin", "k_end"],
                    "extra": rows[:, [0, 6, 4, 5]].tolist()}
            doc = trace_document(source="recorded", gpu=S["spec"].name, records=records, meta=meta)
            ends = (rows[:, 3] - t0) / 1e3
            docs.append({"name": f"matmul_{kind}_{target}tiles", "trace": doc})
            print(f"  {kind:10s} tiles={target:4d} rows={len(rows):4d} "
                  f"SMs={len(np.unique(rows[:, 1]))} makespan={ends.max():8.1f} us "
                  f"events={meta['event_ms'] * 1e3:8.1f} us"
                  f"{' PROBLEMS: ' + '; '.join(problems) if problems else ''}", flush=True)
    claim("recorded per-tile schedules", f"{len(docs)} traces, "
          f"{sum(bool(d['trace']['meta']['problems']) for d in docs)} with problems",
          not any(d["trace"]["meta"]["problems"] for d in docs))


def check_stamps(rows, M, N, K, config) -> list[str]:
    """Every tile's K range covered exactly once, SMs in range, end after start."""
    import numpy as np

    from kernels.bodies import matmul as mm


    problems = []
    k_tiles = -(-K // config.block_k)
    done = np.zeros(mm.tiles(M, N, config), dtype=int)
    for tile, _, _, _, k0, k1, _ in rows:
        done[tile] += k1 - k0
    if (done != k_tiles).any():
        problems.append(f"{int((done != k_tiles).sum())} tiles not covered exactly once")
    if ((rows[:, 1] < 0) | (rows[:, 1] >= S["sm_count"])).any():
        problems.append("SM ids out of range")
    if (rows[:, 3] < rows[:, 2]).any():
        problems.append("a row ends before it starts")
    return problems


def ceilings(out: dict) -> None:
    peak = S["spec"].tensor_tflops_bf16
    measured = S.get("torch_8192_tflops")
    out.update(spec=S["spec"].name, datasheet_dense_bf16_tflops=peak,
               measured_torch_bf16_8192_tflops=measured,
               note="H200 SXM datasheet: 1,979 TFLOPS BF16 with 2:4 sparsity, dense 989.4; "
                    "earlier runs on this machine measured 769-798 with torch.matmul")
    if measured and peak:
        claim("torch.matmul bf16 n=8192 (measured cuBLAS ceiling) of the datasheet dense peak",
              f"{measured:.0f} of {peak:.0f} TFLOP/s = {measured / peak:.0%}", None)


def environment(out: dict) -> None:
    import numpy as np
    import torch
    import triton

    out.update(python=platform.python_version(), torch=torch.__version__,
               triton=triton.__version__, numpy=np.__version__,
               available={k: v.reason or "gpu" for k, v in kernels.available().items()})
    if S["gpu"]:
        p = torch.cuda.get_device_properties(0)
        out.update(device=p.name, sm_count=p.multi_processor_count,
                   l2_bytes=getattr(p, "L2_cache_size", None),
                   bf16_reduced_precision_reduction=torch.backends.cuda.matmul
                   .allow_bf16_reduced_precision_reduction,
                   fp16_reduced_precision_reduction=torch.backends.cuda.matmul
                   .allow_fp16_reduced_precision_reduction)
        try:
            out["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                 "temperature.gpu,power.draw,power.limit", "--format=csv"],
                capture_output=True, text=True, timeout=20).stdout.strip()
        except Exception as exc:  # noqa: BLE001
            out["nvidia_smi"] = f"unavailable: {exc}"
    print(json.dumps(out, indent=1, default=str), flush=True)
