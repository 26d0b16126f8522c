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

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WARPSCOPE_SETTINGS_DIR", tempfile.mkdtemp())
from PySide6.QtCore import Qt  # noqa: E402

from gui.app import make_app, representative_time  # noqa: E402 (after sys.path)
from gui.main_window import MainWindow  # noqa: E402
from gui.models.launch import LaunchInputs  # noqa: E402

LAUNCHES = {"latency": ("H200", 2**26, 256, 0), "timing": ("H200", 2**24, 256, 0),
            "compare": ("H200", 2**24, 256, 72), "below": ("B200", 40 * 256, 256, 0),
            "registers": ("T4", 2**24, 256, 72), "export": ("T4", 2**24, 256, 72)}

path, mode = Path(sys.argv[1]), sys.argv[2]
width, height = (int(v) for v in (sys.argv[3] if len(sys.argv) > 3 else "1600x1000").split("x"))
gpu, elements, threads, regs = LAUNCHES[mode]
app = make_app()
w = MainWindow(LaunchInputs(gpu=gpu, elements=elements, threads_per_block=threads,
                            regs_per_thread=regs), restore=False, load_kernels=False)
w.resize(width, height)
w.show()


def pump(s):
    t = time.perf_counter()
    while time.perf_counter() - t < s:
        app.processEvents()
        time.sleep(0.005)


pump(0.5)
w.apply_default_dock_sizes()
pump(0.2)
run = w.simulate_now()
if run is not None:
    w.playback.set_time(representative_time(run.timeline, 0.42))
bottom = {"latency": "latency", "timing": "bandwidth", "compare": "compare"}.get(mode)
if bottom:
    w.docks[bottom].raise_()
    w.resizeDocks([w.docks[bottom]], [max(300, height * 56 // 100)], Qt.Orientation.Vertical)
if mode == "timing":
    w.bandwidth.tabs.setCurrentIndex(1)
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
    if not w.grab().save(str(path), "PNG"):
        raise SystemExit(f"cannot write {path}")
    print(f"wrote {path}")
w.shutdown()
