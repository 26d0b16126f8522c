"""Screenshots of the wave-quantization experiment in the real window (issue 11).

    S="xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/waves_shots.py"
    $S docs/screenshots/sawtooth-h200.png sawtooth
    $S docs/screenshots/matmul-133-tiles.png tiles133
    $S docs/screenshots/matmul-133-tiles-stream-k.png tiles133 stream_k
    $S docs/screenshots/matmul-trace-133-tiles.png trace133
    $S docs/screenshots/sawtooth-1024x640.png sawtooth tiled 1024x640

Modes: `sawtooth` (benchmarks/matmul_h200.json's measured sawtooth beside the prediction, the
136-tile point chosen), `tiles133` (the 896 x 4864 x 8192 product, 133 tiles of 128 x 256: the
chosen kernel's launch in the SM view and the timeline, late in the run), `trace133` (the
recorded 133-tile schedule, tests/data/matmul_traces, beside its simulation). The second argument
after the mode picks the kernel: tiled (default), persistent or stream_k.
"""

import sys

from shot_window import ROOT, open_window, pump, save_shot, window_size  # noqa: I001 (benchmarks/)
from PySide6.QtCore import Qt

from gui.models.launch import LaunchInputs

path, mode = sys.argv[1], sys.argv[2]
kind = sys.argv[3] if len(sys.argv) > 3 and "x" not in sys.argv[3] else "tiled"
size = next((a for a in sys.argv[3:] if "x" in a and a[0].isdigit()), "1600x1000")
width, height = window_size(size)
kernel = f"matmul_{kind}"
w = open_window(LaunchInputs(gpu="H200"), (width, height))
w.options.set(placement="sm-order")  # the second wave's lone tile lands on SM 0: easy to find
if mode == "sawtooth":
    w.waves_view.open_path(str(ROOT / "benchmarks" / "matmul_h200.json"))
    w.predict_waves_now()
    w.waves.select(kernel, 16)  # N = 4352: 136 tiles, just past one wave
    w.simulate_now()
    w.docks["waves"].raise_()
    w.resizeDocks([w.docks["waves"]], [max(300, height * 55 // 100)], Qt.Orientation.Vertical)
    pump(0.8)
    print(w.waves_view.caption.text())
elif mode == "tiles133":
    w.waves.set_sweep("M=896,K=8192,N=3840..5888x256")  # 7 rows x 15..23 columns of tiles
    w.predict_waves_now()
    w.waves.select(kernel, 4)  # N = 4864: 7 x 19 = 133 tiles
    w.simulate_now()
    w.docks["timeline"].raise_()
    pump(0.5)
    run = w.simulation.run
    w.playback.set_time(run.timeline.makespan_us * (0.8 if kind == "tiled" else 0.93))
    print(w.timeline.caption.text())
elif mode == "trace133":
    w.waves.set_sweep("M=896,K=8192,N=3840..5888x256")  # the same launch in the SM view
    w.predict_waves_now()
    w.waves.select(kernel, 4)
    w.simulate_now()
    w.playback.set_time(w.simulation.run.timeline.makespan_us * 0.8)
    w.open_trace(str(ROOT / "tests" / "data" / "matmul_traces" / f"{kernel}_133tiles.json"))
    pump(0.8)
    print("\n".join(w.traces.comparison.lines))
pump(0.4)
save_shot(w, path)
w.shutdown()
