"""Which SMs of a chip move their blocks' bytes faster, read off a bundle of recorded traces
(sim.traces.sm_share: each SM's blocks per trace over the mean; the SMs above the largest gap).

    python3 benchmarks/sm_share.py tests/data/h200_memory_kernels_fit --prefix add_     # the FIT add traces

Prints the faster SMs (what resources/physics/<GPU>.json's "dram_share" holds), each trace's
ratio of blocks per SM (faster over the rest), with --model the launch model's blocks per SM
beside them, and, with --against, how far another bundle's faster SMs (another chip's) differ.
Only traces whose per-SM counts vary (coefficient of variation >= --min-cv) and that hold at
least 32 blocks per SM are read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


from sim.traces.sm_share import count_ratio as ratio, faster_sms  # noqa: E402
from sim.traces.sm_share import relative_counts as _relative  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402


def relative_counts(folder: str, prefix: str = "", min_cv: float = 0.08) -> dict:
    """sim.traces.sm_share.relative_counts of a bundle's traces."""
    return _relative(load_bundle(folder), prefix, min_cv)


def predicted_counts(trace) -> np.ndarray:
    """The blocks per SM the launch model (compare's prediction of the trace) runs."""
    from kernels.declare.kernel_file import with_declared_chain
    from sim.rules.devices import preset_for_device_name
    from sim.traces.compare import on_gpu_clock, predict_schedule as predict, request_of_trace

    trace = with_declared_chain(trace)
    gpu = preset_for_device_name(trace.gpu, trace.meta.get("sm_count"))
    trace, _ = on_gpu_clock(trace, gpu)
    sim = predict(request_of_trace(trace, gpu, None)).timeline
    return np.bincount(sim.block_sm, minlength=gpu.sm_count).astype(float)


def agreement(folder: str, prefix: str = "", min_cv: float = 0.08) -> dict[str, tuple]:
    """Per read trace: (recorded CV of blocks per SM, predicted CV, correlation of the two)."""
    traces = load_bundle(folder)
    out = {}
    for name, recorded in relative_counts(folder, prefix, min_cv).items():
        got = predicted_counts(traces[name])
        out[name] = (float(recorded.std()), float(got.std() / got.mean()),
                     float(np.corrcoef(recorded, got)[0, 1]) if got.std() else 0.0)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="a trace bundle")
    p.add_argument("--prefix", default="", help="read only traces whose name starts so")
    p.add_argument("--min-cv", type=float, default=0.08)
    p.add_argument("--against", default=None, metavar="DIR", help="another bundle (another chip)")
    p.add_argument("--model", action="store_true",
                   help="also the launch model's blocks per SM for each read trace, beside the recorded")
    args = p.parse_args(argv)
    rows = relative_counts(args.folder, args.prefix, args.min_cv)
    if not rows:
        print("no trace here is long and bandwidth-bound enough to read", file=sys.stderr)
        return 1
    fast = faster_sms(rows)
    print(f"{len(rows)} traces read; {len(fast)} faster SMs: {fast}")
    for name, count in rows.items():
        print(f"  {name:32s} blocks per SM, faster over the rest: {ratio(count, fast):.3f}")
    if args.against:
        other = relative_counts(args.against, args.prefix, args.min_cv)
        theirs = faster_sms(other) if other else []
        print(f"{args.against}: {len(other)} traces; {len(theirs)} faster SMs, "
              f"{len(set(theirs) & set(fast))} of them the same: {theirs}")
        for name, count in other.items():
            print(f"  {name:32s} ratio on {Path(args.folder).name}'s SMs {ratio(count, fast):.3f}, "
                  f"on its own {ratio(count, theirs):.3f}")
    if args.model:
        for name, (rec, got, r) in agreement(args.folder, args.prefix, args.min_cv).items():
            print(f"  {name:32s} CV of blocks per SM recorded {rec:.3f}, predicted {got:.3f}, "
                  f"correlation {r:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
