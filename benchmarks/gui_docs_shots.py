"""Make the two documentation screenshots that need data files: the Bandwidth panel with the
H200 results (benchmarks/gpu_bench_h200.json) and the recorded H200 block trace
(tests/data/trace_h200.json) beside its simulation.

    S="xvfb-run -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/gui_docs_shots.py"
    $S docs/screenshots/bandwidth-h200-results.png bw
    $S docs/screenshots/trace-h200-vs-simulation.png trace
    $S docs/screenshots/blocks-h200-vs-prediction.png blocks
"""

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WARPSCOPE_SETTINGS_DIR", tempfile.mkdtemp())
from PySide6.QtCore import Qt  # noqa: E402

from gui.app import make_app  # noqa: E402 (after sys.path)
from gui.main_window import MainWindow  # noqa: E402
from gui.model import LaunchInputs  # noqa: E402

app = make_app()
w = MainWindow(
    LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256),
    restore=False,
    load_kernels=True,
)
w.resize(1600, 1000)
w.show()
w.apply_default_dock_sizes()


def pump(s):
    t = time.perf_counter()
    while time.perf_counter() - t < s:
        app.processEvents()
        time.sleep(0.005)


pump(0.5)
while w.kernels_info is None:
    pump(0.2)
mode = sys.argv[2]
if mode in ("bw", "blocks"):
    w.docks["bandwidth"].raise_()
    if mode == "blocks":  # the block-size sweep, with the scheduler's prediction dashed
        for i in range(w.bandwidth.kernel_list.count()):
            item = w.bandwidth.kernel_list.item(i)
            wanted = item.data(Qt.ItemDataRole.UserRole) in ("add_numba_naive", "add_numba", "add_triton")
            item.setCheckState(Qt.CheckState.Checked if wanted else Qt.CheckState.Unchecked)
    name = "gpu_blocks_h200.json" if mode == "blocks" else "gpu_bench_h200.json"
    w.bandwidth.open_results(str(ROOT / "benchmarks" / name))
    while w.live_runner.busy():
        pump(0.1)
    w.resizeDocks([w.docks["bandwidth"]], [520], Qt.Orientation.Vertical)
    pump(0.8)
    # hover tooltip text of one point for the record
    pi = w.bandwidth.size_plot.getPlotItem()
    sc = [i for i in pi.items if i.__class__.__name__ == "ScatterPlotItem"][0]
    print(sc.data["data"][-1])
else:
    w.open_trace(str(ROOT / "tests" / "data" / "trace_h200.json"))
    w.resizeDocks([w.docks["timeline"]], [520], Qt.Orientation.Vertical)
    pump(0.8)
    print(w.timeline.caption.text())
w.playback.set_time(w.record.makespan_us * 0.5)
pump(0.3)
w.grab().save(sys.argv[1])
w.shutdown()
