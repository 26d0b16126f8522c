"""Screenshots of an opened example kernel in the real window, compiled for a GPU preset.

    S="xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/kernel_file_shots.py"
    $S docs/screenshots/kernel-softmax-a100.png "A100 80GB"
    $S docs/screenshots/kernel-softmax-t4.png T4
    $S docs/screenshots/kernel-softmax-1024x640.png T4 1024x640
    $S docs/screenshots/kernel-layernorm-h200.png H200 1600x1000 layernorm_triton.py 16384

Opens resources/examples/<file> (default softmax_triton.py) the way File ▸ Open kernel… does,
waits until the compiler has answered for the launch and for the threads sweep, shows the Kernel
source panel, and saves the window. The optional last argument sets BLOCK_SIZE.
"""

import sys
import time

from shot_window import ROOT, open_window, pump, save_shot, window_size  # noqa: I001 (benchmarks/)

from gui.models.launch import LaunchInputs

path, gpu = sys.argv[1], sys.argv[2]
width, height = window_size(sys.argv[3] if len(sys.argv) > 3 else None)
example = sys.argv[4] if len(sys.argv) > 4 else "softmax_triton.py"
block_size = int(sys.argv[5]) if len(sys.argv) > 5 else None
w = open_window(LaunchInputs(gpu=gpu, elements=2**24, threads_per_block=256), (width, height),
                load_kernels=True, settle=False)
pump(120, lambda: w.kernels_info is not None)
w.apply_default_dock_sizes()
w.user_kernels.open(str(ROOT / "resources" / "examples" / example))
pump(120, lambda: w.user_kernels.files.files)
if block_size:
    w.model.update(block_size=block_size)


def settled():
    curves = w.model.curves
    return (w.model.state.origin.kind in ("compiler", "failed")
            and (curves is None or "compiling" not in curves.threads_note))


t0 = time.perf_counter()
pump(600, settled)
print(f"compiled in {time.perf_counter() - t0:.1f} s: {w.model.state.origin.text}; "
      f"{w.model.inputs.regs_per_thread} registers", flush=True)
w.simulate_now()
w.playback.pick(w.playback.end_us * 0.4)
w.user_kernels.dock.raise_()
pump(0.5)
ok = save_shot(w, path)
print(f"{'wrote' if ok else 'could not write'} {path}")
w.close()
sys.exit(0 if ok else 1)
