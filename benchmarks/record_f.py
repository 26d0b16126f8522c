#!/usr/bin/env python3
"""GPU run F's traces and summary (benchmarks/device_run_f.sh runs it part by part).

    python3 benchmarks/record_f.py real     --out DIR [--budget-s S] [--quick]
    python3 benchmarks/record_f.py regs     --out DIR [--budget-s S] [--quick]
    python3 benchmarks/record_f.py smem     --out DIR [--budget-s S] [--quick]
    python3 benchmarks/record_f.py summary  --out DIR

real: `trace --kernel add` at 2^20..2^27 x BLOCK_SIZE 256/512/1024, then copy, square and a row
      softmax; each trace's meta holds the same kernel's time unstamped and stamped (device
      events, L2 flushed, median) and the `warpscope trace ...` command that records it alone.
regs: `trace --hold-regs`: register-limited spin kernels, 20 us and 200 us blocks, 3 waves.
smem: the same Triton spin binary (and its CUDA C twin) launched through cupy with unused
      dynamic shared memory so that 1..8 blocks fit per SM, 20 us and 200 us blocks, 3 waves.
Each part writes DIR/traces_<part>/NAME.json (warpscope-trace/1) and DIR/index_<part>.json (one
row per trace: its command, summary, overhead, or the error that stopped it); a trace that fails
is recorded as an error and the rest go on; the part stops starting new traces at its budget.
--quick (no GPU): the smallest configurations, to find argument errors; each says "needs a GPU".
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
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import kernels  # noqa: E402,F401  (sets the CPU fallback when there is no GPU)

SIZES = (20, 22, 24, 25, 27)  # log2 elements of the add traces
BLOCKS = (256, 512, 1024)
HOLDS = ((4, 32), (8, 16), (4, 16), (8, 32), (4, 64), (2, 64), (4, 128), (16, 8))  # (warps, regs)
SPINS = (20.0, 200.0)
SMEM_TARGETS = tuple(range(1, 9))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def real_configs(quick: bool):
    """(name, kernel, elements, block, warps) of the real-kernel traces, most wanted first."""
    if quick:
        return [("add_n20_b1024", "add", 1 << 20, 1024, 4),
                ("softmax_n22_c4096", "softmax", 1 << 22, 4096, 8)]
    from sim.traces.trace import MAX_TRACE_BLOCKS

    out = [(f"add_n{p}_b{b}", "add", 1 << p, b, 4) for p in SIZES for b in BLOCKS
           if (1 << p) // b <= MAX_TRACE_BLOCKS]
    out += [(f"{k}_n{p}_b{b}", k, 1 << p, b, 4) for k in ("copy", "square")
            for p, b in ((20, 1024), (24, 256), (24, 1024), (26, 1024))]
    out += [(f"softmax_n{p}_c{c}", "softmax", 1 << p, c, w) for p in (20, 24, 26)
            for c, w in ((1024, 4), (4096, 8))]
    return out


def trace_command(kernel: str, elements: int, block: int, warps: int) -> str:
    return (f"warpscope trace --kernel {kernel} --elements {elements} --block {block} "
            f"--warps {warps} --out TRACE.json")


def _write_index(out: str, part: str, t0: float, index: list) -> None:
    with open(os.path.join(out, f"index_{part}.json"), "w", encoding="utf-8") as fh:
        json.dump({"part": part, "elapsed_s": round(time.time() - t0, 1), "traces": index}, fh,
                  indent=1)


def _run(part: str, out: str, budget_s: float, items) -> int:
    """items: (name, command, thunk returning a Trace); write each trace and the part's index."""
    from kernels.tracing.trace import save, summarize_trace

    folder = os.path.join(out, f"traces_{part}")
    os.makedirs(folder, exist_ok=True)
    index, t0, failed = [], time.time(), 0
    for i, (name, command, record) in enumerate(items):
        if time.time() - t0 > budget_s:
            index.append({"name": name, "command": command, "error": "not run: budget spent"})
            continue
        log(f"{part} {i + 1}/{len(items)} {name}")
        row = {"name": name, "command": command}
        try:
            trace = record()
            save(trace, os.path.join(folder, f"{name}.json"))
            row["file"] = f"traces_{part}/{name}.json"
            row["summary"] = summarize_trace(trace)
            row.update({k: trace.meta.get(k) for k in (
                "regs_per_thread", "smem_per_block_bytes", "untraced_median_us",
                "traced_median_us", "overhead_percent") if k in trace.meta})
        except Exception as exc:  # one failure must not cost the rest of the part
            failed += 1
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
            log(f"  failed: {row['error']}")
            if not getattr(exc, "__module__", "").startswith("sim"):
                row["traceback"] = traceback.format_exc()[-1500:]
        index.append(row)
        _write_index(out, part, t0, index)  # after every trace: a part killed keeps its rows
    _write_index(out, part, t0, index)
    log(f"{part}: {len(index) - failed} of {len(index)} recorded in {time.time() - t0:.0f} s")
    return 0


def part_real(out: str, budget_s: float, quick: bool) -> int:
    from kernels.tracing.trace import record_tile_trace

    items = []
    for name, kernel, n, block, warps in real_configs(quick):
        command = trace_command(kernel, n, block, warps)
        items.append((name, command, lambda k=kernel, n=n, b=block, w=warps, c=command:
                      record_tile_trace(k, n, b, w, c)))
    return _run("real", out, budget_s, items)


