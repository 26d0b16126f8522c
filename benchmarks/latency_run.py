#!/usr/bin/env python3
"""Latency hiding and timing methods on a real GPU, in one call (issue 12's measurements).

    PYTHONUNBUFFERED=1 python3 benchmarks/latency_run.py --out "$OUT" --budget-s 150
    python benchmarks/latency_run.py --out /tmp/lat     # here, without a GPU: the CPU path

Sections, most important first; a failing one is recorded and the rest still run, and the run
stops cleanly (recording what it skipped) when the budget is spent:
  calibration  the DRAM round trip by pointer chase (64 MiB and 2 GiB regions) and the turnover of
               blocks that do nothing, at forced occupancy: sim/model/latency.py's figures, measured
               apart from the bandwidths they predict
  occupancy    the naive and the four-per-thread Numba adds at 2^26 and 2^24, 256 threads,
               padded with dynamic shared memory to 1, 2, 3, 4, 6, 8 blocks per SM (plus unpadded),
               torch.add and the copy ceiling at each size before and after
  methods      add_triton, add_torch, add_numba_naive at 2^16, 2^20, 2^24, 2^26, timed six ways
  occupancy_extra  the naive add at 128 and 512 threads per block
Writes DIR/resources/measured/H200_latency.json after every section and prints a table at the end. Without a GPU it
runs the CPU path: the padding plan for the H200 preset, a padded launch in numba-cuda's simulator,
the timing methods on the interpreter/simulator (labelled as not GPU timings).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import kernels  # noqa: E402  (cheap; turns on the CPU fallback when there is no GPU)

SIZES_OCC = (1 << 26, 1 << 24)
SIZES_METHODS = (1 << 16, 1 << 20, 1 << 24, 1 << 26)
TARGETS = (1, 2, 3, 4, 6, 8, 12, 16)  # blocks per SM; those above what fits are left out
ADDS = ("add_numba_naive", "add_numba")
METHOD_KERNELS = ("add_triton", "add_torch", "add_numba_naive")
ADD_RATIO = 1.5  # the add loads x and y and stores out: GB/s counts 3 bytes per 2 loaded
CHASE_REGIONS = (64 << 20, 2 << 30)
CHASE_HOPS = 4096


class BudgetSpent(Exception):
    pass


class Run:
    """The result file, written whole after every section, and the clock."""

    def __init__(self, out_dir: str, budget_s: float):
        self.path = os.path.join(out_dir, "resources/measured/H200_latency.json")
        self.t0 = time.time()
        self.budget_s = budget_s
        self.data = {"format": "warpscope-latency/1",
                     "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                     "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
                     "budget_s": budget_s, "sections": {}, "errors": []}

    def left(self) -> float:
        return self.budget_s - (time.time() - self.t0)

    def need(self, seconds: float, what: str) -> None:
        if self.left() < seconds:
            raise BudgetSpent(f"budget spent before {what} ({self.left():.0f} s left)")

    def attempt(self, what: str, fn, *args) -> None:
        """One point: a failure is recorded and the section goes on (the budget still stops it)."""
        try:
            fn(*args)
        except BudgetSpent:
            raise
        except Exception as exc:  # noqa: BLE001
            error = f"{type(exc).__name__}: {exc}"
            self.data["errors"].append({"what": what, "error": error,
                                        "traceback": traceback.format_exc()[-2000:]})
            print(f"  {what} FAILED: {error}", flush=True)

    def section(self, name: str, fn) -> None:
        t = time.time()
        print(f"\n=== {name} ({self.left():.0f} s left) ===", flush=True)
        try:
            fn()
            status = "ok"
        except BudgetSpent as exc:
            status = f"stopped: {exc}"
        except Exception as exc:  # record and go on: one broken section must not cost the call
            status = f"error: {type(exc).__name__}: {exc}"
            self.data["errors"].append({"section": name, "error": status,
                                        "traceback": traceback.format_exc()[-3000:]})
            print(traceback.format_exc()[-2000:], flush=True)
        self.data["sections"][name] = {"status": status, "seconds": round(time.time() - t, 1)}
        print(f"[{name}: {status}, {time.time() - t:.1f} s]", flush=True)
        self.save()

    def save(self) -> None:
        from sim.inputs.files import write_json_atomic

        self.data["elapsed_s"] = round(time.time() - self.t0, 1)
        write_json_atomic(self.path, self.data, indent=1)


def env_info() -> dict:
    import numpy as np
    import torch

    info = {"python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__,
            "available": {k: dataclasses.asdict(v) for k, v in kernels.available().items()}}
    for mod in ("triton", "numba", "numba_cuda"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001
            info[mod] = f"not importable: {exc}"
    try:
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
             "temperature.gpu,power.draw", "--format=csv"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        info["nvidia_smi"] = f"unavailable: {exc}"
    return info


def stats_row(times_ms, nbytes: int) -> dict:
    from kernels.measure.timing import bandwidth_gbps, summarize

    med, p20, p80 = summarize(times_ms)
    return {"median_ms": med, "p20_ms": p20, "p80_ms": p80, "reps": len(times_ms),
            "gbps": bandwidth_gbps(nbytes, med), "gbps_p20": bandwidth_gbps(nbytes, p80),
            "gbps_p80": bandwidth_gbps(nbytes, p20)}


# --------------------------------------------------------------------------------------------
# Calibration: the DRAM round trip and a block's turnover, each apart from any bandwidth
# --------------------------------------------------------------------------------------------
def calibration(run: Run, gpu, on_gpu: bool, reps: int) -> None:
    from kernels.bodies import latency_kernels as lk
    from kernels.measure.timing import flush_bytes_for, summarize, time_gpu

    cal = run.data.setdefault("calibration", {"dram_latency": [], "idle_blocks": []})
    if not on_gpu:  # the simulator runs the chase, for the plumbing; nothing here is a timing
        nxt, out = lk.chase_array(1 << 16, 64, on_gpu=False)
        lk.chase_kernel[1, 1](nxt, 64, out)
        cal["dram_latency"].append({"note": "CPU path: the chase ran in numba-cuda's simulator "
                                            "and returned to its start: "
                                            f"{int(out[0]) == 0}; no GPU timing"})
        return
    flush = flush_bytes_for(gpu.l2_bytes)

    def chase(region):
        nxt, out = lk.chase_array(region, CHASE_HOPS)
        lk.chase_kernel[1, 1](nxt, CHASE_HOPS, out)  # compile, and check the cycle closes
        assert int(out.copy_to_host()[0]) == 0, "the chase did not return to its start"
        times = time_gpu(lambda: lk.chase_kernel[1, 1](nxt, CHASE_HOPS, out), reps=reps,
                         flush_bytes=flush, ahead="flush")
        med, p20, p80 = (t * 1e6 / CHASE_HOPS for t in summarize(times))
        cal["dram_latency"].append({"region_bytes": region, "hops": CHASE_HOPS,
                                    "median_ns": med, "p20_ns": p20, "p80_ns": p80,
                                    "reps": len(times), "method": "events, L2 flushed, one "
                                    "thread, each hop a new line in random order"})
        print(f"  DRAM round trip over {region >> 20:5d} MiB: {med:6.1f} ns "
              f"[{p20:.1f}-{p80:.1f}]", flush=True)

    for region in CHASE_REGIONS:
        run.need(10, f"the pointer chase over {region >> 20} MiB")
        run.attempt(f"pointer chase over {region >> 20} MiB", chase, region)

    import torch

    from kernels.bodies.numba_kernels import device_arrays
    from kernels.measure.occupancy_probe import padded_launch, padding_plan

    threads, n = 256, SIZES_OCC[0]  # the naive add's grid at 2^26
    grid = n // threads
    (out,) = device_arrays((torch.empty(n, device="cuda"),))

    def idle(target):
        launch = padded_launch(lk.idle_block_kernel, (out, 0), grid, threads, gpu, target)
        launch.run()
        times = time_gpu(launch.run, reps=reps, ahead="spin")
        med, p20, p80 = summarize(times)
        slots = launch.predicted.blocks_per_sm * gpu.sm_count
        row = {"threads": threads, "grid_blocks": grid, "target_blocks_per_sm": target,
               "dyn_smem_bytes": launch.dynamic_smem_bytes,
               "predicted_blocks_per_sm": launch.predicted.blocks_per_sm,
               "driver_blocks_per_sm": launch.driver_blocks_per_sm,
               "regs_per_thread": launch.regs_per_thread, "median_us": med * 1e3,
               "p20_us": p20 * 1e3, "p80_us": p80 * 1e3, "reps": len(times),
               "blocks_per_us": grid / (med * 1e3),
               "slot_turn_ns": med * 1e6 * slots / grid}
        cal["idle_blocks"].append(row)
        print(f"  idle blocks target={target} smem={launch.dynamic_smem_bytes:6d} "
              f"pred={row['predicted_blocks_per_sm']} drv={row['driver_blocks_per_sm']}: "
              f"{row['median_us']:7.1f} us, {row['blocks_per_us']:6.0f} blocks/us, "
              f"slot turn {row['slot_turn_ns']:6.1f} ns", flush=True)

    for target in [None] + [t for t, _, _ in padding_plan(gpu, threads, TARGETS, 16)]:
        run.need(5, "idle blocks")
        run.attempt(f"idle blocks, target {target}", idle, target)


# --------------------------------------------------------------------------------------------
# Forced occupancy
# --------------------------------------------------------------------------------------------
def model_inputs(run: Run, on_gpu: bool) -> dict:
    """Loads each thread has in flight, read from the PTX the GPU compiled (else the counts seen
    in numba-cuda 0.30.4's sm_90 PTX: 2 and 8)."""
    import numba

    import kernels.bodies.numba_kernels as nk
    from kernels.measure.occupancy_probe import loads_before_first_store

    inputs = {}
    for name, fn, fallback in (("add_numba_naive", nk.add_naive_kernel, 2),
                               ("add_numba", nk.add_kernel, 8)):
        loads, source = fallback, "numba-cuda 0.30.4 sm_90 PTX, compiled without a GPU"
        if on_gpu:
            try:
                sig = (numba.float32[::1],) * 3
                ptx = fn.inspect_asm(sig)
                loads, source = loads_before_first_store(ptx), "this run's PTX"
            except Exception as exc:  # noqa: BLE001
                source += f" (reading this run's failed: {exc})"
        inputs[name] = {"loads_in_flight_per_thread": loads, "bytes_per_load": 4,
                        "bytes_moved_per_byte_loaded": ADD_RATIO, "source": source}
    run.data["model_inputs"] = inputs
    return inputs


class OccupancySweep:
    """Numba adds padded to each number of blocks per SM, with their peers at the same size."""

    def __init__(self, run: Run, gpu, on_gpu: bool, reps: int, round_no: int = 1):
        import kernels.bodies.numba_kernels as nk
        from kernels.measure.timing import flush_bytes_for

        self.run, self.gpu, self.on_gpu, self.reps, self.round_no = run, gpu, on_gpu, reps, round_no
        self.occ = run.data.setdefault("occupancy", {"rows": [], "peers": []})
        self.inputs = run.data.get("model_inputs") or model_inputs(run, on_gpu)
        chase = [c for c in run.data.get("calibration", {}).get("dram_latency", [])
                 if c.get("region_bytes") == CHASE_REGIONS[0]]
        self.measured_latency = chase[0]["median_ns"] if chase else None
        # idle blocks' turn of a slot, by target, for the overhead term (256 threads only)
        self.turn_ns = {r["target_blocks_per_sm"]: r["slot_turn_ns"]
                        for r in run.data.get("calibration", {}).get("idle_blocks", [])}
        self.jitted = {"add_numba_naive": nk.add_naive_kernel, "add_numba": nk.add_kernel}
        self.flush = flush_bytes_for(gpu.l2_bytes)

    def sweep(self, kernel_names, threads_list, sizes) -> None:
        for n in sizes:
            self.size(n if self.on_gpu else 2 * 256 * 4, kernel_names, threads_list)

    def size(self, n: int, kernel_names, threads_list) -> None:
        import torch

        import kernels.bodies.numba_kernels as nk

        x, y = (torch.randn(n, device="cuda" if self.on_gpu else "cpu") for _ in range(2))
        dst = torch.empty_like(x)
        arrays = nk.device_arrays((x, y, dst))
        ctx = dict(n=n, x=x, y=y, dst=dst, ref=x + y, arrays=arrays,
                   peers=self.peers(n, "before") if self.on_gpu else {})
        for kernel in kernel_names:
            for threads in threads_list:
                self.run.attempt(f"{kernel} n={n:,} threads={threads}", self.kernel_sweep, ctx,
                                 kernel, threads)
        if self.on_gpu:
            self.peers(n, "after")

    def peers(self, n: int, when: str) -> dict:
        out = {}
        for peer in ("add_torch", "copy_torch"):
            self.run.need(3, f"{peer} at {n:,}")
            self.run.attempt(f"{peer} at {n:,} ({when})", self.peer, peer, n, when, out)
        return out

    def peer(self, peer: str, n: int, when: str, out: dict) -> None:
        from kernels.measure.harness import measure
        from kernels.declare.registry import get_kernel

        m = measure(get_kernel(peer), n, gpu=self.gpu, device_name=self.gpu.name,
                    reps=self.reps, check=False)
        out[peer] = m.bandwidth_gbps
        self.occ["peers"].append({"kernel": peer, "elements": n, "when": when,
                                  "round": self.round_no, "gbps": m.bandwidth_gbps,
                                  "gbps_p20": m.bandwidth_p20_gbps,
                                  "gbps_p80": m.bandwidth_p80_gbps, "reps": m.reps})
        print(f"  {peer:10s} n={n:>10,} {when:6s} {m.bandwidth_gbps:8.0f} GB/s", flush=True)

    def kernel_sweep(self, ctx: dict, kernel: str, threads: int) -> None:
        from kernels.measure.occupancy_probe import padded_launch, padding_plan
        from kernels.declare.registry import get_kernel

        n = ctx["n"]
        # the registry owns the grid rule; the probe launches the same grid, padded
        grid = get_kernel(kernel).launch_shape(n, threads, self.gpu.sm_count).grid_blocks
        base = padded_launch(self.jitted[kernel], ctx["arrays"], grid, threads, self.gpu)
        plan = padding_plan(self.gpu, threads, TARGETS, base.regs_per_thread or 0,
                            base.static_smem_bytes or 0)
        for target in [None] + [t for t, _, _ in plan]:
            what = f"{kernel} n={n:,} threads={threads} target={target}"
            self.run.need(4, what)
            self.run.attempt(what, self.point, ctx, kernel, grid, threads, target, base)

    def point(self, ctx: dict, kernel: str, grid: int, threads: int, target, base) -> None:
        import torch

        from kernels.measure.occupancy_probe import padded_launch
        from kernels.measure.timing import time_gpu

        n, dst, peers = ctx["n"], ctx["dst"], ctx["peers"]
        launch = (base if target is None else
                  padded_launch(self.jitted[kernel], ctx["arrays"], grid, threads, self.gpu,
                                target))
        dst.fill_(float("nan"))
        launch.run()
        correct = bool(torch.equal(dst, ctx["ref"]))
        p = launch.predicted
        row = {"kernel": kernel, "elements": n, "threads": threads, "round": self.round_no,
               "grid_blocks": grid, "target_blocks_per_sm": target,
               "dyn_smem_bytes": launch.dynamic_smem_bytes,
               "predicted_blocks_per_sm": p.blocks_per_sm, "occupancy": p.occupancy,
               "limited_by": list(p.limited_by),
               "driver_blocks_per_sm": launch.driver_blocks_per_sm,
               "driver_note": launch.driver_note, "regs_per_thread": launch.regs_per_thread,
               "static_smem_bytes": launch.static_smem_bytes, "correct": correct}
        if self.on_gpu and correct:
            times = time_gpu(launch.run, reps=self.reps, flush_bytes=self.flush, ahead="flush")
            row.update(stats_row(times, 3 * 4 * n))
            row["torch_add_gbps"] = peers.get("add_torch")
            row["copy_ceiling_gbps"] = peers.get("copy_torch")
            if peers.get("add_torch"):
                row["ratio_to_torch_add"] = row["gbps"] / peers["add_torch"]
            row.update(self.model(kernel, p, peers.get("copy_torch"),
                                  self.turn_ns.get(target) if threads == 256 else None))
        self.occ["rows"].append(row)
        print(f"  {kernel:16s} n={n:>10,} thr={threads:4d} target={target!s:>4} "
              f"smem={launch.dynamic_smem_bytes:6d} pred={p.blocks_per_sm:2d} "
              f"drv={launch.driver_blocks_per_sm} regs={launch.regs_per_thread} "
              f"ok={correct} {row.get('gbps', float('nan')):8.0f} GB/s", flush=True)

    def model(self, kernel: str, occ, ceiling_gbps, turn_ns) -> dict:
        """sim/model/latency.py's a-priori predictions for the row, nothing fitted: with the preset's
        DRAM latency; with this run's pointer chase; and with the chase plus the idle blocks'
        turn of a slot at the same target as the overhead per trip."""
        from sim.model.latency import predicted_gbps

        m = self.inputs[kernel]
        args = (self.gpu, occ.blocks_per_sm, occ.warps_per_block,
                m["loads_in_flight_per_thread"], m["bytes_per_load"])
        kw = dict(ceiling_gbps=ceiling_gbps,  # None: the theoretical peak
                  bytes_moved_per_byte_loaded=m["bytes_moved_per_byte_loaded"])
        out = {}
        if self.gpu.dram_latency_ns:
            out["model_gbps_preset_latency"] = predicted_gbps(*args, **kw)
        if self.measured_latency:
            out["model_gbps_measured_latency"] = predicted_gbps(
                *args, latency_ns=self.measured_latency, **kw)
            if turn_ns is not None:
                out["model_gbps_measured_latency_turn"] = predicted_gbps(
                    *args, latency_ns=self.measured_latency, overhead_ns=turn_ns, **kw)
        return out


# --------------------------------------------------------------------------------------------
# Timing methods
# --------------------------------------------------------------------------------------------
def _extend_methods(got: list, kernel: str, n: int, gpu, reps: int) -> None:
    from kernels.measure.timing_methods import time_kernel_methods

    got.extend(time_kernel_methods(kernel, n, gpu=gpu, reps=reps))


def timing_methods(run: Run, gpu, on_gpu: bool, reps: int) -> None:
    records = run.data.setdefault("methods", [])
    sizes = SIZES_METHODS if on_gpu else (1 << 8, 1 << 10)
    for kernel in METHOD_KERNELS:
        for n in sizes:
            run.need(6, f"timing methods for {kernel} at {n:,}")
            got = []
            run.attempt(f"timing methods for {kernel} at {n:,}", _extend_methods, got, kernel, n,
                        gpu if on_gpu else None, reps)
            for r in got:
                records.append(dataclasses.asdict(r))
                med = "-" if r.median_us is None else f"{r.median_us:10.2f} us"
                gbps = "-" if r.bandwidth_gbps is None else f"{r.bandwidth_gbps:9.0f} GB/s"
                print(f"  {kernel:16s} n={r.elements:>10,} {r.method:22s} {med:>14s} {gbps:>14s}",
                      flush=True)


# --------------------------------------------------------------------------------------------
def summary(run: Run) -> None:
    rows = run.data.get("occupancy", {}).get("rows", [])
    print("\n=== forced occupancy (GB/s: median [p20-p80], / torch.add, Little's law) ===")
    print(f"{'kernel':16s} {'n':>10s} {'thr':>4s} {'blk/SM':>6s} {'drv':>4s} {'smem':>7s} "
          f"{'regs':>4s} {'GB/s':>7s} {'p20-p80':>13s} {'/add':>6s} {'model':>7s} {'model*':>7s} "
          f"{'model+':>7s}")
    for r in rows:
        if "gbps" not in r:
            continue
        print(f"{r['kernel']:16s} {r['elements']:>10,} {r['threads']:>4d} "
              f"{r['predicted_blocks_per_sm']:>6d} {r['driver_blocks_per_sm']!s:>4s} "
              f"{r['dyn_smem_bytes']:>7d} {r['regs_per_thread']!s:>4s} {r['gbps']:>7.0f} "
              f"{r['gbps_p20']:>6.0f}-{r['gbps_p80']:<6.0f} {r.get('ratio_to_torch_add', 0):>6.1%} "
              f"{r.get('model_gbps_preset_latency', float('nan')):>7.0f} "
              f"{r.get('model_gbps_measured_latency', float('nan')):>7.0f} "
              f"{r.get('model_gbps_measured_latency_turn', float('nan')):>7.0f}")
    print("model: gpus.json latency; model*: this run's pointer chase (64 MiB); model+: the chase "
          "plus the idle blocks' slot turn as overhead per trip")
    print("\n=== timing methods: median us (GB/s from it) ===")
    from kernels.measure.timing_methods import METHOD_IDS

    short = ("flushed", "no flush", "launch ret", "host+sync", "lone", "back2back")
    print(f"{'kernel':16s} {'n':>10s} " + " ".join(f"{h:>17s}" for h in short))
    by = {}
    for r in run.data.get("methods", []):
        by.setdefault((r["kernel"], r["elements"]), {})[r["method"]] = r
    for (kernel, n), recs in by.items():
        cells = []
        for m in METHOD_IDS:
            r = recs.get(m)
            cells.append("-" if r is None or r["median_us"] is None else
                         f"{r['median_us']:8.1f} ({r['bandwidth_gbps']:6.0f})")
        print(f"{kernel:16s} {n:>10,} " + " ".join(f"{c:>17s}" for c in cells))
    for c in run.data.get("calibration", {}).get("dram_latency", []):
        if "median_ns" in c:
            print(f"DRAM round trip, {c['region_bytes'] >> 20} MiB region: {c['median_ns']:.0f} ns")
    print(f"sections: {run.data['sections']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for resources/measured/H200_latency.json")
    ap.add_argument("--budget-s", type=float, default=150.0,
                    help="stop cleanly after this many seconds (default 150)")
    ap.add_argument("--reps", type=int, default=50, help="least timed runs per point")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    run = Run(args.out, args.budget_s)

    from kernels.launching.compat import apply_numpy_shims

    apply_numpy_shims()
    from kernels.launching.device import detect_device
    from sim.rules.devices import preset

    detected, why = detect_device()
    on_gpu = detected is not None
    gpu = detected if on_gpu else preset("H200")  # off a GPU: the plan for the H200 preset
    run.data["device"] = gpu.to_dict() if on_gpu else {"none": why, "plan_for": gpu.name}
    run.data["on_gpu"] = on_gpu
    reps = args.reps if on_gpu else 3
    print(f"device: {gpu.name if on_gpu else 'none (' + why + ')'}; budget {args.budget_s:.0f} s",
          flush=True)

    run.section("env", lambda: run.data.__setitem__("env", env_info()))
    run.section("calibration", lambda: calibration(run, gpu, on_gpu, reps))
    run.section("occupancy", lambda: OccupancySweep(run, gpu, on_gpu, reps).sweep(
        ADDS, (256,), SIZES_OCC if on_gpu else SIZES_OCC[:1]))
    run.section("methods", lambda: timing_methods(run, gpu, on_gpu, reps))
    if on_gpu:
        run.section("occupancy_extra", lambda: OccupancySweep(run, gpu, on_gpu, reps).sweep(
            ADDS[:1], (128, 512), SIZES_OCC))
        # the headline sweep again, to show the run-to-run spread the model is judged within
        run.section("occupancy_repeat", lambda: OccupancySweep(run, gpu, on_gpu, reps, 2).sweep(
            ADDS, (256,), SIZES_OCC[:1]))
    summary(run)
    run.save()
    print(f"\nwrote {run.path} in {time.time() - run.t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
