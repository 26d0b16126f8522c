"""Screenshots of 2026-12-02's second session, under Xvfb (the xcb platform), as a new user works:

    xvfb-run -a -s "-screen 0 2000x1200x24" .venv/bin/python benchmarks/session2_shots.py OUT_DIR

- the whole window at 1024x640, 1366x768, 1600x1000 and 1920x1080, after typing into the launch
  form's boxes (elements "2^24", threads "256"; then "abc" into elements, refused with a message);
- matmul_auto picked from the Kernel list at 1366x768 (its candidate table with the TMA kernels);
- the register-limited launch typed in (registers "40", threads "1024"), its next step shown;
- every export (PNG and SVG) at three window sizes, into OUT_DIR/exports-WxH/;
- matmul_tma picked, then the T4 chosen in the GPU box at 1600x1000: refused in one line.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shot_window import open_window, pump, save_shot  # noqa: E402

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from gui.models.launch import LaunchInputs  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
out.mkdir(parents=True, exist_ok=True)


def type_into(box, text: str) -> None:
    """Select all, type, press Enter: what a user does in a NumberBox."""
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, text)
    QTest.keyClick(box, Qt.Key.Key_Return)
    pump(0.5)


for size in ((1024, 640), (1366, 768), (1600, 1000), (1920, 1080)):
    w = open_window(LaunchInputs(gpu="H200"), size)
    type_into(w.controls.elements, "2^24")
    type_into(w.controls.threads, "256")
    pump(1.0)
    print(size, "elements", w.model.inputs.elements, "threads", w.model.inputs.threads_per_block)
    save_shot(w, out / f"session2-window-{size[0]}x{size[1]}.png")
    if size == (1366, 768):
        type_into(w.controls.elements, "abc")
        print("after 'abc':", w.model.inputs.elements, "|", w.controls.error.text())
        save_shot(w, out / "session2-typed-abc-1366x768.png")
    if size in ((1024, 640), (1366, 768), (1920, 1080)):
        written = w.export_all(out / f"exports-{size[0]}x{size[1]}")
        print(size, "exported", len(written), "files")
    w.shutdown()

w = open_window(LaunchInputs(gpu="H200"), (1366, 768), load_kernels=True)
print("kernels loaded:", pump(90.0, lambda: "matmul_auto" in [k.name for k in w.model.kernels()]))
w.model.select_kernel("matmul_auto")
pump(8.0)
print("kernel:", w.model.inputs.kernel, "blocks", w.model.state.blocks)
save_shot(w, out / "session2-matmul-auto-1366x768.png")
w.shutdown()

w = open_window(LaunchInputs(gpu="H200", elements=2**22), (1366, 768))
type_into(w.controls.threads, "1024")
type_into(w.controls.regs, "40")
pump(2.0)
print("regs", w.model.inputs.regs_per_thread, "blocks/SM", w.model.state.occ.blocks_per_sm)
save_shot(w, out / "session2-next-step-regs40-1366x768.png")
w.shutdown()

w = open_window(LaunchInputs(gpu="H200"), (1600, 1000), load_kernels=True)
pump(90.0, lambda: "matmul_tma" in [k.name for k in w.model.kernels()])
w.model.select_kernel("matmul_tma")
pump(5.0)
w.controls.gpu.setCurrentText("T4")  # as a user picks it: refused, the H200 kept
pump(1.0)
print("after T4:", w.model.state.spec.name, "|", w.statusBar().currentMessage())
save_shot(w, out / "session2-tma-on-t4-refused-1600x1000.png")
w.shutdown()
