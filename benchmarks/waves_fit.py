#!/usr/bin/env python3
"""Fit the compute-bound cost model on a FEW H200 points and check it on all the others.

    python benchmarks/waves_fit.py                       # fit, then the table of every point
    python benchmarks/waves_fit.py --markdown out.md     # the same as Markdown (RESULTS.md)

Fitted (resources/measured/H200_matmul_sawtooth.json, recorded 2026-12-01):
  tensor efficiency, exposed memory fraction   tiled kernel at 32 and 128 tiles (one wave each);
                                               the kernel time is linear in (1/efficiency,
                                               fraction) there, so two points solve it exactly
  atomic rate, fix-up time                     the stream-K trace at 133 tiles: 128 units of one
                                               K-iteration each, added into one workspace tile
  launch overhead (measured, not fitted)       median of event time minus the blocks' span, 9 traces
Held out: the other 53 sawtooth points of the tiled kernel, all 55 of the persistent and stream-K
kernels, the 132/133-tile quantization rows, the square sizes, the traces' makespans.
The constants printed must match resources/fits/H200_matmul.json's "compute" (sim.model.throughput.compute_model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kernels.declare.registry import get_kernel  # noqa: E402  (the declarations; no GPU library)
from sim.rules.devices import preset  # noqa: E402
from sim.model.throughput import ComputeModel, compute_model, drops, predict_matmul  # noqa: E402
from sim.traces.waves import CUBLAS, KINDS, load_matmul_run  # noqa: E402

RESULTS = os.path.join(ROOT, "resources", "measured", "H200_matmul_sawtooth.json")
FIT_TILES = (32, 128)
FIT_TRACE = "matmul_stream_k_133tiles"
KERNELS = ("matmul_tiled", "matmul_persistent", "matmul_stream_k")


def traces_of(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return {t["name"]: t["trace"] for t in data["steps"]["traces"]["traces"]}


def launch_overhead_us(traces: dict) -> float:
    """Device events around a launch minus its blocks' recorded span, median over the traces."""
    gaps = []
    for tr in traces.values():
        rows = np.asarray(tr["blocks"], dtype=float)
        gaps.append(tr["meta"]["event_ms"] * 1e3 - (rows[:, 4].max() - rows[:, 3].min()))
    return float(np.median(gaps))


