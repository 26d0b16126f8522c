"""File ▸ Export ▸ Perfetto timeline…: the window's schedule written as a Trace Event file off the
GUI thread, the same rules as the command's file (tests/sim/test_perfetto.py), errors as one line."""

import json
import threading
from pathlib import Path

from PySide6.QtWidgets import QMenu

import sim.traces.perfetto
from gui.perfetto_export import export_perfetto
from tests.sim.test_perfetto import check_against, validate

DATA = Path(__file__).parents[1] / "data"


def test_the_entry_is_under_file_export(win):
    w = win("H200")
    menus = {m.title(): m for m in w.menuBar().findChildren(QMenu)}
    assert w.act_export_perfetto in menus["&Export"].actions()
    assert w.act_export in menus["&Export"].actions()


def test_writes_the_shown_schedule_off_the_gui_thread(win, qtbot, tmp_path, monkeypatch):
    w = win("H200", 1_000_000, 256)
    threads = []
    original = sim.traces.perfetto.write_perfetto

    def spy(*args, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kw)

    monkeypatch.setattr(sim.traces.perfetto, "write_perfetto", spy)
    path = tmp_path / "window.json"
    export_perfetto(w, str(path))
    qtbot.waitUntil(lambda: not w.file_jobs.busy(), timeout=20000)
    assert threads == [False]
    assert "Perfetto timeline written" in w.statusBar().currentMessage()
    check_against(json.loads(path.read_text()), 1, "predicted", w.simulation.run.timeline)


def test_with_a_trace_open_both_sources(win, qtbot, tmp_path):
    w = win("H200")
    assert w.open_trace(str(DATA / "trace_h200.json"), wait=True)
    path = tmp_path / "both.json"
    export_perfetto(w, str(path))
    qtbot.waitUntil(lambda: not w.file_jobs.busy(), timeout=20000)
    doc = json.loads(path.read_text())
    assert set(validate(doc)) == {1, 2}
    check_against(doc, 2, "recorded", w.traces.comparison.recorded)


def test_an_unwritable_place_is_one_line(win, qtbot, tmp_path):
    w = win("H200")
    export_perfetto(w, str(tmp_path / "missing" / "x.json"))
    qtbot.waitUntil(lambda: not w.file_jobs.busy(), timeout=20000)
    text = w.statusBar().currentMessage()
    assert text.startswith("Perfetto export failed:") and "\n" not in text and "does not exist" in text
