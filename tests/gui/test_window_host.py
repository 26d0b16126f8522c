"""The window's live work runs in other processes: after start-up, a CPU-path sweep from the panel
and the Experiments tab (the kernel host), then compiling a built-in kernel and opening and
compiling a kernel file (the compiler host), the window's own process has imported none of torch,
triton and numba, and closing the window ends both hosts. One fresh process for all of it (each
start costs seconds of CI's two cores), so nothing else has imported them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WINDOW = r"""
import json, os, sys, time
from gui.app import make_app
from gui.main_window import MainWindow

app = make_app()
w = MainWindow(None, restore=False, load_kernels=True)
w.show()

def wait(cond, seconds):
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    return cond()

t0 = time.monotonic()
out = {"loaded": wait(lambda: w.kernels_info is not None, 120), "load_s": time.monotonic() - t0}
info = w.kernels_info
out["available"] = {k: a.mode for k, a in (info.available or {}).items()}
out["kernels"] = len(info.kernels)
w.bench.set_ticked(["add_torch"])
panel = w.bandwidth.sweep
panel.allow_cpu.setChecked(True)
panel.sizes.setText("4096")
got = []
w.bench.result_changed.connect(got.append)
out["started"] = panel.start_sweep() is not None
wait(lambda: got, 120)
out["sweep_s"] = time.monotonic() - t0
w.bandwidth.experiments.run_button.click()
wait(lambda: w.bench.experiments and not w.live_runner.busy(), 240)
out["experiments_s"] = time.monotonic() - t0
exp = w.bench.experiments
out["experiments"] = {k: v if isinstance(v, str) else type(v).__name__ for k, v in exp.items()}
out["steps_correct"] = getattr(exp.get("square_host_steps"), "correct", None)
out["points"] = [(m.kernel, m.elements, m.is_gpu_timing) for m in got[0].measurements] if got else []
w.model.update(gpu="T4", elements=1_000_000)
w.controls.kernel.setCurrentIndex(w.controls.kernel.findData("add_numba"))
compiled = lambda: w.model.state.origin.kind == "compiler"
out["numba"] = wait(compiled, 240) and w.model.inputs.regs_per_thread
w.user_kernels.open(sys.argv[1])
wait(lambda: w.model.inputs.kernel == "softmax_kernel", 120)
out["softmax"] = wait(compiled, 240) and w.model.inputs.regs_per_thread
out["blocks"] = w.model.state.geometry.blocks
out["gpu_modules"] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton", "numba"))
pids = [w.live_runner.host_pid, w.user_kernels.compiler.host_pid]
out["hosts_are_other_processes"] = None not in pids and os.getpid() not in pids
w.close()
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except (ProcessLookupError, TypeError):
        return False
out["hosts_alive_after_close"] = [alive(pid) for pid in pids]
print("RESULT " + json.dumps(out))
"""


SOFTMAX = str(ROOT / "resources" / "examples" / "softmax_triton.py")


@pytest.mark.slow
def test_window_process_never_imports_gpu_libraries(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WARPSCOPE_SETTINGS_DIR=str(tmp_path),
               PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", WINDOW, SOFTMAX], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=500)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, f"exit {p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}"
    out = json.loads(line.removeprefix("RESULT "))
    assert out["loaded"] and out["kernels"] > 10 and out["available"]["torch"] in ("cpu", "gpu")
    assert out["started"] and out["points"] and out["points"][0][:2] == ["add_torch", 4096]
    exp = out["experiments"]  # each experiment's record, or its one-line reason
    assert exp["square_host_steps"] == "HostSteps" and out["steps_correct"]
    assert exp["launch_vs_finish"] == "LaunchVsFinish"
    assert exp["count_kernels"] == "list" or "needs a GPU" in exp["count_kernels"]
    assert out["numba"] > 0 and out["softmax"] > 0  # registers from the compiler host
    assert out["blocks"] == 1_000_000 // 4096  # the file's own grid rule
    assert out["gpu_modules"] == []
    assert out["hosts_are_other_processes"] and out["hosts_alive_after_close"] == [False, False]
