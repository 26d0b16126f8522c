"""File ▸ Open trace…: the comparison runs on the trace runner, never the GUI thread, with
progress and cancel, and shows what `main.py compare` prints."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMenu

import sim.traces.compare
from sim.traces.compare import compare_trace
from sim.traces.trace import read_any_trace

DATA = Path(__file__).parents[1] / "data"


def test_open_trace_is_in_the_file_menu(win):
    w = win("H200")
    file_menu = w.menuBar().findChildren(QMenu)[0]
    assert file_menu.title() == "&File" and w.act_open_trace in file_menu.actions()
    assert w.act_open_trace.text() == "Open &trace…"


def test_the_comparison_runs_off_the_gui_thread_with_progress(win, monkeypatch):
    w = win("H200")
    threads, labels = [], []
    original = sim.traces.compare.compare_trace

    def spy(*args, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kw)

    monkeypatch.setattr(sim.traces.compare, "compare_trace", spy)
    w.traces.busy.connect(lambda label, done, total: labels.append((label, done, total)))
    assert w.open_trace(str(DATA / "proton" / "vector_add.chrome_trace"), wait=True)
    assert threads == [False, False]  # calibrated and ideal, both on the worker
    assert any("predicting: calibrated" in label for label, *_ in labels) and labels[-1][0] == ""
    assert not w.timeline.trace_busy.isVisibleTo(w.timeline)
    view = w.traces.comparison
    expected = original(read_any_trace(DATA / "proton" / "vector_add.chrome_trace"), view.spec)
    assert view.comparison.as_dict() == expected.as_dict()
    assert "residency error" in w.timeline.caption.text()


def test_cancel_stops_it_and_keeps_what_was_shown(win):
    w = win("H200")
    assert w.open_trace(str(DATA / "matmul_traces" / "matmul_tiled_132tiles.json"), wait=True)
    shown = w.traces.comparison
    w.open_trace(str(DATA / "trace_h200.json"))
    assert w.trace_runner.busy() and w.timeline.trace_busy.isVisibleTo(w.timeline)
    w.timeline.trace_cancel_button.click()
    while w.traces.pending is not None:
        QCoreApplication.processEvents()
    assert w.traces.comparison is shown
    assert "cancelled" in w.statusBar().currentMessage()
    assert not w.timeline.trace_busy.isVisibleTo(w.timeline)


def test_a_newer_file_replaces_the_one_being_compared(win):
    w = win("H200")
    w.open_trace(str(DATA / "trace_h200.json"))
    assert w.open_trace(str(DATA / "matmul_traces" / "matmul_stream_k_133tiles.json"), wait=True)
    assert w.traces.comparison.comparison.model == "compute"
    c = compare_trace(read_any_trace(DATA / "matmul_traces" / "matmul_stream_k_133tiles.json"))
    assert w.traces.comparison.comparison.as_dict() == c.as_dict()


def test_a_bundle_opens_as_a_list_of_its_traces_and_the_pick_is_compared(win):
    """File ▸ Open trace… on a bundle's folder lists its traces (the index's names, in order);
    the one picked is compared as `main.py compare DIR NAME` compares it."""
    import json

    from sim.traces.trace_bundle import bundle_trace

    bundle = DATA / "h200_memory_kernels_fit"
    names = [e["name"] for e in json.loads((bundle / "dispatch_index.json").read_text())["traces"]]
    w = win("H200")
    w.traces.close()
    assert not w.open_trace(str(bundle), wait=True)  # nothing compared yet: a list to pick from
    picker = w.trace_opening.picker
    assert picker is not None and picker.isVisible()
    assert [picker.list.item(r).data(0x0100) for r in range(len(names))] == names
    assert "not a WarpScope trace" not in w.statusBar().currentMessage()
    assert f"trace bundle of {len(names)} traces" in w.statusBar().currentMessage()
    picker.filter.setText("softmax")
    assert picker.current_name().startswith("softmax")
    assert picker.choose(names[2])
    while w.traces.pending is not None or w.trace_runner.busy():
        QCoreApplication.processEvents()
    view = w.traces.comparison
    assert view is not None, w.statusBar().currentMessage()
    assert view.name == names[2] and w.trace_opening.picker is None
    expected = compare_trace(bundle_trace(bundle, names[2]), view.spec)
    assert view.comparison.as_dict() == expected.as_dict()
    assert names[2] in w.timeline.trace_plot.getPlotItem().titleLabel.text
    w.traces.close()
