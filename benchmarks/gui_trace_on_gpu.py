"""The real window on a GPU machine: open a kernel file (the example softmax by default), wait for the kernel
host to find the GPU, press Kernel source > Trace on the GPU, wait for the trace to be recorded
and laid beside its prediction, and save screenshots (issue 19: a GPU-only feature seen in the
real window). Run from the repo root with Qt available (benchmarks/gui_on_device.sh sets it up):

    python3 benchmarks/gui_trace_on_gpu.py --out DIR [--size 1600x1000] [--file F --kernel NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shot_window import ROOT, open_window, pump, save_shot, window_size  # noqa: E402

from gui.models.launch import LaunchInputs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="1600x1000")
    ap.add_argument("--file", default="resources/examples/softmax_triton.py",
                    help="the kernel file to open (Triton or Numba), relative to the repo root")
    ap.add_argument("--kernel", default="softmax_kernel", help="the kernel the file declares")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    w = open_window(LaunchInputs(gpu="H200", elements=1 << 24), window_size(args.size),
                    load_kernels=True)
    uk = w.user_kernels
    found = pump(120, lambda: w.kernels_info is not None)
    print(f"kernel host answered: {found}, device {getattr(w.kernels_info, 'device', None)}", flush=True)
    uk.open(str(ROOT / args.file))
    pump(120, lambda: w.model.inputs.kernel == args.kernel)
    print(f"kernel picked: {w.model.inputs.kernel}", flush=True)
    w.model.update(elements=1 << 24)
    pump(2)
    uk.dock.show()
    uk.dock.raise_()
    pump(1)
    visible = not uk.source.trace_button.isHidden()
    print(f"Trace on the GPU shown: {visible}", flush=True)
    save_shot(w, out / "kernel_source_gpu.png")
    if not visible:
        return 1
    uk.source.trace_button.click()
    done = pump(240, lambda: w.traces.comparison is not None)
    pump(3)
    print(f"traced and compared: {done} after {time.perf_counter() - t0:.0f} s", flush=True)
    if w.traces.comparison is not None:
        print("makespan error", w.traces.comparison.comparison.makespan_error, flush=True)
    w.docks["timeline"].show()
    w.docks["timeline"].raise_()
    pump(2)
    save_shot(w, out / "trace_on_gpu.png")
    w.shutdown()
    return 0 if done else 1


if __name__ == "__main__":
    raise SystemExit(main())
