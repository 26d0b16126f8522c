"""How long the window takes to compare the largest trace in tests/data, and how long the GUI
thread stalls meanwhile (the comparison itself runs on the window's trace runner).

    QT_QPA_PLATFORM=offscreen python3 benchmarks/compare_window_time.py [--runs 3]

The trace is dispatch_h200/E-add-2^24-b256-w2 (65,536 blocks, the memory-bound add), extracted
as `python3 -m sim.traces.trace_bundle` does. A 5 ms QTimer on the GUI thread records the longest gap
between its ticks, from File ▸ Open trace… until 1.5 s after the comparison is shown (the
charts rasterise after it arrives).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args(argv)
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from gui.main_window import MainWindow
    from gui.models.launch import LaunchInputs
    from sim.traces.trace import write_trace
    from sim.traces.trace_bundle import load_bundle

    path = Path(tempfile.mkdtemp()) / "largest.json"
    trace = load_bundle(ROOT / "tests" / "data" / "dispatch_h200")["E-add-2^24-b256-w2"]
    write_trace(path, trace)
    w = MainWindow(LaunchInputs(), restore=False, load_kernels=False, sim_delay_ms=5)
    w.resize(1500, 1000)
    w.show()
    for _ in range(20):
        app.processEvents()
    elapsed = []
    w.trace_runner.finished.connect(lambda o: elapsed.append(o.elapsed_s))
    for run in range(args.runs):
        clock, gaps = QElapsedTimer(), [0]
        clock.start()
        last = [0]

        def tick():
            gaps.append(clock.elapsed() - last[0])
            last[0] = clock.elapsed()

        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(5)
        t0 = time.perf_counter()
        assert w.open_trace(str(path), wait=True), w.statusBar().currentMessage()
        shown = time.perf_counter() - t0
        settle = time.perf_counter() + 1.5
        while time.perf_counter() < settle:
            app.processEvents()
        timer.stop()
        print(f"run {run + 1}: {len(trace.block):,} blocks shown after {shown:.2f} s (the job: "
              f"{elapsed[-1]:.2f} s on the trace runner); longest GUI-thread gap {max(gaps)} ms")
    w.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
