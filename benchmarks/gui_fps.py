"""Animation frame rate of the SM view on the largest preset (RTX 5090, 170 SMs).

Two figures:
  * timer-driven: the app's own PlaybackClock plays the launch for a few seconds; we count the
    frames actually painted per second (the clock asks for ~60);
  * per-frame cost: advance the time and repaint synchronously N times; 1000 / (ms per frame) is
    the rate the SM view could sustain.

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python benchmarks/gui_fps.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WARPSCOPE_SETTINGS_DIR", tempfile.mkdtemp(prefix="ws-fps-"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="RTX 5090")
    ap.add_argument("--elements", type=int, default=100_000_000)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--frames", type=int, default=300)
    args = ap.parse_args()
    if not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    from gui.app import make_app
    from gui.main_window import MainWindow
    from gui.models.launch import LaunchInputs

    app = make_app()
    win = MainWindow(
        LaunchInputs(gpu=args.gpu, elements=args.elements, threads_per_block=args.block),
        restore=False,
        load_kernels=False,
    )
    win.resize(1600, 1000)
    win.show()
    win.apply_default_dock_sizes()
    t_end = time.perf_counter() + 1.0
    while time.perf_counter() < t_end:
        app.processEvents()
    rec = win.simulation.run
    sm = win.sm_view
    print(
        f"platform: {app.platformName()}; {args.gpu}: {rec.spec.sm_count} SMs x "
        f"{rec.spec.max_warps_per_sm} warp slots; grid {rec.timeline.grid_blocks:,} blocks "
        f"({rec.timeline.n_blocks:,} simulated); SM view {sm.width()}x{sm.height()} px; "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    # 1. timer-driven playback, as a user sees it
    win.playback.set_time(0)
    win.playback.set_speed(1.0)
    f0 = sm.frames_drawn
    win.playback.set_playing(True)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        app.processEvents()
    win.playback.set_playing(False)
    dt = time.perf_counter() - t0
    played = (sm.frames_drawn - f0) / dt
    print(
        f"timer-driven playback: {played:.1f} frames painted per second over {dt:.1f} s "
        f"(the clock asks for ~60)"
    )

    # 2. synchronous cost per frame: new time -> numpy lookup -> paint
    costs = []
    for i in range(args.frames):
        t = rec.makespan_us * (i + 0.5) / args.frames
        a = time.perf_counter()
        win.playback.set_time(t)
        sm.repaint()
        costs.append((time.perf_counter() - a) * 1e3)
    med = statistics.median(costs)
    p95 = sorted(costs)[int(0.95 * len(costs))]
    print(
        f"per frame (set time + repaint SM view, timeline cursor, scrubber): median {med:.2f} ms, "
        f"p95 {p95:.2f} ms -> sustainable {1000 / med:.0f} fps"
    )
    win.shutdown()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
