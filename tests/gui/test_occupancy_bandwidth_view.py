"""The bandwidth-against-occupancy view: the launch's curve, a forced count, an open sweep."""

from pathlib import Path

import pytest

from PySide6.QtWidgets import QApplication

from gui.models.bench import BenchModel
from gui.models.launch import LaunchInputs, LaunchModel
from gui.widgets.qt_occupancy_bandwidth import QtOccupancyBandwidth
from kernels.measure.results import load_results
from sim.model.launch_model import launch_of, predict_launch

SWEEP = Path(__file__).resolve().parents[2] / "tests" / "data" / "h200_occupancy_sweep_fp64.json"


def _view(qtbot, gpu="H200", sweep=True):
    launch = LaunchModel(LaunchInputs(gpu=gpu, elements=2**26, threads_per_block=256))
    bench = BenchModel()
    if sweep:
        bench.set_result(load_results(SWEEP))
    view = QtOccupancyBandwidth(launch, bench)
    qtbot.addWidget(view)
    view.show()
    return launch, view


@pytest.mark.slow
def test_forcing_a_count_shows_the_model_s_answer_there(qtbot):
    launch, view = _view(qtbot)
    st = launch.state
    assert len(view._curve) == st.occ.blocks_per_sm == 8
    view.forced.setValue(2)
    p = predict_launch(st.spec, launch_of(st.occ, st.geometry, blocks_per_sm=2))
    text = view.note.text()
    assert f"{p.bandwidth_gbps:,.0f} GB/s" in text and "forced" in text
    assert "add fp64 (measured 2026-12-01)" in text and "1/SM" in text  # the sweep's points


def test_a_sweep_from_another_gpu_is_named_not_drawn(qtbot):
    launch, view = _view(qtbot, gpu="A100 80GB")
    assert "measured on the NVIDIA H200" in view.note.text()
    assert "assumed from H200" in view.note.text()  # the prediction's confidence


@pytest.mark.slow
def test_hidden_it_waits_until_shown(qtbot):
    launch, view = _view(qtbot, sweep=False)
    view.hide()
    launch.update(threads_per_block=128)
    assert view._dirty
    view.show()
    assert not view._dirty and len(view._curve) == 16


def test_the_window_has_it_as_a_bandwidth_tab(win):
    w = win("H200", 2**24, 512)
    tabs = w.bandwidth.tabs
    index = [tabs.tabText(i) for i in range(tabs.count())].index("Bandwidth vs occupancy")
    assert tabs.widget(index).widget() is w.occupancy_bandwidth  # in a scroll area
    w.show()
    w.docks["bandwidth"].raise_()
    tabs.setCurrentIndex(index)
    QApplication.processEvents()
    assert [c.blocks_per_sm for c in w.occupancy_bandwidth._curve] == [1, 2, 3, 4]