def fit_tile_terms(sweep, model: ComputeModel, resources) -> tuple[float, float]:
    """(tensor efficiency, exposed memory fraction) from the tiled kernel's FIT_TILES points
    (kernels.fitting.compute_fit, which `main.py calibrate --matmul` fits the user's GPU with)."""
    from kernels.fitting.compute_fit import solve_tile_terms

    points = [(p.dims, p.median_ms * 1e3) for p in sweep.points["matmul_tiled"]
              if -(-p.dims["M"] // 128) * -(-p.dims["N"] // 256) in FIT_TILES]
    return solve_tile_terms(points, preset("H200"), sweep.dtype, model, resources)


def fit_stream_k_terms(trace: dict, model: ComputeModel, dtype: str, resources) -> tuple[float, float]:
    """(atomic GB/s, fix-up us) from a stream-K trace whose leftover units each run a sliver of
    K: a unit's time beyond its K-iterations is its atomics; the last one also does the fix-up."""
    meta = trace["meta"]
    rows = np.asarray(trace["blocks"], dtype=float)
    extra = np.asarray(meta["extra"])
    units = (extra[:, 3] - extra[:, 2]) < -(-meta["K"] // meta["config"]["block_k"])
    dur, end = (rows[:, 4] - rows[:, 3])[units], rows[:, 4][units]
    pred = predict_matmul(get_kernel("matmul_stream_k"), {d: meta[d] for d in "MNK"}, preset("H200"),
                          dtype=dtype, resources=resources,
                          model=replace(model, atomic_gbps=1e12, fixup_us=0.0), fitted=False)
    w = pred.work
    sk = w.atomic_bytes > 0
    compute_us = float(np.median(pred.cost.item_times(
        pred.cost.round_residency(np.full(w.n_items, w.n_blocks))[sk], sk)))
    atomic_us = float(np.median(np.sort(dur)[:-1])) - compute_us
    n_units = int(units.sum())
    fixup = float(np.sort(end)[-1] - np.sort(end)[-2])
    return w.atomic_bytes[sk][0] * n_units / atomic_us / 1e3, fixup


def fit(path: str = RESULTS) -> ComputeModel:
    sweep, traces = load_matmul_run(path), traces_of(path)
    res = sweep.resources.get("matmul_tiled")
    model = compute_model(preset("H200"))
    eff, exposed = fit_tile_terms(sweep, model, res)
    model = replace(model, tensor_efficiency=round(eff, 3), memory_exposed=round(exposed, 2))
    gbps, fixup = fit_stream_k_terms(traces[FIT_TRACE], model, sweep.dtype,
                                     sweep.resources.get("matmul_stream_k"))
    return replace(model, atomic_gbps=round(gbps, -2), fixup_us=round(fixup, 1))


def sawtooth_rows(path: str, model: ComputeModel):
    """(kernel, dims, tiles, measured TFLOP/s, predicted TFLOP/s, fitted?) for every point."""
    sweep, gpu = load_matmul_run(path), preset("H200")
    out = []
    for name in KERNELS:
        spec = get_kernel(name)
        for p in sweep.points.get(name, []):
            pr = predict_matmul(spec, p.dims, gpu, dtype=sweep.dtype, model=model,
                                resources=sweep.resources.get(name), fitted=False)
            fitted = name == "matmul_tiled" and pr.tiles in FIT_TILES
            out.append((name, p.dims, pr.tiles, p.tflops(), pr.tflops, fitted))
    cublas = [(CUBLAS, p.dims, None, p.tflops(), None, False) for p in sweep.points.get(CUBLAS, [])]
    return out, cublas


def other_rows(path: str, model: ComputeModel):
    """The quantization rows (132 and 133 tiles, 3 rounds) and the square sizes."""
    with open(path, encoding="utf-8") as fh:
        steps = json.load(fh)["steps"]
    gpu, out = preset("H200"), []
    for row in steps["quantization"]["rows"]:
        for kind, name in KINDS.items():
            if name in KERNELS:
                pr = predict_matmul(get_kernel(name), {d: row[d] for d in "MNK"}, gpu,
                                    dtype="bfloat16", model=model, fitted=False)
                out.append((f"{name} ({row['label']}, round {row['round']})", pr.dims, pr.tiles,
                            row[kind]["tflops"], pr.tflops))
    for row in steps["configs"]["scaling"]:
        for kind, name in KINDS.items():
            if name in KERNELS and kind in row:
                n = row["n"]
                pr = predict_matmul(get_kernel(name), dict(M=n, N=n, K=n), gpu, dtype="bfloat16",
                                    model=model, fitted=False)
                out.append((f"{name} (square)", pr.dims, pr.tiles, row[kind]["tflops"], pr.tflops))
    return out


def drop_table(rows) -> list[tuple[str, list[int], list[int]]]:
    """Per kernel: the sizes (swept dim) where measured and predicted TFLOP/s drop by > 10%."""
    out = []
    for name in KERNELS:
        mine = [r for r in rows if r[0] == name]
        ns = [r[1]["N"] for r in mine]
        out.append((name, [ns[i] for i in drops([r[3] for r in mine])],
                    [ns[i] for i in drops([r[4] for r in mine])]))
    return out


def markdown(model: ComputeModel, path: str = RESULTS) -> str:
    saw, cublas = sawtooth_rows(path, model)
    from sim.rules.physics import physics_for
    overhead = physics_for(preset("H200")).value("launch_overhead_us")
    lines = [f"Model: tensor efficiency {model.tensor_efficiency}, memory exposed "
             f"{model.memory_exposed}, launch overhead {overhead} us (resources/physics/H200.json; "
             f"the traces' event time minus their blocks' span: "
             f"{launch_overhead_us(traces_of(path)):.1f} us), atomics "
             f"{model.atomic_gbps:,.0f} GB/s, fix-up {model.fixup_us} us.", "",
             "| kernel | held out | within 10% | max abs error | misses (N: error) |",
             "|---|---|---|---|---|"]
    for name in KERNELS:
        held = [r for r in saw if r[0] == name and not r[5]]
        err = [r[4] / r[3] - 1 for r in held]
        miss = ", ".join(f"{r[1]['N']}: {e:+.0%}" for r, e in zip(held, err) if abs(e) > 0.10)
        lines.append(f"| {name} | {len(held)} | {sum(abs(e) <= 0.10 for e in err)} | "
                     f"{max(abs(e) for e in err):.1%} | {miss or 'none'} |")
    lines += ["", "| kernel | measured drops at N | predicted drops at N |", "|---|---|---|"]
    lines += [f"| {n} | {m} | {p} |" for n, m, p in drop_table(saw)]
    lines += ["", "Every sawtooth point (TFLOP/s; * = used for the fit):", "",
              "| N | tiles | tiled meas | tiled pred | persistent meas | persistent pred | "
              "stream-K meas | stream-K pred | cuBLAS meas |", "|---|---|---|---|---|---|---|---|---|"]
    by = {name: [r for r in saw if r[0] == name] for name in KERNELS}
    for i, cub in enumerate(cublas):
        cells = []
        for name in KERNELS:
            r = by[name][i]
            cells += [f"{r[3]:.0f}{'*' if r[5] else ''}", f"{r[4]:.0f} ({r[4] / r[3] - 1:+.0%})"]
        lines.append(f"| {cub[1]['N']} | {by[KERNELS[0]][i][2]} | " + " | ".join(cells)
                     + f" | {cub[3]:.0f} |")
    lines += ["", "Other held-out points (TFLOP/s):", "", "| point | M x N x K | tiles | measured | "
              "predicted | error |", "|---|---|---|---|---|---|"]
    for label, dims, tiles, meas, pred in other_rows(path, model):
        lines.append(f"| {label} | {dims['M']}x{dims['N']}x{dims['K']} | {tiles} | {meas:.0f} | "
                     f"{pred:.0f} | {pred / meas - 1:+.0%} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=RESULTS, help="a warpscope-matmul/1 file")
    ap.add_argument("--markdown", help="also write the tables here")
    args = ap.parse_args()
    model = fit(args.results)
    stored = compute_model(preset("H200"))
    same = replace(model, source=stored.source) == stored
    print(f"fitted: {model}\n{'matches' if same else 'DIFFERS FROM'} resources/fits/H200_matmul.json\n")
    text = markdown(stored, args.results)
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
