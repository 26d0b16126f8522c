"""The plots of docs/DISPATCH.md, made from the traces recorded on the H200, and the window's
screenshot of one trace beside its calibrated and ideal predictions.

    QT_QPA_PLATFORM=offscreen python3 benchmarks/dispatch_plots.py plots      # docs/dispatch/*.png
    xvfb-run -s "-screen 0 1600x1000x24" python3 benchmarks/dispatch_plots.py shot \\
        docs/screenshots/trace-ideal-calibrated-recorded.png

Data: tests/data/dispatch_h200 (sim.traces.trace_bundle), benchmarks/dispatch_fit_h200.json (the held-out
scores benchmarks/dispatch_fit.py wrote) and the checked-in profile (resources/physics/H200.json (its dispatch section)).
pyqtgraph draws, its ImageExporter writes the PNGs; nothing else is needed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.traces.compare import compare_trace  # noqa: E402
from sim.rules.devices import preset  # noqa: E402
from sim.schedule.timeline import residency_steps  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402

DATA = ROOT / "tests" / "data" / "dispatch_h200"
OUT = ROOT / "docs" / "dispatch"
REPORT = ROOT / "benchmarks" / "dispatch_fit_h200.json"
H200 = preset("H200")
COLORS = {"recorded": "#d8dce4", "calibrated": "#f5b942", "ideal": "#5fb3f9",
          "spin": "#f5b942", "sleep": "#6cc987", "memory": "#c678dd"}
WARPS = (1, 2, 4, 8, 16, 32)
W_COLORS = ("#5fb3f9", "#6cc987", "#f5b942", "#e06c75", "#c678dd", "#d8dce4")
DASH = SOLID = None  # Qt pen styles, once Qt is loaded (_pg)


def _pg():
    global DASH, SOLID
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    QApplication.instance() or QApplication([])
    DASH, SOLID = Qt.PenStyle.DashLine, Qt.PenStyle.SolidLine
    pg.setConfigOptions(antialias=True, background="#16181d", foreground="#d8dce4")
    return pg


def _save(widget, name: str, width: int = 1000) -> Path:
    from pyqtgraph.exporters import ImageExporter

    from PySide6.QtWidgets import QApplication

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    widget.resize(width, widget.height())
    widget.show()
    for _ in range(5):  # let the layout settle at its final size
        QApplication.processEvents()
    exporter = ImageExporter(widget.scene())
    exporter.parameters()["width"] = width
    exporter.export(str(path))
    widget.close()
    print(f"wrote {path.relative_to(ROOT)}")
    return path


def _rel(trace):
    t0 = trace.start_us.min()
    return trace.start_us - t0, trace.end_us - t0


def _per_sm_curve(start, end):
    times, counts = residency_steps(np.asarray(start), np.asarray(end))
    return np.append(times, end.max()), counts / H200.sm_count


def plot_burst(pg, traces) -> None:
    """Warps that start on an SM at once (within 0.6 us of the launch), by warps per block."""
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 420)
    p = win.addPlot(title="The first burst: warps each SM starts within 0.45 us of the launch "
                          "(median SM), 100-us blocks, one wave")
    rec, model = [], []
    for i, w in enumerate(WARPS):
        t = traces[f"A-spin-w{w}-100us-1w"]
        start, _ = _rel(t)
        rec.append(np.median(np.bincount(t.sm[start < 0.45], minlength=132)) * w)
        sim = compare_trace(t, H200).simulated
        model.append(np.median(np.bincount(sim.block_sm[sim.start_us < 0.45],
                                           minlength=132)) * w)
    x = np.arange(len(WARPS))
    p.addItem(pg.BarGraphItem(x=x - 0.18, height=rec, width=0.34, brush=COLORS["recorded"],
                              name="recorded"))
    p.addItem(pg.BarGraphItem(x=x + 0.18, height=model, width=0.34, brush=COLORS["calibrated"]))
    p.addLine(y=28, pen=pg.mkPen("#e06c75", style=DASH))
    p.getAxis("bottom").setTicks([[(i, f"{w} warps/block") for i, w in enumerate(WARPS)]])
    p.setLabel("left", "warps started at once")
    legend = p.addLegend(offset=(10, 10))
    legend.addItem(pg.BarGraphItem(x=[0], height=[0], width=0, brush=COLORS["recorded"]), "recorded")
    legend.addItem(pg.BarGraphItem(x=[0], height=[0], width=0, brush=COLORS["calibrated"]),
                   "dispatch model")
    legend.addItem(pg.PlotDataItem(pen=pg.mkPen("#e06c75", style=DASH)), "28 warps")
    _save(win, "burst.png")


def plot_arrivals(pg, traces) -> None:
    """When the blocks after the burst start, in one-wave traces of 200-us blocks."""
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 440)
    p = win.addPlot(title="After the burst: starts of the other blocks (one wave of 200-us "
                          "blocks; blocks per SM per 1-us bin)")
    p.addLegend(offset=(-10, 10))
    edges = np.arange(0.5, 40.5, 1.0)
    for w, color in zip(WARPS[:5], W_COLORS):
        start, _ = _rel(traces[f"A-spin-w{w}-200us-1w"])
        hist, _ = np.histogram(start[start > 0.6], bins=edges)
        p.plot(edges, hist / 132, stepMode="center", pen=pg.mkPen(color, width=2),
               name=f"{w} warps/block")
    for x, label in ((2, "trickle"), (12.5, "first visit of the group"), (29, "second visit")):
        text = pg.TextItem(label, color="#8b93a3", anchor=(0.5, 0))
        text.setPos(x, 4.3)
        p.addItem(text)
    p.setYRange(0, 4.4)
    p.setLabel("bottom", "start time (us after the first block)")
    p.setLabel("left", "blocks per SM")
    p.setLogMode(y=False)
    _save(win, "arrivals.png")


def plot_groups(pg, traces) -> None:
    """The second visit (first start >= 20 us) of every SM, in the dispatcher's SM order."""
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 420)
    p = win.addPlot(title="SMs are served in groups of 16 (a TPC of each GPC): when each SM's "
                          "waiting blocks started (one wave of 200-us blocks)")
    p.addLegend(offset=(10, 10))
    for name, color in (("A-spin-w4-200us-1w", COLORS["calibrated"]),
                        ("A-spin-w16-200us-1w", COLORS["ideal"])):
        t = traces[name]
        start, _ = _rel(t)
        order = []
        for sm in t.sm[np.argsort(t.block)]:
            if sm not in order:
                order.append(int(sm))
        release = []
        for sm in order:
            late = start[(t.sm == sm) & (start >= 20) & (start < 40)]
            release.append(late.min() if late.size else np.nan)
        p.plot(np.arange(len(order)), release, pen=None, symbol="o", symbolSize=5,
               symbolBrush=color, symbolPen=None, name=name.replace("A-spin-", ""))
    for g in range(0, 133, 16):
        p.addLine(x=g - 0.5, pen=pg.mkPen("#3b4150"))
    p.setLabel("bottom", "SM, in the order the recorded launch handed out its first blocks")
    p.setLabel("left", "start of the waiting blocks (us)")
    _save(win, "groups.png")


