"""The slider launches the kernel, checked in the real window: open it offscreen with the live
kernels (the GPU detected), pick a kernel, let the threads slider settle at several block sizes,
and record for each how long after the move the measured point arrived, the measured and the
predicted time; then save the window with the Live launch tab shown.

    QT_QPA_PLATFORM=offscreen python3 benchmarks/slider_launch_check.py --out $OUT/slider

On a GPU every point should be a GPU timing that arrives about half a second after the move
(the 300 ms settle included; the first block size also compiles). Without one the same path
runs Triton's interpreter and every point says it is no GPU timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _wait(app, done, timeout_s: float) -> float | None:
    t0 = time.perf_counter()
    while not done():
        if time.perf_counter() - t0 > timeout_s:
            return None
        app.processEvents()
        time.sleep(0.005)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for slider_launch.json and the screenshots")
    ap.add_argument("--kernel", default="add_triton")
    ap.add_argument("--elements", default=str(1 << 24))
    ap.add_argument("--blocks", default="128,256,512,1024,256", help="threads per block, in order")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from gui.app import make_app
    from gui.main_window import MainWindow
    from gui.style import apply_dark_theme
    from sim.inputs.units import parse_count

    app = make_app()
    apply_dark_theme(app)
    win = MainWindow(None, restore=False, load_kernels=True, sim_delay_ms=5)
    win.resize(1366, 768)
    win.show()
    rows = []
    try:
        if _wait(app, lambda: win.live_kernels.info is not None, 300) is None:
            raise SystemExit("the live kernels did not load in 300 s")
        win.model.update(kernel=args.kernel, elements=parse_count(args.elements, "elements"))
        slider = win.models.slider
        for threads in (int(b) for b in args.blocks.split(",")):
            before = slider.latest
            win.controls.threads_slider.setValue(threads)
            waited = _wait(app, lambda: slider.latest is not before and slider.latest is not None
                           and slider.latest.wanted.threads_per_block == threads, 180)
            p = slider.latest
            rows.append({"threads_per_block": threads, "arrived_after_s": waited,
                         "status": slider.status} if waited is None else
                        {"threads_per_block": threads, "arrived_after_s": round(waited, 3),
                         "is_gpu_timing": p.is_gpu_timing, "median_us": p.median_us,
                         "p20_us": p.p20_us, "p80_us": p.p80_us, "predicted_us": p.predicted_us,
                         "device": p.device, "method": p.method, "elements_run": p.elements_run,
                         "block": dict(p.wanted.block)})
            print(json.dumps(rows[-1]), flush=True)
        win.docks["slider_launch"].raise_()
        _wait(app, lambda: False, 0.5)
        win.grab().save(str(out / "slider_launch_1366.png"))
        win.docks["verdicts"].raise_()
        win.resize(1024, 640)
        _wait(app, lambda: False, 0.5)
        win.grab().save(str(out / "slider_launch_verdicts_1024.png"))
    finally:
        (out / "slider_launch.json").write_text(json.dumps(
            {"kernel": args.kernel, "elements": args.elements, "gpu": win.model.state.spec.name,
             "points": rows}, indent=1))
        win.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
