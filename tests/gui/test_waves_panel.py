"""The waves panel in the window: the measured sawtooth beside its prediction, a click that loads
that launch into the SM view and the timeline, recorded matmul schedules beside their simulation,
and the throughput panel in TFLOP/s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json"


@pytest.fixture
def window(win):
    """The shared window, its waves model back to the default sweep."""
    w = win("L40S")
    w.waves.set_sweep("M=1024,K=8192,N=256..14080x256")
    w.predict_waves_now()
    return w


@pytest.mark.slow
def test_the_sawtooth_is_predicted_only_once_its_tab_is_shown(qtbot, make_window):
    w = make_window("H200")
    w.show()
    qtbot.waitExposed(w)
    assert not w.waves.is_current() and not w.waves_runner.busy()  # behind the Timeline tab
    w.docks["waves"].raise_()
    qtbot.waitUntil(w.waves.is_current, timeout=10000)


@pytest.mark.slow
def test_a_measured_sawtooth_is_drawn_beside_its_prediction(qtbot, mount):
    w = mount("L40S", views=("waves",))  # the view alone: its model, predicted on this thread
    assert w.waves_view.open_path(str(RUN))
    w.predict_waves_now()
    view = w.waves_view
    title = view.plot.getPlotItem().titleLabel.text
    assert "H200" in title and "measured" in title
    legend = [label.text for _, label in view.plot.getPlotItem().legend.items]
    assert {"tiled", "persistent", "stream-K", "cuBLAS", "simulated (dashed)"} <= set(legend)
    assert "as predicted" in view.caption.toolTip() and "4,352, 8,704, 12,800" in view.caption.toolTip()
    lines = [i for i in view.plot.getPlotItem().items if type(i).__name__ == "InfiniteLine"
             and i.angle == 90]
    assert sorted(round(i.value()) for i in lines) == [4224, 8448, 12672]


@pytest.mark.slow
def test_clicking_a_point_animates_that_launch(qtbot, window):
    w = window
    w.waves_view.open_path(str(RUN))
    w.predict_waves_now()
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.docks["waves"].raise_()
    QApplication.processEvents()
    tiled = {s.kernel: s for s in w.waves.series()}["matmul_tiled"]
    x, y = tiled.x[16], tiled.median[16]  # N = 4352: 136 tiles, just past one wave
    assert w.waves_view.nearest_point(x, y) == ("matmul_tiled", 16)
    w.waves.select(*w.waves_view.nearest_point(x, y))
    state = w.model.state
    assert state.inputs.kernel == "matmul_tiled" and state.inputs.dims == "M=1024,N=4352,K=8192"
    assert state.spec.name == "H200" and state.blocks == 136 and w.options.cost == "compute"
    run = w.simulate_now()
    assert run.timeline.waves == 2
    w.playback.pick(run.timeline.makespan_us * 0.9)
    frame = w.playback.frame
    assert frame.wave == 2 and frame.running == 4  # the second wave: 4 tiles on 132 SMs
    assert "2 waves, the last holds 4 of 132 tiles" in w.waves_view.caption.text()
    w.waves_view.timeline_button.click()
    QApplication.processEvents()
    assert not w.timeline.visibleRegion().isEmpty()


@pytest.mark.parametrize("kind", ["tiled", "stream_k"])
def test_a_recorded_matmul_schedule_sits_beside_its_simulation(window, kind):
    w = window
    assert w.open_trace(str(ROOT / "tests" / "data" / "matmul_traces" / f"matmul_{kind}_133tiles.json"),
                        wait=True)
    view = w.traces.comparison
    assert any(line.startswith(f"matmul_{kind}: 133 tiles") for line in view.lines)
    assert view.recorded.n_blocks == view.simulated.n_blocks
    assert view.simulated.makespan_us == pytest.approx(view.recorded.makespan_us, rel=0.05)
    assert w.timeline.trace_plot.isVisibleTo(w) and "makespan recorded" in w.timeline.caption.text()


def test_the_throughput_panel_plots_tflops_for_matmuls(mount):
    from tests.models.test_throughput_panel import _matmul, _result

    from kernels.declare.registry import KERNELS

    w = mount("L40S", views=("bandwidth",))
    w.bench.set_kernels(KERNELS)
    w.bench.set_result(_result([_matmul("matmul_tiled", n, t) for n, t in ((2048, 604), (4096, 734))],
                               compute_ceiling_tflops=704.4))
    w.bench.set_ticked(["matmul_tiled"])
    w.bandwidth.sweep.redraws.flush()
    pi = w.bandwidth.sweep.size_plot.getPlotItem()
    assert pi.getAxis("left").labelText == "TFLOP/s" and "TFLOP/s vs size" in pi.titleLabel.text
    legend = [label.text for _, label in pi.legend.items]
    assert "cuBLAS 704 TFLOP/s" in legend and "spec 989 TFLOP/s" in legend
    names = [item.name for item in w.bandwidth.export_items()]
    assert "tflops_vs_size" in names


@pytest.mark.parametrize("size", [(1024, 640), (1600, 1000)])
@pytest.mark.slow
def test_the_waves_panel_fits_the_window(qtbot, window, size):
    w = window
    w.waves_view.open_path(str(RUN))
    w.predict_waves_now()
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.docks["waves"].raise_()
    w.apply_default_dock_sizes()
    for _ in range(3):
        QApplication.processEvents()
    view = w.waves_view
    need, got = view.minimumSizeHint(), view.size()
    assert got.width() >= need.width() and got.height() >= need.height()
    assert view.caption.geometry().top() >= view.plot.geometry().bottom()  # nothing drawn over
    assert np.isfinite(w.waves.series()[0].predicted).all()
