"""Screenshots of the teaching panels (issue 12), of the real window under Xvfb.

    S="xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/teach_shots.py"
    $S docs/screenshots/latency-hiding-h200.png latency
    $S docs/screenshots/timing-toggles-h200.png timing
    $S docs/screenshots/two-gpus.png compare
    $S docs/screenshots/verdicts-below-one-wave.png below
    $S docs/screenshots/verdicts-register-limited.png registers
    $S docs/screenshots/export-light.png export
    (a third argument WxH, e.g. 1024x640, sets the window size; default 1600x1000)

Modes: `latency` (the H200 at 2^26 x 256: one SM's schedulers, Little's law with the measured
sweep), `timing` (the H200's timing methods, L2 and host-timer traps on), `compare` (the H200
beside a T4 at 72 registers), `below` (40 blocks on a B200), `registers` (a T4 at 256 threads and
72 registers), `export` (the summary page of a light-theme export of the `registers` launch).
"""

import shutil
import sys
import tempfile
from pathlib import Path

from shot_window import open_window, pump, save_shot, window_size  # noqa: I001 (benchmarks/)
from PySide6.QtCore import Qt

from gui.app import representative_time
from gui.models.launch import LaunchInputs

LAUNCHES = {"latency": ("H200", 2**26, 256, 0), "timing": ("H200", 2**24, 256, 0),
            "compare": ("H200", 2**24, 256, 72), "below": ("B200", 40 * 256, 256, 0),
            "registers": ("T4", 2**24, 256, 72), "export": ("T4", 2**24, 256, 72)}

path, mode = Path(sys.argv[1]), sys.argv[2]
width, height = window_size(sys.argv[3] if len(sys.argv) > 3 else None)
gpu, elements, threads, regs = LAUNCHES[mode]
w = open_window(LaunchInputs(gpu=gpu, elements=elements, threads_per_block=threads,
                             regs_per_thread=regs), (width, height))
run = w.simulate_now()
if run is not None:
    w.playback.set_time(representative_time(run.timeline, 0.42))
bottom = {"latency": "latency", "timing": "bandwidth", "compare": "compare"}.get(mode)
if bottom:
    w.docks[bottom].raise_()
    w.resizeDocks([w.docks[bottom]], [max(300, height * 56 // 100)], Qt.Orientation.Vertical)
if mode == "timing":
    w.bandwidth.tabs.setCurrentIndex(1)  # Timing methods, inserted by gui/teach_panels.py
    view = w.teach.timing_view
    view.kernel.setCurrentText("add_triton")
    for key in ("l2", "clock"):
        view.toggles[key].setChecked(True)
if mode == "compare":
    w.teach.compare_view.other.setCurrentText("T4")
pump(0.6)
if mode == "export":
    out = Path(tempfile.mkdtemp())
    w.export_all(out, "light")
    shutil.copyfile(out / "summary.png", path)
    print(f"wrote {path} (from a light export of {len(list(out.iterdir()))} files)")
else:
    if not save_shot(w, path):
        raise SystemExit(f"cannot write {path}")
    print(f"wrote {path}")
w.shutdown()