def plot_residency(pg, traces, names, file: str, title: str) -> None:
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 300 * len(names))
    for i, name in enumerate(names):
        t = traces[name]
        p = win.addPlot(row=i, col=0, title=name)
        if i == 0:
            p.addLegend(offset=(-10, 10))
        x, y = _per_sm_curve(*_rel(t))
        p.plot(x, y, stepMode="center", pen=pg.mkPen(COLORS["recorded"], width=2), name="recorded")
        for mode in ("calibrated", "ideal"):
            c = compare_trace(t, H200, mode=mode)
            x, y = _per_sm_curve(c.simulated.start_us, c.simulated.end_us)
            p.plot(x, y, stepMode="center", pen=pg.mkPen(COLORS[mode], width=1.6,
                                                         style=SOLID if mode == "calibrated" else DASH),
                   name=f"{mode}: makespan {c.makespan_error:+.0%}, residency error "
                        f"{c.residency_error:.2f}")
        p.setLabel("left", "blocks per SM")
        if i == len(names) - 1:
            p.setLabel("bottom", "time (us)")
    win.ci.setContentsMargins(6, 30, 6, 6)
    label = win.ci.addLabel(title, row=len(names), col=0)
    label.setText(title, size="9pt", color="#8b93a3")
    _save(win, file)


