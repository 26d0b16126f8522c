"""Triton Proton's per-program timeline (its intra-kernel "chrome trace") as a block trace.

Proton's instrumentation backend (`proton.start(name, data="trace", backend="instrumentation")`)
writes NAME.chrome_trace, a Chrome trace-event file (proton/common/lib/TraceDataIO/TraceWriter.cpp,
StreamChromeTraceWriter; the triton 3.7.1 wheel's libproton writes this layout):

    {"displayTimeUnit": "ns",
     "traceEvents": [{"ph": "X", "cat": KERNEL, "name": SCOPE,
                      "pid": "KERNEL CoreSM CTAid" (some versions add " [measure in ...]"),
                      "tid": "warp W (line L)", "ts": us, "dur": us,
                      "args": {"Frequency (MHz)": 1000.0, "Finalization Time (ns)": ...}}]}

one complete event per scope a warp ran. The event of a CTA that starts first stands at its
block's start on the global timer (%globaltimer, ns); the rest of the block is in SM clock cycles,
which the file writes as if the clock ran at "Frequency (MHz)" (1 GHz). So a block's start here is
a time, and its length is a cycle count: `compare` converts it at the GPU's clock
(sim.traces.compare.on_gpu_clock), where the GPU is known. A CTA is one block: its SM, its first event,
its last event end. Older Proton (before the global timer) started every CTA at 0: no schedule,
refused. Read through sim.inputs.files, like every file a user gives.
"""

from __future__ import annotations

import re

import numpy as np

from sim.inputs.errors import UserError
from sim.inputs.args import shown
from sim.traces.trace import MAX_BLOCK_ID, MAX_SMS, MAX_TIME_US, MAX_TRACE_BLOCKS, Trace

TOOL = "Triton Proton (intra-kernel timeline, chrome trace)"
ASSUMED_MHZ_KEY = "Frequency (MHz)"
_PID = re.compile(r"^(?P<kernel>.*) Core(?P<sm>\d{1,4}) CTA(?P<cta>\d{1,10})(?: \[.*\])?$")
_TID = re.compile(r"^warp (?P<warp>\d{1,4})\b")
MAX_EVENTS = 2**21  # 16 MiB of file holds far fewer; a bound on the arrays below


def is_proton_document(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("traceEvents"), list) \
        and "format" not in data


def proton_trace(data, where: str) -> Trace:
    """The block trace in a Proton chrome trace (parsed by sim.traces.trace through sim.inputs.files)."""
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        raise UserError(f"{where} is not a Proton trace (no 'traceEvents' list)")
    if len(events) > MAX_EVENTS:
        raise UserError(f"{where} holds {len(events):,} events; a Proton trace may hold at most "
                        f"{MAX_EVENTS:,} (record fewer warps: sampling_strategy='selective')")
    kernels: list[str] = []
    rows = []  # kernel index, sm, cta, warp, start, end
    assumed = set()
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue  # metadata and other events say nothing about the blocks
        m = _PID.match(ev["pid"]) if isinstance(ev.get("pid"), str) else None
        if m is None:
            raise UserError(f"{where}: event {i}: 'pid' is not Proton's \"KERNEL CoreN CTAn\", "
                            f"got {shown(ev.get('pid'))}")
        ts, dur = ev.get("ts"), ev.get("dur")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (ts, dur)) \
                or not (0 <= ts <= MAX_TIME_US and 0 <= dur <= MAX_TIME_US):
            raise UserError(f"{where}: event {i}: 'ts' and 'dur' must be times in "
                            f"0..{MAX_TIME_US:g} us, got {shown(ts)} and {shown(dur)}")
        sm, cta = int(m["sm"]), int(m["cta"])
        if sm >= MAX_SMS:
            raise UserError(f"{where}: event {i}: SM {sm} is past any GPU's (at most {MAX_SMS - 1})")
        if cta > MAX_BLOCK_ID:
            raise UserError(f"{where}: event {i}: CTA {cta} is past CUDA's grid (at most {MAX_BLOCK_ID:,})")
        kernel = ev.get("cat") if isinstance(ev.get("cat"), str) else m["kernel"]
        if kernel not in kernels:
            kernels.append(kernel)
        t = _TID.match(ev["tid"]) if isinstance(ev.get("tid"), str) else None
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if isinstance(args.get(ASSUMED_MHZ_KEY), (int, float)) and args[ASSUMED_MHZ_KEY] > 0:
            assumed.add(float(args[ASSUMED_MHZ_KEY]))
        rows.append((kernels.index(kernel), sm, cta, int(t["warp"]) if t else 0,
                     float(ts), float(ts) + float(dur)))
    if not rows:
        raise UserError(f"{where} holds no Proton scope events (\"ph\": \"X\"): was it written "
                        "with data=\"trace\" and backend=\"instrumentation\"?")
    a = np.asarray(rows, dtype=float)
    a = a[a[:, 0] == 0]  # the first kernel in the file: one launch is compared
    ctas, first = np.unique(a[:, 2], return_index=True)
    if len(ctas) > MAX_TRACE_BLOCKS:
        raise UserError(f"{where} holds {len(ctas):,} CTAs; a trace may hold at most "
                        f"{MAX_TRACE_BLOCKS:,}")
    inverse = np.searchsorted(ctas, a[:, 2])
    sm = a[first, 1]
    if (a[:, 1] != sm[inverse]).any():  # one CTA on two SMs: two launches of the kernel
        raise UserError(f"{where}: a CTA of {kernels[0]} appears on two SMs: the file holds more "
                        "than one launch of it; profile one launch per file")
    start = np.full(len(ctas), np.inf)
    end = np.zeros(len(ctas))
    np.minimum.at(start, inverse, a[:, 4])
    np.maximum.at(end, inverse, a[:, 5])
    if len(ctas) > 1 and np.ptp(start) == 0:
        raise UserError(f"{where}: every CTA starts at the same moment: this Proton wrote no block "
                        "start times (newer Proton, e.g. triton 3.7, records them on the global timer)")
    if not (end > start).any():
        raise UserError(f"{where}: no CTA takes any time")
    warps = int(a[:, 3].max()) + 1
    mhz = min(assumed) if assumed else 1000.0
    meta = {"kernel": "proton", "tool": TOOL, "kernel_name": kernels[0][:200], "wait": None,
            "num_warps": warps, "grid": int(len(ctas)), "cycles_at_mhz": mhz,
            "timer": "CTA start: %globaltimer (ns); within a CTA: SM clock cycles written as if "
                     f"at {mhz:g} MHz"}
    notes = [f"warps per block: the highest warp Proton recorded + 1 ({warps}); with warp sampling "
             "the kernel may have more", "registers and shared memory: not in a Proton trace "
             "(occupancy from the warps alone)"]
    if len(kernels) > 1:
        notes.append(f"the file holds {len(kernels)} kernels; compared: the first, {kernels[0][:80]}")
    meta["notes"] = notes
    t0 = start.min()
    return Trace(source="recorded", gpu="?", block=ctas.astype(np.int64), sm=sm.astype(np.int64),
                 slot=np.full(len(ctas), -1, dtype=np.int64), start_us=start - t0,
                 end_us=end - t0, meta=meta)
