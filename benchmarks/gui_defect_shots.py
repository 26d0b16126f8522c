"""Screenshots of issue 18's window fixes (docs/screenshots/*-issue18-*.png), under Xvfb:

    xvfb-run -a -s "-screen 0 2000x1200x24" python benchmarks/gui_defect_shots.py docs/screenshots
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shot_window import ROOT, open_window, pump, save_shot  # noqa: E402

import kernels.launching.backends as backends  # noqa: E402
from gui.models.launch import LaunchInputs  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
H200 = LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256)

# a recorded trace at 1366 x 768: the SM view keeps its room (it was squeezed to 150 px)
w = open_window(LaunchInputs(gpu="H200", elements=2112 * 256, threads_per_block=256), (1366, 768))
print("trace opened:", w.open_trace(str(ROOT / "tests" / "data" / "trace_h200.json")))
pump(0.5)
print("SM view", w.sm_view.height(), "px")
save_shot(w, out / "trace-issue18-1366x768.png")
w.shutdown()

# the compute-bound cost on a launch that is no matmul: the caption says why there is no schedule
w = open_window(H200, (1366, 768))
w.options.set(cost="compute")
pump(2.0, until=lambda: "compute-bound" in w.timeline.caption.text())
save_shot(w, out / "compute-bound-issue18-1366x768.png")
w.shutdown()

# an example kernel on the app-only install (no triton): the message as read, and its pip line
backends.missing_packages = lambda: ["torch", "triton", "numba", "numba-cuda"]
w = open_window(H200, (1366, 768))
example = ROOT / "resources" / "examples" / "softmax_triton.py"
w.user_kernels.files.fail(str(example), f"{example}, line 12: importing it raised "
                          "ModuleNotFoundError: No module named 'triton'")
w.user_kernels.dock.show()
w.user_kernels.dock.raise_()
pump(0.5)
save_shot(w, out / "kernel-missing-triton-issue18-1366x768.png")
w.shutdown()
