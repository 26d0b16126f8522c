#!/usr/bin/env python3
"""The matmul kernels on a real GPU in one call: right, fast, and how waves quantize.

    PYTHONUNBUFFERED=1 python3 benchmarks/matmul_run.py --out "$OUT" --budget-s 200   # on the GPU
    python benchmarks/matmul_run.py --out /tmp/mr --dry-run     # here: tiny sizes, the interpreter
    python benchmarks/matmul_run.py --split-traces RESULTS.json DIR   # embedded traces -> files

Steps, most important first (each one's failure is recorded and the rest still runs; a step
starts only if the budget leaves room for it and the ones after it):
  correctness   every kernel, fp16 and bf16, at odd sizes and at 133 tiles, vs float64
  configs       tutorial 03's Hopper configs at 8192^3 bf16; then the best tiled, persistent and
                stream-K configs against torch.matmul at 2048, 4096, 8192
  sawtooth      fixed M and K, N stepped one tile at a time across >= 3 waves: all four kernels
  quantization  one tile past a full wave vs the full wave, 3 rounds
  traces        per-tile (sm, start, end) of the stamping variants at 1, 1+1/C and 2.5 waves
  ceilings      torch.matmul bf16 at 8192 (measured) beside the datasheet's dense peak
Timing: CUDA events, median with p20/p80 after warm-up; before every rep a buffer of 2 x L2 is
zeroed and a short spin kernel queued (kernels/measure/timing.py). Inputs are random, never zeros.
Writes DIR/matmul_h200.json (traces embedded in warpscope-trace/1 form); prints a table last.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import kernels  # noqa: E402  (cheap; no GPU: switches Triton to its interpreter)
from matmul_steps import (KINDS, S, SUMMARY, check_correctness, ceilings,  # noqa: E402
                          compare_configs, environment, finish_prewarm, left_s, quantization,
                          record_traces, sawtooth, start_prewarm)

R: dict = {"steps": {}}  # everything measured; written after every step


# --------------------------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------------------------
def run_step(name: str, reserve_s: float, fn, *args) -> None:
    """fn(out, *args) if more than reserve_s (the later steps' share) is left; any failure is
    recorded in out and the run goes on; the results file is rewritten after every step."""
    t0 = time.time()
    print(f"\n=== {name} ({left_s():.0f} s left) ===", flush=True)
    out = R["steps"][name] = {}
    if left_s() < reserve_s:
        out["skipped"] = f"budget: {left_s():.0f} s left, needed {reserve_s:.0f}"
        print(f"[{name}] skipped: budget", flush=True)
        return
    try:
        fn(out, *args)
    except Exception as exc:  # record and go on
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()[-3000:]
        print(f"[{name}] FAILED: {type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}",
              flush=True)
    finally:
        out["seconds"] = round(time.time() - t0, 1)
        save()


def save() -> None:
    R["summary"] = SUMMARY
    R["wall_s"] = round(time.time() - S["t0"], 1)
    with open(S["out_file"] + ".tmp", "w") as fh:
        json.dump(R, fh, separators=(",", ":"), default=str)
    os.replace(S["out_file"] + ".tmp", S["out_file"])


# --------------------------------------------------------------------------------------------
def split_traces(results: str, folder: str) -> int:
    from sim.inputs.files import write_json_atomic

    with open(results, encoding="utf-8") as fh:
        data = json.load(fh)
    os.makedirs(folder, exist_ok=True)
    for item in data["steps"].get("traces", {}).get("traces", []):
        path = os.path.join(folder, item["name"] + ".json")
        write_json_atomic(path, item["trace"])
        print(path)
    return 0


def print_table() -> None:
    q = R["steps"].get("quantization", {}).get("rows", [])
    if q:
        print("\nquantization (median ms, best of 3 rounds):")
        for label in ("full", "over"):
            rs = [r for r in q if r["label"] == label]
            print(f"  {label:4s} tiles={rs[0]['tiles']:4d}  " + "  ".join(
                f"{k} {min(r[k]['median_ms'] for r in rs):.4f}" for k in KINDS))
    print("\n%-78s %-44s %s" % ("claim", "figure", "verdict"))
    for what, figure, verdict in SUMMARY:
        print("%-78s %-44s %s" % (what[:78], figure[:44], verdict))
    print(f"\nwall time {time.time() - S['t0']:.0f} s; results in {S['out_file']}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="folder for matmul_h200.json")
    ap.add_argument("--budget-s", type=float, default=200.0, help="stop cleanly after this long")
    ap.add_argument("--sawtooth-k", type=int, default=8192,
                    help="K of the sawtooth (compute-bound)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: tiny sizes through Triton's interpreter, to test this script")
    ap.add_argument("--split-traces", nargs=2, metavar=("RESULTS", "DIR"),
                    help="write the traces embedded in a results file as trace files, and exit")
    args = ap.parse_args()
    if args.split_traces:
        return split_traces(*args.split_traces)
    if not args.out:
        ap.error("--out is required")
    triton_status = kernels.available()["triton"]
    if not triton_status.is_gpu and not args.dry_run:
        print(f"needs a GPU ({triton_status.reason}); --dry-run tests the script without one")
        return 2
    import torch

    from kernels.bodies import matmul as mm
    from kernels.measure.timing import flush_bytes_for
    from sim.rules.devices import preset, preset_for_device_name

    os.makedirs(args.out, exist_ok=True)
    gpu = triton_status.is_gpu
    props = torch.cuda.get_device_properties(0) if gpu else None
    spec = (preset_for_device_name(props.name, props.multi_processor_count) if gpu else None) \
        or preset("H200")
    small = mm.MatmulConfig(32, 32, 16, 2, 4, 2)
    S.update(t0=time.time(), deadline=time.time() + args.budget_s, gpu=gpu, spec=spec,
             device="cuda" if gpu else "cpu",
             sm_count=props.multi_processor_count if gpu else 4,  # dry run: pretend 4 SMs
             flush_bytes=flush_bytes_for(spec.l2_bytes),
             out_file=os.path.join(args.out, "matmul_h200.json"),
             configs=list(mm.HOPPER_CONFIGS) if gpu else [small],
             persistent_configs=list(mm.HOPPER_CONFIGS[:2]) if gpu else [small],
             reserve_after_configs=70, reserve_after_sawtooth=35, reserve_after_quantization=15)
    command = "PYTHONUNBUFFERED=1 python3 " + " ".join(sys.argv)
    R.update(format="warpscope-matmul/1", command=command, created=time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), budget_s=args.budget_s, gpu_spec=spec.name,
        sm_count=S["sm_count"], is_gpu_timing=gpu,
        method=("CUDA events (kernels/measure/timing.time_gpu): warm-up, then median/p20/p80 of >= 20 "
                f"reps (10 in the sawtooth), {S['flush_bytes'] / 2**20:.0f} MiB zeroed and a spin "
                "kernel before each rep" if gpu else "host clock, interpreter: NOT GPU timings"),
        flops="2*M*N*K", bytes="2*(M*K + K*N + M*N) (A, B read once, C written once)",
        configs=[c.to_dict() for c in S["configs"]])
    torch.manual_seed(0)
    if gpu:
        try:
            S["prewarm"] = start_prewarm(S["configs"], S["persistent_configs"])
        except Exception as exc:  # noqa: BLE001  (compiling inline still works)
            R["prewarm"] = f"not started: {exc}"
    run_step("environment", 0, environment)
    run_step("correctness", 60, check_correctness)
    R["prewarm"] = finish_prewarm() or R.get("prewarm")
    run_step("configs", 50, compare_configs)
    run_step("sawtooth", 30, sawtooth, args.sawtooth_k)
    run_step("quantization", 15, quantization)
    if gpu:
        run_step("traces", 5, record_traces, command)
    else:
        R["steps"]["traces"] = {"skipped": "needs a GPU: the stamps are inline PTX"}
    run_step("ceilings", 0, ceilings)
    save()
    print_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
