"""File ▸ Open Nsight Compute report…: the report read off the GUI thread into a table, ncu beside
WarpScope, a difference marked; a damaged file one line in the status bar."""

import threading
from pathlib import Path

import sim.traces.ncu_compare
from gui.ncu_view import open_ncu_report

REPORT = Path(__file__).parents[1] / "data" / "ncu" / "h100_launchstats_occupancy.csv"


def test_opens_into_a_table_off_the_gui_thread(win, qtbot, monkeypatch):
    w = win("H200")
    assert w.act_open_ncu.text() == "Open &Nsight Compute report…"
    threads = []
    original = sim.traces.ncu_compare.compare_kernel

    def spy(*args, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kw)

    monkeypatch.setattr(sim.traces.ncu_compare, "compare_kernel", spy)
    open_ncu_report(w, str(REPORT))
    qtbot.waitUntil(lambda: not w.file_jobs.busy(), timeout=20000)
    view = w.ncu_view
    assert threads and not any(threads)
    assert view.kernels.count() == 7 and "7 kernels: 7 with every derived number equal" in view.summary.text()
    view.kernels.setCurrentIndex(6)  # cuBLAS's product: registers and shared memory both bind
    rows = {view.table.item(i, 0).text(): view.table.item(i, 1).text() for i in range(view.table.rowCount())}
    assert rows["Theoretical occupancy"] == "18.75 %" and view.flagged() == []
    assert view.comparisons[0].gpu == "H200"  # CC 9.0 and 132 SMs: the GPU the window shows
    view.close()


def test_a_damaged_report_is_one_line(win, qtbot, tmp_path):
    w = win("H200")
    bad = tmp_path / "cut.csv"
    bad.write_bytes(REPORT.read_bytes()[:5000])
    open_ncu_report(w, str(bad))
    qtbot.waitUntil(lambda: not w.file_jobs.busy(), timeout=20000)
    text = w.statusBar().currentMessage()
    assert text.startswith("Could not open the report:") and "\n" not in text
