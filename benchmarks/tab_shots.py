"""Every tab of the window, one screenshot each, under Xvfb (the xcb platform), to look for
crowding and clipping at the sizes the window supports:

    xvfb-run -a -s "-screen 0 2000x1200x24" .venv/bin/python benchmarks/tab_shots.py OUT_DIR [WxH ...] [--only KEY,...]

The launch is session2_shots.py's (H200, 2^24 elements, 256 threads: the longest timeline summary,
with identical waves skipped). Each dock tab (timeline, bandwidth, waves, source, latency, compare,
diff; occupancy, verdicts) is raised in turn, and each of the Bandwidth panel's inner tabs, and the
window is saved as OUT_DIR/tabs-WxH-KEY.png; last, tests/data/trace_h200.json is opened beside its
predictions (tabs-WxH-trace.png). `--only timeline,trace` takes only those keys (an inner tab of
the Bandwidth panel is `bandwidth:N`). Sizes default to 1024x640.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shot_window import ROOT, open_window, pump, save_shot, window_size  # noqa: E402

from gui.models.launch import LaunchInputs  # noqa: E402

DOCKS = ("timeline", "bandwidth", "waves", "source", "latency", "compare", "diff", "occupancy",
         "verdicts")


def shoot(out: Path, size: tuple[int, int], only: set[str] | None) -> None:
    w = open_window(LaunchInputs(gpu="H200", elements=2**24, threads_per_block=256), size)
    w.simulate_now()
    w.predict_waves_now()
    pump(0.5)
    name = f"{size[0]}x{size[1]}"
    for key in DOCKS:
        if key not in w.docks:
            continue
        dock = w.docks[key]
        dock.show()
        dock.raise_()
        pump(0.4)
        if only is None or key in only:
            print(name, key, save_shot(w, out / f"tabs-{name}-{key}.png"))
        if key == "bandwidth":
            tabs = w.bandwidth.tabs
            for i in range(tabs.count()):
                tabs.setCurrentIndex(i)
                pump(0.4)
                if only is None or f"bandwidth:{i}" in only:
                    print(name, key, i, tabs.tabText(i),
                          save_shot(w, out / f"tabs-{name}-bandwidth-{i}.png"))
            tabs.setCurrentIndex(0)
    if only is None or "trace" in only:  # the recorded H200 trace above its two predictions
        print(name, "trace opened:", w.open_trace(str(ROOT / "tests" / "data" / "trace_h200.json"), wait=True))
        pump(0.5)
        print(name, "trace", save_shot(w, out / f"tabs-{name}-trace.png"))
    w.shutdown()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--only")]
    only_arg = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")), None)
    if "--only" in sys.argv:  # "--only timeline" as two words
        only_arg = sys.argv[sys.argv.index("--only") + 1]
        args.remove(only_arg)
    out = Path(args[0] if args else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    only = None if only_arg is None else set(only_arg.split(","))
    for arg in args[1:] or ["1024x640"]:
        shoot(out, window_size(arg), only)
