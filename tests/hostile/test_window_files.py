"""Crafted traces and results files opened in the window: a status-bar message, never an
exception (the issue found 8 of 66 crafted traces and 17 of 111 results files raising)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given

from kernels.results import load_results
from sim.errors import UserError

from .helpers import fuzz, mutations, time_limit

ROOT = Path(__file__).resolve().parents[2]
TRACE = json.loads((ROOT / "tests" / "data" / "trace_h200.json").read_text())
TRACE["blocks"] = TRACE["blocks"][:300]  # small: each example simulates the grid
RESULTS = json.loads((ROOT / "benchmarks" / "gpu_blocks_h200.json").read_text())
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
def test_crafted_traces_open_or_say_why(window, tmp_path_factory, case):
    text, what = case
    path = tmp_path_factory.mktemp("t") / "t.json"
    path.write_text(text)
    with time_limit(20):
        window.open_trace(str(path), wait=True)  # True, or False with the reason in the status bar
    window.timeline.export_items()


@fuzz(30)
@given(case=mutations(RESULTS))
def test_crafted_results_open_or_say_why(window, tmp_path_factory, case):
    text, what = case
    path = tmp_path_factory.mktemp("r") / "r.json"
    path.write_text(text)
    with time_limit(20):
        _open_results(window, path)


@pytest.mark.parametrize("ext", ["json", "csv"])
def test_results_files_round_trip_into_the_window(window, tmp_path, ext):
    from kernels.results import save_results

    path = tmp_path / f"r.{ext}"
    from kernels.results import from_dict

    save_results(from_dict(RESULTS), path)
    assert _open_results(window, path)
