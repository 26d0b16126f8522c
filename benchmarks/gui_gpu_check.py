"""Run the real window, offscreen, on a machine with a GPU: does it detect the GPU, run a live sweep
and the experiments in its worker thread, plot them, export and take a screenshot?

    QT_QPA_PLATFORM=offscreen python3 benchmarks/gui_gpu_check.py OUT_DIR

Prints one JSON summary line last; writes OUT_DIR/gui_gpu.png and OUT_DIR/export/.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("WARPSCOPE_SETTINGS_DIR", tempfile.mkdtemp())


from gui.app import make_app  # noqa: E402
from gui.main_window import MainWindow  # noqa: E402

out = Path(sys.argv[1])  # [--cpu]
out.mkdir(parents=True, exist_ok=True)
errors: list[str] = []
sys.excepthook = lambda t, v, tb: errors.append(f"{t.__name__}: {v}")  # exceptions in Qt slots
app = make_app()
t0 = time.perf_counter()
w = MainWindow(None, restore=False, load_kernels=True)
w.resize(1600, 1000)
w.show()
w.apply_default_dock_sizes()


def pump_until(cond, timeout_s):
    end = time.perf_counter() + timeout_s
    while not cond() and time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)
    return cond()


summary = {}


def report(stage):
    """Say how far we got after every stage: a stage that hangs must not hide the ones before."""
    print(stage, json.dumps(summary, default=str), flush=True)


summary["kernels_loaded"] = pump_until(lambda: w.kernels_info is not None, 100)
info = w.kernels_info
summary["load_s"] = round(time.perf_counter() - t0, 2)
summary["detected"] = getattr(info.device, "name", None) if info else None
summary["device_reason"] = info.device_reason if info else None
summary["gpu_selected"] = w.model.inputs.gpu
summary["available"] = {k: [a.ok, a.is_gpu, a.reason] for k, a in (info.available or {}).items()} if info else None

report("loaded")
panel, bench = w.bandwidth.sweep, w.bench
w.docks["bandwidth"].raise_()
bench.set_ticked(["add_triton", "add_numba", "add_numba_naive", "add_torch"])
panel.sizes.setText("2^20, 2^24")
panel.blocks.setText("256, 1024")
got = {}
bench.result_changed.connect(lambda r: got.setdefault("result", r))
t1 = time.perf_counter()
if "--cpu" in sys.argv:  # a dry run here: the interpreter/simulator path, labelled as such
    panel.allow_cpu.setChecked(True)
    panel.sizes.setText("4096")
    panel.blocks.setText("128, 256")
summary["sweep_started"] = panel.start_sweep() is not None
if summary["sweep_started"]:
    pump_until(lambda: "result" in got, 100)
res = got.get("result")
summary["sweep_s"] = round(time.perf_counter() - t1, 2)
if res is not None:
    summary["points"] = len(res.measurements)
    summary["gpu_timings"] = all(m.is_gpu_timing for m in res.measurements)
    summary["copy_ceiling_gbps"] = res.copy_ceiling_gbps
    summary["sample"] = [(m.kernel, m.elements, m.block_size, round(m.bandwidth_gbps),
                          round(bench.predicted(m).bandwidth_gbps) if bench.predicted(m) else None)
                         for m in res.measurements if m.elements == 2**24]
report("swept")
w.grab().save(str(out / "gui_gpu.png"), "PNG")
t2 = time.perf_counter()
w.bench_jobs.start_experiments()
pump_until(lambda: bool(bench.experiments) and not w.live_runner.busy(), 90)
summary["experiments_s"] = round(time.perf_counter() - t2, 2)
exp = bench.experiments or {}
summary["experiments"] = {k: (v if isinstance(v, str) else type(v).__name__) for k, v in exp.items()}
kc = exp.get("count_kernels")
if isinstance(kc, list):
    summary["kernel_counts"] = {k.variant: k.count for k in kc}
report("experiments")
files = w.export_all(out / "export")
summary["exported_files"] = len(files)
pump_until(lambda: False, 0.5)
summary["screenshot"] = w.grab().save(str(out / "gui_gpu.png"), "PNG")
summary["slot_exceptions"] = errors
report("done")
if w.live_runner.busy():  # a stage still running (timed out): do not wait for it
    os._exit(0)
w.shutdown()
