"""The Verdicts panel alone, scrolled to its next steps, for docs/screenshots (no GPU needed):

    QT_QPA_PLATFORM=offscreen python3 benchmarks/shot_verdicts.py OUT.png

H200, 2^23 elements x 256 threads at 18 registers: one step beyond the 2% noise band, one under it.
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


def main(out: str) -> int:
    app = make_app()
    w = MainWindow(None, restore=False, load_kernels=False)
    assert w.model.update(gpu="H200", elements=2**23, threads_per_block=256, regs_per_thread=18)
    w.resize(1920, 1080)
    w.show()
    settle(app, 100)
    flush_redraws(w)
    dock = w.docks["verdicts"]
    dock.setFloating(True)
    dock.resize(760, 900)
    settle(app)
    bar = w.teach.verdicts_view.list.verticalScrollBar()
    bar.setValue(bar.maximum())
    settle(app, 20)
    dock.grab().save(out)
    w.shutdown()
    print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
