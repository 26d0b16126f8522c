"""The window on an H200 add whose blocks the DRAM bounds, for docs/screenshots (no GPU needed):

    QT_QPA_PLATFORM=offscreen python3 benchmarks/shot_faster_sms.py WINDOW.png TIMELINE.png \
        [KERNEL ELEMENTS BLOCK_SIZE THREADS [WIDTH HEIGHT]]

add_triton, 2^24 elements, BLOCK_SIZE 1024 x 4 warps: 16 blocks of 12 KiB in flight per SM, over
the 64 KiB past which the H200's 24 faster SMs (resources/physics/H200.json "dram_share") run
more blocks; in the Timeline they are the rows whose waves run ahead (SMs 32-43, 78-87, 126-127).
Another launch: e.g. `copy_triton 16777216 256 32` (blocks the SM's dispatcher bounds, ninth session).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gui.app import make_app  # noqa: E402
from gui.main_window import MainWindow  # noqa: E402
from gui.redraw import flush_redraws  # noqa: E402


def settle(app, rounds: int = 50) -> None:
    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)


def main(window_png: str, timeline_png: str, kernel: str = "add_triton", elements: int = 2**24,
         block_size: int = 1024, threads: int = 128, width: int = 1920, height: int = 1080) -> int:
    app = make_app()
    w = MainWindow(None, restore=False, load_kernels=True)
    start = time.monotonic()
    while w.model.kernel(kernel) is None and time.monotonic() - start < 120:
        settle(app, 20)  # the kernel list comes from its own process
    assert w.model.update(gpu="H200", kernel=kernel, elements=int(elements),
                          block_size=int(block_size), threads_per_block=int(threads))
    w.resize(int(width), int(height))
    w.show()
    settle(app, 200)
    flush_redraws(w)
    settle(app, 100)
    shot = w.grab()
    shot.save(window_png)
    timeline = w.docks["timeline"] if "timeline" in w.docks else None
    (timeline.grab() if timeline is not None else shot.copy(360, 700, 1160, 330)).save(timeline_png)
    w.shutdown()
    print("wrote", window_png, timeline_png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
