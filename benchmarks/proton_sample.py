"""Write tests/data/proton/vector_add.chrome_trace: a small Triton Proton per-program timeline in
the format Proton's instrumentation backend writes (sim/traces/proton_trace.py says where it comes from).

It is SYNTHETIC, not a recording: the launch of Proton's own intra-kernel tutorial
(third_party/proton/tutorials/intra_kernel/example_dsl.py: add_kernel on 98,432 floats,
BLOCK_SIZE 1024, num_warps 8, scopes "kernel" and "load_and_add") laid onto an H200 by WarpScope's
own calibrated dispatch model, with block lengths drawn around 3,000 SM cycles (1.5 us at
1,980 MHz). It exists to test the reader, `compare` and the window on the exact file layout;
since WarpScope's model made it, its scores say nothing about the model. A recorded one replaces
it: run the tutorial with data="trace" on the H200 and copy its .chrome_trace here.

    python3 benchmarks/proton_sample.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.rules.devices import preset  # noqa: E402
from sim.schedule.policies import run_schedule  # noqa: E402
from sim.schedule.scheduler import TpcSpreadPlacement, UniformCost  # noqa: E402

OUT = ROOT / "tests" / "data" / "proton" / "vector_add.chrome_trace"
KERNEL, CTAS, WARPS = "add_kernel", -(-98432 // 1024), 8
COLOURS = ("cq_build_passed", "cq_build_running")  # Proton cycles through Chrome's named colours


def main() -> int:
    rng = np.random.default_rng(20261201)
    gpu = preset("H200")
    sim = run_schedule(gpu, CTAS, 8, WARPS, UniformCost(1.5), TpcSpreadPlacement(),
                       schedule="calibrated", wait="memory")
    start_ns = (sim.block_start_us * 1e3).round()  # %globaltimer, ns
    cycles = rng.normal(3000, 250, CTAS).round()
    events = []
    for cta in range(CTAS):
        for warp in range(WARPS):
            skew = float(rng.integers(0, 40))  # warps of a CTA start a few cycles apart
            whole = float(cycles[cta]) - skew
            inner = (skew + 60, whole - 180)
            for scope, (t, d), colour in (("kernel", (skew, whole), COLOURS[0]),
                                          ("load_and_add", inner, COLOURS[1])):
                events.append({
                    "args": {"Finalization Time (ns)": 1460, "Frequency (MHz)": 1000.0,
                             "call_stack": ["example_dsl.py:add"]},
                    "cat": KERNEL, "cname": colour, "dur": round(d / 1000.0, 3), "name": scope,
                    "ph": "X", "pid": f"{KERNEL} Core{int(sim.block_sm[cta])} CTA{cta}",
                    "tid": f"warp {warp} (line 0)",
                    "ts": round((start_ns[cta] - start_ns[0] + t) / 1000.0, 3)})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"displayTimeUnit": "ns", "traceEvents": events}) + "\n")
    print(f"wrote {OUT} ({len(events):,} events, {CTAS} CTAs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