def plot_waits(pg, traces) -> None:
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 620)
    p = win.addPlot(row=0, col=0, title="What the warps do: 4-warp blocks of 20 us, busy (2.2 waves) "
                                        "or waiting (3.3 waves); busy warps hold new blocks back")
    p.addLegend(offset=(-10, 10))
    for name, key in (("A-spin-w4-20us-2.2w", "spin"), ("B-sleep-w4-20us-3.3w", "sleep"),
                      ("C-memory-w4-20us-3.3w", "memory")):
        x, y = _per_sm_curve(*_rel(traces[name]))
        p.plot(x, y, stepMode="center", pen=pg.mkPen(COLORS[key], width=2), name=name)
    p.setLabel("left", "blocks per SM")
    q = win.addPlot(row=1, col=0, title="The binary, not the launch path: 4,225 blocks of 8 warps "
                                        "spinning 20 us (family F)")
    q.addLegend(offset=(-10, 10))
    for name, color in (("F-cuda-spin-all-w8-20us-4225b", COLORS["sleep"]),
                        ("F-cuda-triton-binary-w8-20us-4225b", COLORS["spin"]),
                        ("F-triton-spin-w8-20us-4225b", COLORS["memory"])):
        x, y = _per_sm_curve(*_rel(traces[name]))
        q.plot(x, y, stepMode="center", pen=pg.mkPen(color, width=2), name=name[2:])
    q.setLabel("left", "blocks per SM")
    q.setLabel("bottom", "time (us)")
    _save(win, "waits.png")


def plot_accuracy(pg) -> None:
    """Predicted / recorded makespan of every trace its fit did not see (both folds)."""
    report = json.loads(REPORT.read_text())
    win = pg.GraphicsLayoutWidget()
    win.resize(1000, 440)
    p = win.addPlot(title="Held out: simulated / recorded makespan (folds a and b of "
                          "benchmarks/dispatch_fit.py; ideal = the textbook)")
    p.addLegend(offset=(-10, 10))
    traces = load_bundle(DATA)
    xs, cal, ideal = [], [], []
    for fold in ("a", "b"):
        for name, s in report["folds"][fold]["test_scores"].items():
            if not name.startswith("A-"):
                continue
            t = traces[name]
            rec = float(t.end_us.max() - t.start_us.min())
            c = compare_trace(t, H200, mode="ideal")
            xs.append(rec)
            cal.append(1 + s["makespan_error"])
            ideal.append(1 + c.makespan_error)
    p.plot(xs, ideal, pen=None, symbol="t", symbolSize=7, symbolBrush=COLORS["ideal"],
           symbolPen=None, name="ideal")
    p.plot(xs, cal, pen=None, symbol="o", symbolSize=6, symbolBrush=COLORS["calibrated"],
           symbolPen=None, name="calibrated")
    for y in (0.9, 1.1):
        p.addLine(y=y, pen=pg.mkPen("#8b93a3", style=DASH))
    p.setLogMode(x=True)
    p.getAxis("bottom").setTicks([[(np.log10(v), f"{v:g}") for v in
                                   (2, 5, 10, 20, 50, 100, 200, 500, 1000)]])
    p.setLabel("bottom", "recorded makespan (us)")
    p.setLabel("left", "simulated / recorded")
    _save(win, "accuracy.png")


def plots() -> None:
    pg = _pg()
    traces = load_bundle(DATA)
    plot_burst(pg, traces)
    plot_arrivals(pg, traces)
    plot_groups(pg, traces)
    plot_residency(pg, traces, ["A-spin-w4-20us-2.2w", "A-spin-w4-100us-1w",
                                "A-spin-w16-5us-4.5w"], "residency.png",
                   "Resident blocks per SM: recorded (white), calibrated (solid), ideal (dashed)")
    plot_waits(pg, traces)
    if REPORT.exists():
        plot_accuracy(pg)


def shot(path: str, name: str = "A-spin-w4-20us-2.2w") -> None:
    """The real window with one recorded trace open: recorded, calibrated, ideal."""
    from PySide6.QtCore import Qt
    from shot_window import open_window, pump, save_shot  # benchmarks/: the window for shots

    from gui.models.launch import LaunchInputs
    from sim.traces.trace_bundle import extract

    trace_file = Path(tempfile.mkdtemp()) / f"{name}.json"
    extract(DATA, name, trace_file)
    w = open_window(LaunchInputs(gpu="H200", elements=4646 * 128, threads_per_block=128))
    w.options.set(cost="uniform", placement="tpc-spread", schedule="calibrated", wait="spin")
    w.simulate_now()
    assert w.open_trace(str(trace_file))
    w.resizeDocks([w.docks["timeline"]], [620], Qt.Orientation.Vertical)
    pump(1.0)
    save_shot(w, path)
    print(f"wrote {path}")
    w.shutdown()


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "plots"
    if what == "plots":
        plots()
    elif what == "shot":
        shot(sys.argv[2], *(sys.argv[3:4]))
    else:
        sys.exit("usage: dispatch_plots.py plots | shot FILE.png [TRACE]")
