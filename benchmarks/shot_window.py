"""The real window for the screenshot scripts (gui_docs_shots, teach_shots, waves_shots,
kernel_file_shots, dispatch_plots): made, sized and shown, the event loop pumped, and grabbed with
every staged redraw finished. Settings go to a throwaway folder, never the user's.

    from shot_window import open_window, pump, save_shot      # scripts run from benchmarks/
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("WARPSCOPE_SETTINGS_DIR", tempfile.mkdtemp())

from gui.app import make_app  # noqa: E402 (after sys.path)
from gui.main_window import MainWindow  # noqa: E402
from gui.redraw import flush_redraws  # noqa: E402


def window_size(arg: str | None, default: str = "1600x1000") -> tuple[int, int]:
    """"1024x640" -> (1024, 640)."""
    width, height = (int(v) for v in (arg or default).split("x"))
    return width, height


def pump(seconds: float, until=None) -> bool:
    """Run the event loop for `seconds`, or until `until()` is true (then True), as app.exec does."""
    app = make_app()
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        app.processEvents()
        time.sleep(0.005)
        if until is not None and until():
            return True
    return False


def open_window(inputs, size: tuple[int, int] = (1600, 1000), load_kernels: bool = False,
                settle: bool = True) -> MainWindow:
    """The window for `inputs` (a LaunchInputs, or None for the defaults), shown at `size`;
    with `settle`, laid out with the default dock sizes."""
    make_app()
    w = MainWindow(inputs, restore=False, load_kernels=load_kernels)
    w.resize(*size)
    w.show()
    if settle:
        pump(0.5)
        w.apply_default_dock_sizes()
        pump(0.2)
    return w


def save_shot(w: MainWindow, path) -> bool:
    """Finish the waiting redraws, then save the window as a PNG."""
    flush_redraws(w)
    return w.grab().save(str(path), "PNG")
