"""Real-kernel traces against the launch model (issue 16 item 2): every recorded `add` trace of a
trace bundle, predicted from its launch alone by sim.model.launch_model's memory mode (each block's
time from the blocks resident GPU-wide as it starts) and, for comparison, by `compare`'s uniform
blocks of the recorded median time under the calibrated dispatch model. Nothing here is fitted
on these traces: every one is held out. No GPU needed:

    python3 benchmarks/add_trace_check.py [BUNDLE ...] [--json]

Default bundle: tests/data/dispatch_h200 (family E: four Triton add traces of 2026-12-01). The
issue's bar per trace: makespan within 10%, median per-SM peak within 1 block, residency error at
most 0.15 (sim.traces.schedule_metrics). To record more (the lead, on the H200):

    python3 main.py trace --kernel add --elements 2^20 --block 1024 --out add_2p20_b1024.json
    (2^24 x 512, 2^25 x 1024, 2^27 x 1024, ...; then bundle them with sim/traces/trace_bundle.py)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.traces.compare import compare_trace, launch_of_trace, predict, request_of_trace  # noqa: E402
from sim.rules.devices import preset_for_device_name  # noqa: E402
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD  # noqa: E402
from sim.model.launch_model import Launch, predict_launch  # noqa: E402
from sim.traces.schedule_metrics import score  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402


def rows(bundles) -> list[dict]:
    out = []
    for folder in bundles:
        for name, trace in load_bundle(folder).items():
            if not str(trace.meta.get("kernel", "")).startswith("add"):
                continue
            gpu = preset_for_device_name(trace.gpu, trace.meta.get("sm_count"))
            tl = launch_of_trace(trace, gpu)
            elements = int(trace.meta["elements"])
            launch = Launch(tl.blocks, int(trace.meta["threads_per_block"]), tl.blocks_per_sm,
                            BYTES_PER_ELEMENT_ADD * elements, elements)
            model = predict_launch(gpu, launch, "memory", max_waves=None).simulation
            m = score(trace.sm, trace.start_us, trace.end_us, model.block_sm,
                      model.block_start_us, model.block_end_us)
            uniform = compare_trace(trace, gpu, mode="calibrated")
            if uniform.model != "uniform":  # compare now predicts a real kernel in memory mode:
                # ask for the uniform blocks of the recorded median explicitly
                req = replace(request_of_trace(trace, gpu), model="uniform")
                got = predict(req).timeline
                uniform = score(trace.sm, trace.start_us, trace.end_us, got.block_sm, got.start_us,
                                got.end_us)
            out.append({"name": name, "blocks": tl.blocks, "blocks_per_sm": tl.blocks_per_sm,
                        "recorded_makespan_us": round(m.recorded_makespan_us, 2),
                        "recorded_median_peak": m.recorded_median_peak,
                        "model": {"makespan_error": round(m.makespan_error, 4),
                                  "median_peak": m.simulated_median_peak,
                                  "residency_error": round(m.residency_error, 3),
                                  "within": m.within()},
                        "uniform_median_block": {
                            "makespan_error": round(uniform.makespan_error, 4),
                            "median_peak": getattr(uniform, "simulated_median_peak",
                                                   getattr(uniform, "simulated_median_peak_blocks_per_sm", 0)),
                            "residency_error": round(uniform.residency_error, 3)}})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundles", nargs="*", default=[str(ROOT / "tests" / "data" / "dispatch_h200")])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = rows(args.bundles)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for r in result:
        m, u = r["model"], r["uniform_median_block"]
        print(f"{r['name']:24s} {r['blocks']:>7,} blocks, {r['blocks_per_sm']}/SM, recorded "
              f"{r['recorded_makespan_us']:,.1f} us, peak {r['recorded_median_peak']:g} | launch model "
              f"{m['makespan_error']:+.1%} peak {m['median_peak']:g} residency {m['residency_error']:.3f}"
              f"{' ok' if m['within'] else ''} | uniform median block {u['makespan_error']:+.1%} "
              f"peak {u['median_peak']:g} residency {u['residency_error']:.3f}")
    print(f"launch model within the bar on {sum(r['model']['within'] for r in result)} of {len(result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
