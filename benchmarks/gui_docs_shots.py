"""Make the documentation screenshots of the real window, at a given window size.

    S="xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/gui_docs_shots.py"
    $S docs/screenshots/bandwidth-h200-results.png bw
    $S docs/screenshots/trace-h200-vs-simulation.png trace
    $S docs/screenshots/blocks-h200-vs-prediction.png blocks
    $S docs/screenshots/window-1024x640.png launch 1024x640

Modes: `launch` (the H200 launch of 1,000,000 elements at 256 threads, memory-bound cost, TPC
spread), `bw` (tests/data/h200_size_sweep.json in the Bandwidth panel), `blocks` (the H200
block-size sweep with the scheduler's prediction), `trace` (tests/data/trace_h200.json beside
its simulation), `error` (a launch that cannot run: registers over the limit).
"""

import sys

from shot_window import ROOT, open_window, pump, save_shot, window_size  # noqa: I001 (benchmarks/)
from PySide6.QtCore import Qt

from gui.app import representative_time
from gui.models.launch import LaunchInputs

path, mode = sys.argv[1], sys.argv[2]
width, height = window_size(sys.argv[3] if len(sys.argv) > 3 else None)
elements = 1_000_000 if mode in ("launch", "error") else 2**24
w = open_window(LaunchInputs(gpu="H200", elements=elements, threads_per_block=256), (width, height),
                load_kernels=mode in ("bw", "blocks"))
if mode in ("bw", "blocks"):
    while w.kernels_info is None:
        pump(0.2)
    w.docks["bandwidth"].raise_()
    if mode == "blocks":  # the block-size sweep, with the scheduler's prediction dashed
        w.bench.set_ticked(["add_numba_naive", "add_numba", "add_triton"])
    name = "tests/data/h200_block_size_sweep.json" if mode == "blocks" else "tests/data/h200_size_sweep.json"
    w.bench_jobs.open_results(str(ROOT / name))
    while w.live_runner.busy():
        pump(0.1)
    w.resizeDocks([w.docks["bandwidth"]], [max(260, height * 52 // 100)], Qt.Orientation.Vertical)
    pump(0.8)
    print(w.bench.series("size")[0].tips[-1])  # one point's tooltip, for the record
elif mode == "trace":
    w.open_trace(str(ROOT / "tests" / "data" / "trace_h200.json"))
    pump(0.8)
    print(w.timeline.caption.text())
elif mode == "error":
    w.model.update(regs_per_thread=300)
    pump(0.3)
else:
    w.options.set("memory", "tpc-spread")
    w.simulate_now()
    pump(0.3)
    print(w.timeline.caption.text())
run = w.simulation.run
if run is not None:
    w.playback.set_time(representative_time(run, 0.42))
pump(0.3)
save_shot(w, path)
w.shutdown()
