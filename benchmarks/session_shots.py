"""Screenshots of 2026-12-02's window work, under Xvfb (the xcb platform):

    xvfb-run -a -s "-screen 0 2000x1200x24" .venv/bin/python benchmarks/session_shots.py docs/screenshots

- the whole window at 1024x640, 1366x768 and 1920x1080 (the H200, 2^24 elements, 256 threads,
  memory-bound cost), with the example Numba stencil opened in Kernel source at 1366x768;
- the four views that now open alone (Bandwidth, Waves, Timing methods, Kernel source), each as
  `python -m gui.widgets.qt_<view>` builds it (gui.panels.Stage);
- the register-limited launch (40 registers, 4 warps) whose schedule the register rule changed.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shot_window import ROOT, make_app, open_window, pump, save_shot  # noqa: E402

from gui.models.launch import LaunchInputs  # noqa: E402
from gui.panels import Stage  # noqa: E402
from gui.style import apply_dark_theme  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
H200 = LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256)

for size in ((1024, 640), (1366, 768), (1920, 1080)):
    w = open_window(H200, size)
    pump(1.0)
    save_shot(w, out / f"window-2026-12-02-{size[0]}x{size[1]}.png")
    w.shutdown()

w = open_window(H200, (1366, 768))
w.user_kernels.open(str(ROOT / "resources" / "examples" / "stencil_numba.py"))
pump(60, lambda: w.model.inputs.kernel == "stencil_kernel")
w.user_kernels.dock.show()
w.user_kernels.dock.raise_()
pump(1.0)
print("kernel:", w.model.inputs.kernel)
save_shot(w, out / "kernel-source-numba-stencil-1366x768.png")
w.shutdown()

w = open_window(LaunchInputs(gpu="H200", elements=2**22, threads_per_block=128, regs_per_thread=40),
                (1366, 768))
pump(1.0)
save_shot(w, out / "register-limited-40regs-1366x768.png")
w.shutdown()

app = make_app()
apply_dark_theme(app)
for key in ("bandwidth", "waves", "timing", "source"):
    stage = Stage([key], H200)
    stage.resize(900, 620)
    stage.show()
    if key == "waves":
        stage.predict_waves_now()
    pump(3.0)
    stage.grab().save(str(out / f"alone-{key}-900x620.png"))
    print("alone:", key)
    stage.shutdown()
    stage.close()