def part_regs(out: str, budget_s: float, quick: bool) -> int:
    from kernels.tracing.trace import record_trace

    items = []
    for warps, hold in (HOLDS[:1] if quick else HOLDS):
        for spin in (SPINS[:1] if quick else SPINS):
            command = (f"warpscope trace --kernel spin --warps {warps} --hold-regs {hold} "
                       f"--spin-us {spin:g} --waves 3 --out TRACE.json")
            items.append((f"hold_w{warps}_r{hold}_{spin:g}us", command,
                          lambda w=warps, h=hold, s=spin, c=command:
                          record_trace(None, w, s, c, hold_regs=h, waves=3.0)))
    return _run("regs", out, budget_s, items)


def part_smem(out: str, budget_s: float, quick: bool) -> int:
    from dispatch_probe_cuda import record_probe

    items = []
    variants = (("triton-binary", 4), ("triton-binary", 8), ("spin-all", 4))
    for wait, warps in (variants[:1] if quick else variants):
        for target in (SMEM_TARGETS[:1] if quick else SMEM_TARGETS):
            if 32 * warps * target > 2048:
                continue
            for spin in (SPINS[:1] if quick else SPINS):
                command = (f"python3 benchmarks/record_f.py smem: record_probe({wait!r}, "
                           f"num_warps={warps}, spin_us={spin:g}, waves=3, "
                           f"smem_blocks_per_sm={target})")
                items.append((f"smem_{wait}_w{warps}_{target}per_sm_{spin:g}us", command,
                              lambda wt=wait, w=warps, s=spin, t=target, c=command:
                              record_probe(wt, w, s, waves=3.0, command=c,
                                           smem_blocks_per_sm=t)))
    return _run("smem", out, budget_s, items)


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _trace_line(r) -> str:
    s = r["summary"]
    extra = ""
    if r.get("overhead_percent") is not None:
        extra = (f" | untraced {r['untraced_median_us']:.1f} traced {r['traced_median_us']:.1f} us "
                 f"({r['overhead_percent']:+.1f}%)")
    return (f"  {r['name']:34} {s['blocks']:>7} blk {s['makespan_us']:>8.1f} us  peak/SM "
            f"{s['median_max_resident_per_sm']:.0f} max {s['max_resident_per_sm']} pred "
            f"{s['predicted_blocks_per_sm']} regs {r.get('regs_per_thread')}{extra}")


def _smem_lines(rows) -> list[str]:
    """One line per variant: median peak per SM at each forced target (target: peak)."""
    groups = {}
    for r in rows:
        if "summary" in r:
            head, _, tail = r["name"].rpartition("_")  # ..._3per_sm_20us
            variant, _, target = head.rpartition("_")[0].rpartition("_")
            groups.setdefault(f"{variant} {tail}", []).append(
                f"{target[0]}:{r['summary']['median_max_resident_per_sm']:.0f}")
    return [f"  {k:34} forced:held per SM  {' '.join(v)}" for k, v in groups.items()]


def _bench_lines(name: str, data: dict) -> list[str]:
    ms = data.get("measurements") or []
    lines = [f"{name}: {len(ms)} measurements" + (" (cancelled)" if data.get("cancelled") else "")]
    by = {}
    for m in ms:
        by.setdefault(m["kernel"], []).append(m)
    for kernel, rows in by.items():
        if kernel.startswith("occupancy_"):  # GB/s by block size: unpadded / 1 per SM / 2 per SM
            cells = {}
            for m in rows:
                cell = cells.setdefault(m["block_size"], [])
                cell.append(f"{m['bandwidth_gbps']:.0f}")
            lines.append(f"  {kernel:22} GB/s per block (unpadded/forced..): " + "  ".join(
                f"{b}:{'/'.join(v)}" for b, v in sorted(cells.items())))
        else:
            rows.sort(key=lambda m: m["elements"])
            lines.append(f"  {kernel:26} {len(rows):>2} sizes: {rows[0]['median_ms'] * 1e3:.1f} us "
                         f"at {rows[0]['elements']:,}, {rows[-1]['bandwidth_gbps']:,.0f} GB/s at "
                         f"{rows[-1]['elements']:,}")
    return lines


def part_summary(out: str, *_ignored) -> int:
    """One short table of everything that came back: the last thing the run prints."""
    lines = ["", "=== run F summary ==="]
    merged = _load(os.path.join(out, "logs", "index.json")) or {}
    for part in ("real", "regs", "smem"):
        index = merged.get(part) or _load(os.path.join(out, f"index_{part}.json"))
        if index is None:
            lines.append(f"{part}: no index (the part did not finish)")
            continue
        rows = index["traces"]
        good = [r for r in rows if "summary" in r]
        bad = [r for r in rows if "summary" not in r]
        lines.append(f"{part}: {len(good)} of {len(rows)} traces in {index['elapsed_s']} s"
                     + (f"; first failure {bad[0]['name']}: {bad[0].get('error', '?')[:100]}"
                        if bad else ""))
        lines += _smem_lines(good) if part == "smem" else [_trace_line(r) for r in good]
    for name in ("bench_f.json", "bench_f_b.json", "bench_f_softmax.json",
                 "logs/bench_f_compile.json", "occupancy_fp64.json", "logs/occupancy_fp32.json"):
        data = _load(os.path.join(out, name))
        lines += [f"{name}: missing"] if data is None else _bench_lines(name, data)
    print("\n".join(lines))
    return 0


PARTS = {"real": part_real, "regs": part_regs, "smem": part_smem, "summary": part_summary}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=sorted(PARTS))
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=120.0)
    p.add_argument("--quick", action="store_true", help="smallest configurations (dry run)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    return PARTS[args.part](args.out, args.budget_s, args.quick)


if __name__ == "__main__":
    sys.exit(main())
