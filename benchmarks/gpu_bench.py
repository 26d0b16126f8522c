#!/usr/bin/env python3
"""Everything kernels/ claims, checked and timed on a real GPU in one call.

    python3 benchmarks/gpu_bench.py --out "$OUT"            # on the GPU machine (~5 min on an H200)
    python benchmarks/gpu_bench.py --out /tmp/gb --quick    # dry run here: tiny sizes, CPU path;
                                                            # GPU-only sections report "needs a GPU"

Sections (each one's failure is recorded and the rest still runs):
  env         versions, nvidia-smi clocks, the numpy shim, kernels.available()
  device      the real device as a sim GpuSpec (peak from memory clock x bus width)
  checks      every registry kernel against float64 at the article's sizes
  headline    2^28 float32: fast/naive/tutorial adds and copies, torch peers in the same rounds
  configs     Triton BLOCK_SIZE x num_warps and Numba threads per block at 2^28
  sweep       all streaming kernels over sizes -> bench_h200.json (warpscope-bench/1)
  do_bench    our median vs triton.testing.do_bench(return_mode="median"), same flush
  repeat      the same point measured 5 times from scratch: spread
  add_relu    eager vs torch.compile vs fused Triton/Numba at 2^26
  flush_trap  the L2 trap: torch.add with and without the flush
  count       kernels per call with torch.profiler
  launch      launch returned vs work finished
  square      the square example's five host steps
  numba       registers, PTX loads and bytes in flight: why the naive kernel is slower
  traces      block placement: short and long spins
Writes gpu_bench.json (all of it), bench_h200.json and numba_ptx.txt under --out, and prints a
summary table last.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import kernels  # noqa: E402  (cheap; sets the CPU fallback when there is no GPU)
from kernels.launching.compat import apply_numpy_shims  # noqa: E402
from gpu_bench_causes import numba_analysis, run_variants  # noqa: E402  (beside this script)

R: dict = {}  # section -> results
SUMMARY: list[tuple[str, str, str]] = []  # (claim, figure, verdict)
OUT_FILE = ""  # gpu_bench.json under --out


@contextlib.contextmanager
def section(name: str):
    t0 = time.time()
    print(f"\n=== {name} ===", flush=True)
    try:
        yield
    except Exception as exc:  # record and go on: one broken section must not cost the call
        R[name] = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        print(f"[{name}] FAILED: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}",
              flush=True)
    finally:
        R.setdefault("_seconds", {})[name] = round(time.time() - t0, 1)
        print(f"[{name}: {time.time() - t0:.1f} s]", flush=True)
        if OUT_FILE:  # after every section, so a call cut short still brings back what it had
            R["summary"] = SUMMARY
            with open(OUT_FILE, "w") as fh:
                json.dump(R, fh, indent=1, default=str)


def claim(what: str, figure: str, ok: bool | None) -> None:
    SUMMARY.append((what, figure, {True: "PASS", False: "MISS", None: "info"}[ok]))
    print(f"  -> {what}: {figure} [{SUMMARY[-1][2]}]", flush=True)


def m_dict(m) -> dict:
    d = dataclasses.asdict(m)
    d["limited_by"] = list(m.limited_by)
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the result files")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a dry run of the code paths")
    ap.add_argument("--skip-checks", action="store_true",
                    help="leave the correctness table to `python3 main.py check` run beside it")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    global OUT_FILE
    OUT_FILE = os.path.join(args.out, "gpu_bench.json")
    big = 1 << (12 if args.quick else 28)
    mid = 1 << (10 if args.quick else 26)
    sizes = [1 << k for k in ((8, 10, 12) if args.quick else (16, 20, 24, 26, 28))]
    reps = 3 if args.quick else 50
    t_start = time.time()

    with section("env"):
        shims = apply_numpy_shims()
        import numpy as np
        import torch

        R["env"] = {"python": platform.python_version(), "torch": torch.__version__,
                    "numpy": np.__version__, "shims_applied": shims,
                    "available": {k: dataclasses.asdict(v) for k, v in kernels.available().items()}}
        for mod in ("triton", "numba", "numba_cuda"):
            try:
                R["env"][mod] = __import__(mod).__version__
            except Exception as exc:  # noqa: BLE001
                R["env"][mod] = f"not importable: {exc}"
        try:
            R["env"]["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                 "temperature.gpu,power.draw,memory.used", "--format=csv"],
                capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as exc:  # noqa: BLE001
            R["env"]["nvidia_smi"] = f"unavailable: {exc}"
        print(json.dumps(R["env"], indent=1, default=str))

    from kernels.launching.device import detect_device
    from kernels.measure.harness import measure
    from kernels.declare.registry import KERNELS, get_kernel

    gpu, why = detect_device()
    on_gpu = gpu is not None
    name = gpu.name if on_gpu else f"CPU ({why})"

    def meas(kernel, n, block=None, warps=None, **kw):
        kw.setdefault("reps", reps)
        return measure(get_kernel(kernel), n, block, warps, gpu=gpu, device_name=name,
                       **kw)

    with section("device"):
        R["device"] = gpu.to_dict() if on_gpu else {"none": why}
        print(R["device"])

    with section("checks"):
        if args.skip_checks:
            raise RuntimeError("skipped (--skip-checks): see `main.py check` output")
        from kernels.measure.check import format_table, run_checks

        results = run_checks()
        print(format_table(results))
        R["checks"] = {"rows": [dataclasses.asdict(r) for r in results],
                       "fail": sum(r.status == "FAIL" for r in results),
                       "ok": sum(r.status == "OK" for r in results)}
        claim("every registry kernel correct (article sizes)",
              f"{R['checks']['ok']} OK, {R['checks']['fail']} FAIL", R["checks"]["fail"] == 0)

    # -- headline: 2^28, three interleaved rounds, peers in the same rounds ------------------
    headline = ["copy_torch", "add_torch", "add_triton", "add_triton_tutorial", "add_numba",
                "add_numba_naive", "add_numba_gridstride", "copy_triton"]
    with section("headline"):
        rounds = []
        for r in range(3):
            row = {}
            for k in headline:
                m = meas(k, big, check=(r == 0))
                row[k] = m_dict(m)
                print(f"  round {r} {k:22s} {m.median_ms:8.4f} ms {m.bandwidth_gbps:8.0f} GB/s "
                      f"regs={m.regs_per_thread} occ={m.occupancy} waves={m.waves}", flush=True)
            rounds.append(row)
        med = {k: statistics.median(rd[k]["bandwidth_gbps"] for rd in rounds) for k in headline}
        ratio = {k: med[k] / med["add_torch"] for k in headline}
        per_round = {k: [rd[k]["bandwidth_gbps"] / rd["add_torch"]["bandwidth_gbps"]
                         for rd in rounds] for k in headline}
        R["headline"] = {"elements": big, "rounds": rounds, "median_gbps": med,
                         "ratio_to_torch_add": ratio, "ratio_per_round": per_round,
                         "copy_ceiling_gbps": med["copy_torch"],
                         "peak_dram_gbps": gpu.peak_dram_gbps if on_gpu else None}
        claim("fast Triton add >= 99% of torch.add at 2^28",
              f"{ratio['add_triton']:.1%} "
              f"({med['add_triton']:,.0f} vs {med['add_torch']:,.0f} GB/s)",
              ratio["add_triton"] >= 0.99)
        claim("fast Numba add >= 95% of torch.add at 2^28",
              f"{ratio['add_numba']:.1%} ({med['add_numba']:,.0f} GB/s)",
              ratio["add_numba"] >= 0.95)
        claim("naive Numba add vs torch.add at 2^28 (was 79%)",
              f"{ratio['add_numba_naive']:.1%}", None)
        claim("Triton tutorial add vs torch.add at 2^28",
              f"{ratio['add_triton_tutorial']:.1%}", None)
        if on_gpu:
            claim("copy ceiling / theoretical peak",
                  f"{med['copy_torch']:,.0f} / {gpu.peak_dram_gbps:,.0f} GB/s "
                  f"({med['copy_torch'] / gpu.peak_dram_gbps:.1%})", None)

    with section("configs"):
        rows = []
        ref = meas("add_torch", big).bandwidth_gbps
        for block, warps in ((1024, 4), (1024, 8), (2048, 4), (2048, 8), (4096, 4), (4096, 8),
                             (8192, 8), (8192, 16)):
            m = meas("add_triton", big, block, warps, check=False)
            rows.append({"kernel": "add_triton", "block": block, "warps": warps,
                         "gbps": m.bandwidth_gbps, "regs": m.regs_per_thread,
                         "ratio_to_torch": m.bandwidth_gbps / ref})
            print(f"  add_triton BLOCK={block:6d} warps={warps:2d} {m.bandwidth_gbps:8.0f} GB/s "
                  f"{m.bandwidth_gbps / ref:6.1%} regs={m.regs_per_thread}", flush=True)
        for kernel in ("add_numba", "add_numba_naive"):
            for threads in (128, 256, 512, 1024):
                m = meas(kernel, big, threads, check=False)
                rows.append({"kernel": kernel, "block": threads, "gbps": m.bandwidth_gbps,
                             "regs": m.regs_per_thread, "ratio_to_torch": m.bandwidth_gbps / ref,
                             "grid_blocks": m.grid_blocks})
                print(f"  {kernel:16s} threads={threads:5d} {m.bandwidth_gbps:8.0f} GB/s "
                      f"{m.bandwidth_gbps / ref:6.1%} regs={m.regs_per_thread} "
                      f"blocks={m.grid_blocks:,}",
                      flush=True)
        R["configs"] = {"torch_add_gbps": ref, "rows": rows}
        best = max((r for r in rows if r["kernel"] == "add_triton"), key=lambda r: r["gbps"])
        claim("best fast-Triton-add config at 2^28",
              f"BLOCK {best['block']} x {best['warps']} warps: {best['ratio_to_torch']:.1%}", None)

    with section("variants"):
        R["variants"] = run_variants(big, on_gpu, gpu)

    with section("sweep"):
        from kernels.measure.bench import sweep
        from kernels.measure.results import save_results

        names = [k.name for k in KERNELS if k.benchable]
        res = sweep(names, sizes, reps=reps, allow_cpu=not on_gpu,
                    command="python3 benchmarks/gpu_bench.py (sweep section)",
                    on_progress=lambda d, t, label: print(f"  [{d}/{t}] {label}", flush=True))
        save_results(res, os.path.join(args.out, "bench_h200.json"))
        R["sweep"] = {"copy_ceiling_gbps": res.copy_ceiling_gbps, "points": len(res.measurements),
                      "file": "bench_h200.json"}

    with section("do_bench"):
        from kernels.measure.harness import bind, first_run, make_arrays
        from kernels.measure.timing import flush_bytes_for, summarize, time_gpu

        rows = []
        for n in [s for s in sizes if s >= (1 << 20)] or sizes[-1:]:
            for k in ("add_triton", "add_torch", "add_numba"):
                spec = get_kernel(k)
                inputs, out = make_arrays(spec, n, on_gpu)
                launch = bind(spec, inputs, out, None, None)
                first_run(spec, launch)
                if not on_gpu:
                    raise RuntimeError("needs a GPU (do_bench has no CPU driver)")
                import triton.testing

                flush = flush_bytes_for(gpu.l2_bytes)
                row = {"kernel": k, "elements": n, "ours_ms": [], "ours_flush_only_ms": [],
                       "do_bench_ms": []}
                for _ in range(3):  # interleaved, so drifts hit all three alike
                    row["ours_ms"].append(summarize(time_gpu(launch.run, flush_bytes=flush))[0])
                    row["ours_flush_only_ms"].append(
                        summarize(time_gpu(launch.run, flush_bytes=flush, ahead="flush_only"))[0])
                    row["do_bench_ms"].append(triton.testing.do_bench(
                        launch.run, warmup=25, rep=100, return_mode="median"))
                for key in ("ours_ms", "ours_flush_only_ms", "do_bench_ms"):
                    v = row[key]
                    row[key.replace("_ms", "_spread")] = (max(v) - min(v)) / statistics.median(v)
                db = statistics.median(row["do_bench_ms"])
                ours = statistics.median(row["ours_ms"])
                fo = statistics.median(row["ours_flush_only_ms"])
                row["diff"], row["diff_flush_only"] = ours / db - 1, fo / db - 1
                rows.append(row)
                runs = ", ".join("%.5f" % v for v in row["do_bench_ms"])
                print(f"  {k:12s} n=2^{n.bit_length() - 1} ours {ours:.5f} "
                      f"(flush only {fo:.5f}) ms, do_bench {db:.5f} ms [{runs}]: "
                      f"diff {row['diff']:+.2%}, flush-only diff {row['diff_flush_only']:+.2%}",
                      flush=True)
                del inputs, out, launch
        gpu_side = [r for r in rows if r["kernel"] != "add_numba"]  # do_bench times Numba's CPU gap
        worst = max(abs(r["diff"]) for r in gpu_side)
        worst_fo = max(abs(r["diff_flush_only"]) for r in gpu_side)
        worst_big = max(abs(r["diff"]) for r in rows if r["elements"] >= (1 << 24))
        R["do_bench"] = {"rows": rows, "worst_abs_diff_triton_torch": worst,
                         "worst_abs_diff_flush_only_triton_torch": worst_fo,
                         "worst_abs_diff_all_ge_2_24": worst_big}
        claim("harness (flush only = do_bench's method) vs do_bench, Triton+torch, >= 2^20",
              f"worst {worst_fo:.2%}", worst_fo <= 0.03)
        claim("harness (flush + spin, default) vs do_bench, Triton+torch, >= 2^20",
              f"worst {worst:.2%}", worst <= 0.03)
        claim("harness (default) vs do_bench, all three, >= 2^24", f"worst {worst_big:.2%}",
              worst_big <= 0.03)

    with section("repeat"):
        rows = []
        for k in ("add_triton", "add_numba", "add_torch", "copy_torch"):
            for n in (sizes[-3], big):
                vals = [meas(k, n, check=False).median_ms for _ in range(5)]
                spread = (max(vals) - min(vals)) / statistics.median(vals)
                rows.append({"kernel": k, "elements": n, "median_ms": vals, "spread": spread})
                print(f"  {k:12s} n={n:>11,} medians {['%.5f' % v for v in vals]} "
                      f"spread {spread:.2%}", flush=True)
        worst = max(r["spread"] for r in rows)
        R["repeat"] = {"rows": rows, "worst_spread": worst}
        claim("repeats of one measurement (5 fresh runs)", f"worst spread {worst:.2%}",
              worst <= 0.02)

    with section("add_relu"):
        variants = ("add_relu_torch_eager", "add_relu_torch_compile", "add_relu_triton",
                    "add_relu_numba")
        rounds = [{v: m_dict(meas(v, mid, check=(r == 0))) for v in variants} for r in range(3)]
        ms = {v: statistics.median(rd[v]["median_ms"] for rd in rounds) for v in variants}
        ratio = {v: ms[v] / ms["add_relu_torch_eager"] for v in variants}
        R["add_relu"] = {"elements": mid, "median_ms": ms, "ratio_to_eager": ratio,
                         "rounds": rounds}
        for v in variants:
            print(f"  {v:24s} {ms[v]:.4f} ms  x{ratio[v]:.3f} of eager", flush=True)
        claim("fused Triton add+ReLU time / eager at 2^26 (<= 0.65)",
              f"{ratio['add_relu_triton']:.3f}", ratio["add_relu_triton"] <= 0.65)
        claim("torch.compile / eager; fused Numba / eager",
              f"{ratio['add_relu_torch_compile']:.3f}; {ratio['add_relu_numba']:.3f}", None)

    with section("flush_trap"):
        rows = []
        for n in (1 << 16, 1 << 20, 1 << 22, 1 << 24):
            row = {"elements": n}
            for ahead in ("flush", "spin", "none"):
                m = meas("add_torch", n, ahead=ahead, check=False)
                row[ahead] = {"gbps": m.bandwidth_gbps, "median_ms": m.median_ms,
                              "method": m.method}
            rows.append(row)
            print(f"  add_torch n={n:>10,}: flushed {row['flush']['gbps']:7.0f} GB/s, L2 warm "
                  f"{row['spin']['gbps']:7.0f} GB/s, "
                  f"nothing queued {row['none']['gbps']:7.0f} GB/s",
                  flush=True)
        R["flush_trap"] = {"rows": rows}
        r = rows[1]
        claim("traps at 2^20, torch.add: flushed / L2 warm / lone launch (GB/s)",
              f"{r['flush']['gbps']:,.0f} / {r['spin']['gbps']:,.0f} / {r['none']['gbps']:,.0f}",
              None)

    with section("count"):
        from kernels.measure.experiments import count_kernels

        counts = count_kernels(elements=1_000_000)
        R["count"] = [dataclasses.asdict(c) for c in counts]
        for c in counts:
            print(f"  {c.variant:24s} {c.count} kernel(s), {c.total_gpu_us:.2f} us: "
                  f"{[(n[:60], round(t, 2)) for n, t in c.kernels]}", flush=True)
        by = {c.variant: c.count for c in counts}
        claim("kernels per call: eager / compile / Triton / Numba (want 2/1/1/1)",
              f"{by['add_relu_torch_eager']}/{by['add_relu_torch_compile']}/"
              f"{by['add_relu_triton']}/{by['add_relu_numba']}",
              [by[v] for v in ("add_relu_torch_eager", "add_relu_torch_compile", "add_relu_triton",
                               "add_relu_numba")] == [2, 1, 1, 1])

    with section("launch"):
        from kernels.measure.experiments import launch_vs_finish

        rows = [dataclasses.asdict(launch_vs_finish(k, 50_000_000))
                for k in ("add_torch", "add_triton", "add_numba_naive", "add_numba")]
        R["launch"] = rows
        for r in rows:
            print(f"  {r['kernel']:16s} launch returned {r['launch_returned_us']:8.1f} us, "
                  f"work finished {r['work_finished_us']:8.1f} us", flush=True)
        claim("c = a + b on 50M: launch returned / work finished",
              f"{rows[0]['launch_returned_us']:.0f} / {rows[0]['work_finished_us']:.0f} us", None)

    with section("square"):
        from kernels.measure.experiments import square_host_steps

        R["square"] = {}
        for n in (8, 1 << 24):
            hs = square_host_steps(elements=n)
            R["square"][str(n)] = dataclasses.asdict(hs)
            print(f"  n={n:,}: " + ", ".join(f"{s.name} {s.duration_ms:.3f} ms" for s in hs.steps)
                  + f"; correct={hs.correct}", flush=True)
        s = R["square"][str(1 << 24)]["steps"]
        claim("square 2^24, five host steps (ms)",
              " / ".join(f"{x['name']} {x['duration_ms']:.2f}" for x in s), None)

    with section("numba"):
        R["numba"] = numba_analysis(args.out, gpu, R.get("headline", {}))

    with section("traces"):
        if not on_gpu:
            raise RuntimeError("needs a GPU (inline PTX)")
        from kernels.tracing.trace import check_trace, record_trace, summarize_trace

        R["traces"] = {}
        for warps, spin in ((4, 20.0), (4, 200.0), (8, 200.0)):
            t = record_trace(None, warps, spin, command="benchmarks/gpu_bench.py traces")
            s = summarize_trace(t) | {"problems": check_trace(t)}
            R["traces"][f"warps{warps}_spin{int(spin)}us"] = s
            print(f"  warps={warps} spin={spin} us: {s}", flush=True)

    R["total_seconds"] = round(time.time() - t_start, 1)
    R["summary"] = SUMMARY
    with open(OUT_FILE, "w") as fh:
        json.dump(R, fh, indent=1, default=str)
    print("\n=== summary ({}; {:.0f} s) ===".format(name, R["total_seconds"]))
    w = max(len(c) for c, _, _ in SUMMARY) if SUMMARY else 10
    for what, fig, verdict in SUMMARY:
        print(f"{verdict:4}  {what:{w}s}  {fig}")
    errors = [k for k, v in R.items() if isinstance(v, dict) and "error" in v]
    print("sections with errors:", errors or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
