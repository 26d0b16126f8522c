"""Crafted traces and results files opened in the window: a status-bar message, never an
exception (the issue found 8 of 66 crafted traces and 17 of 111 results files raising). The
panels' own Open… (latency, timing methods, waves) read in the "data files" worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernels.measure.results import load_results
from sim.inputs.errors import UserError

from tests.hostile.helpers import fuzz, mutations, time_limit

ROOT = Path(__file__).resolve().parents[2]
TRACE = json.loads((ROOT / "tests" / "data" / "trace_h200.json").read_text())
TRACE["blocks"] = TRACE["blocks"][:300]  # small: each example simulates the grid
RESULTS = json.loads((ROOT / "tests" / "data" / "h200_block_size_sweep.json").read_text())
RESULTS["measurements"] = RESULTS["measurements"][:6]


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    import os

    os.environ["WARPSCOPE_SETTINGS_DIR"] = str(tmp_path_factory.mktemp("settings"))
    from gui.main_window import MainWindow
    from gui.models.launch import LaunchInputs

    win = MainWindow(LaunchInputs(gpu="H200"), restore=False, load_kernels=False, sim_delay_ms=5)
    win.resize(1400, 900)
    win.show()
    yield win
    win.shutdown()
    win.close()
    win.deleteLater()


def _open_results(win, path) -> bool:
    """What File > Open results does (the worker's load, then the panel), on this thread."""
    try:
        result = load_results(path)
    except UserError as exc:
        assert "\n" not in str(exc)
        return False
    win.bench.set_result(result)  # the model: plots, predictions, the window's measured resources
    win.bandwidth.export_items()
    json.dumps(win.session_dict(), default=str)
    return True


@fuzz(20)
@given(case=mutations(TRACE))
@pytest.mark.slow
def test_crafted_traces_open_or_say_why(window, tmp_path_factory, case):
    text, what = case
    path = tmp_path_factory.mktemp("t") / "t.json"
    path.write_text(text)
    with time_limit(20):
        window.open_trace(str(path), wait=True)  # True, or False with the reason in the status bar
    window.timeline.export_items()


@fuzz(30)
@given(case=mutations(RESULTS))
@pytest.mark.slow
def test_crafted_results_open_or_say_why(window, tmp_path_factory, case):
    text, what = case
    path = tmp_path_factory.mktemp("r") / "r.json"
    path.write_text(text)
    with time_limit(20):
        _open_results(window, path)


@pytest.mark.parametrize("ext", ["json", "csv"])
def test_results_files_round_trip_into_the_window(window, tmp_path, ext):
    from kernels.measure.results import save_results

    path = tmp_path / f"r.{ext}"
    from kernels.measure.results import from_dict

    save_results(from_dict(RESULTS), path)
    assert _open_results(window, path)


# -- Latency ▸ Open…, Timing methods ▸ Open…, the Waves tab: read off the GUI thread -------
LATENCY = json.loads((ROOT / "resources" / "measured" / "H200_latency.json").read_text())
LATENCY["methods"] = LATENCY["methods"][:6]
LATENCY["occupancy"]["rows"] = [r for r in LATENCY["occupancy"]["rows"]
                                if r.get("target_blocks_per_sm") is not None][:4]
MATMUL = json.loads((ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json").read_text())
MATMUL["steps"] = {"sawtooth": {**MATMUL["steps"]["sawtooth"],
                                "points": MATMUL["steps"]["sawtooth"]["points"][:3]}}


def _panels(win):
    """(name, open_in_background, where its one line appears) of each panel's Open…."""
    status = lambda: win.statusBar().currentMessage()  # noqa: E731
    latency, timing = win.teach.latency_view, win.teach.timing_view
    return {"latency": (latency.open_in_background, latency.summary.text),
            "timing": (timing.open_in_background, timing.notes.text),
            "waves": (win.waves_view.open_in_background, status)}


def _open_and_wait(win, qtbot, panel: str, path) -> str:
    open_later, shown = _panels(win)[panel]
    with time_limit(5):  # the GUI thread only submits: a FIFO or /dev/zero cannot block it
        job = open_later(str(path))
    assert job is not None
    qtbot.waitUntil(lambda: not win.file_jobs.busy(), timeout=20000)
    return shown()


@pytest.mark.parametrize("panel", ["latency", "timing", "waves"])
@pytest.mark.parametrize("make", ["fifo", "zero", "deep", "nested-list"])
def test_hostile_files_in_each_panel_are_one_line(window, qtbot, tmp_path, panel, make):
    import os

    path = tmp_path / "in.json"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "zero":
        path.symlink_to("/dev/zero")
    elif make == "deep":
        path.write_text("[" * 50_000 + "]" * 50_000)
    else:
        path.write_text(json.dumps([1]))
    line = _open_and_wait(window, qtbot, panel, path)
    assert line and "\n" not in line and "Traceback" not in line, line


@fuzz(15)
@given(case=mutations(LATENCY), panel=st.sampled_from(["latency", "timing"]))
@pytest.mark.slow
def test_crafted_latency_runs_open_or_say_why(window, qtbot, tmp_path_factory, case, panel):
    path = tmp_path_factory.mktemp("l") / "l.json"
    path.write_text(case[0])
    _open_and_wait(window, qtbot, panel, path)  # pytest-qt fails the test on an escaped exception
    window.teach.latency_view.redraw()
    window.teach.timing_view.export_items()  # draws it even behind its tab


@fuzz(15)
@given(case=mutations(MATMUL))
@pytest.mark.slow
def test_crafted_sawtooths_open_or_say_why(window, qtbot, tmp_path_factory, case):
    path = tmp_path_factory.mktemp("m") / "m.json"
    path.write_text(case[0])
    _open_and_wait(window, qtbot, "waves", path)
    window.waves_panel.predict_now()
    window.waves_view.redraw()
    window.waves_view.export_items()


def test_the_read_runs_off_the_gui_thread(window, qtbot):
    import threading

    seen = []
    window.file_jobs.open("x", lambda p: seen.append(threading.current_thread()) or p,
                          seen.append, seen.append)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=10000)
    assert seen[0] is not threading.main_thread() and seen[1] == "x"


def test_files_opened_together_are_all_read(window, qtbot):
    """None replaces another (the issue: files opened meanwhile were dropped silently)."""
    done = []
    for i in range(4):
        window.file_jobs.open(str(i), lambda p: p, done.append, done.append)
    qtbot.waitUntil(lambda: len(done) == 4, timeout=10000)
    assert done == ["0", "1", "2", "3"]


@pytest.mark.parametrize("panel", ["latency", "timing", "waves"])
def test_each_open_button_reads_in_the_worker(window, qtbot, monkeypatch, tmp_path, panel):
    """The buttons' slots: the dialog's file goes to the data-files worker, not this thread."""
    import os

    from PySide6.QtWidgets import QFileDialog

    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(fifo), ""))
    view = {"latency": window.teach.latency_view, "timing": window.teach.timing_view,
            "waves": window.waves_view}[panel]
    submitted, submit = [], window.file_jobs.runner.submit
    monkeypatch.setattr(window.file_jobs.runner, "submit",
                        lambda fn, name="": submitted.append(name) or submit(fn, name))
    with time_limit(5):
        view.open_button.click()
    assert submitted == ["open in.json"]
    qtbot.waitUntil(lambda: not window.file_jobs.busy(), timeout=10000)
    assert "pipe, device" in _panels(window)[panel][1]()
