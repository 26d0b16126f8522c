"""The live panel: jobs run in the worker and report to the bench model; the views draw what it
holds; without a GPU the banner says why and matches the curves; results files open and plot."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt

from gui.adapter import TaskRunner
from gui.jobs import BandwidthJobs, BenchJobs
from gui.models.bench import BenchModel
from gui.widgets.qt_bandwidth import QtBandwidth
from tests.models.fakes import GPU, NO_GPU, fake_sweep


@pytest.fixture
def runner():
    r = TaskRunner("test")
    yield r
    r.shutdown()


def _panel(qtbot, runner, **jobs):
    from kernels.declare.registry import KERNELS

    bench = BenchModel()
    panel = QtBandwidth(bench, BenchJobs(bench, runner, BandwidthJobs(**jobs)))
    qtbot.addWidget(panel)
    bench.set_kernels(KERNELS)
    return panel


@pytest.fixture
def panel(qtbot, runner):
    return _panel(qtbot, runner, sweep=fake_sweep(delay=0.01))


def _items(pi, name):
    return [i for i in pi.items if i.__class__.__name__ == name]


def test_no_gpu_panel_says_why_and_refuses_to_time(panel):
    bench = panel.bench
    bench.set_availability(NO_GPU)
    assert panel.banner.isVisibleTo(panel)
    assert "No GPU" in panel.banner.text() and "not a GPU timing" in panel.banner.text()
    assert "TRITON_INTERPRET" in panel.banner.toolTip() and "interpreter" in panel.banner.toolTip()
    said = []
    bench.message.connect(said.append)
    assert panel.sweep.start_sweep() is None
    assert "no GPU" in said[-1]
    assert panel.check_button.isEnabled() and panel.sweep.open_button.isEnabled()


def test_sweep_runs_in_worker_with_progress(qtbot, panel):
    bench, sweep = panel.bench, panel.sweep
    bench.set_availability(GPU)
    assert not panel.banner.isVisibleTo(panel)
    sweep.sizes.setText("2^16..2^20")
    sweep.blocks.setText("256,1024")
    done = threading.Event()
    bench.result_changed.connect(lambda r: done.set())
    assert sweep.start_sweep() is not None
    assert sweep.cancel_button.isEnabled() and not sweep.run_button.isEnabled()
    qtbot.waitUntil(done.is_set, timeout=5000)
    assert len(bench.result.measurements) == len(bench.ticked) * 5 * 2
    assert sweep.run_button.isEnabled() and not sweep.cancel_button.isEnabled()
    assert sweep.progress.format() == "done"
    sweep.redraws.flush()  # the plots redraw in steps after the result (gui.redraw.StagedRedraw)
    # one curve per kernel, drawn by draw_series: points with tooltips naming grid, waves, occupancy
    pi = sweep.size_plot.getPlotItem()
    scatters = _items(pi, "ScatterPlotItem")
    assert len(scatters) == len(bench.ticked)
    tip = scatters[0].data["data"][0]
    assert "grid" in tip and "waves" in tip and "occupancy" in tip and "limited by" in tip
    assert {round(ln.value()) for ln in _items(pi, "InfiniteLine")} == {4200, 4800}


@pytest.mark.slow
def test_legend_sits_beside_the_curves(qtbot, panel):
    """Legends and labels covered the curves at the default size: the legend is a column of its
    own right of the data, never over it."""
    panel.bench.set_result(fake_sweep()(["add_triton", "add_torch", "copy_torch"], [2**16, 2**24], [1024]))
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: not panel.sweep.redraws.pending())  # drawn once shown, in steps
    for plot in (panel.sweep.size_plot, panel.sweep.block_plot):
        pi = plot.getPlotItem()
        labels = [label.text for _, label in pi.legend.items]
        assert labels[0] == "add_triton" and any(t.startswith("copy ") for t in labels)
        assert "simulated (dashed)" in labels
        vb = pi.vb.sceneBoundingRect()
        assert pi.legend.sceneBoundingRect().left() >= vb.right() - 1 and vb.height() > 100


def test_sweep_cancel_keeps_what_was_measured(qtbot, runner):
    one = threading.Event()
    p = _panel(qtbot, runner, sweep=fake_sweep(points_done=one, delay=0.05))
    p.bench.set_availability(GPU)
    p.sweep.sizes.setText("2^10..2^30")
    with qtbot.waitSignal(runner.finished, timeout=5000):
        p.sweep.start_sweep()
        assert one.wait(3)
        p.sweep.cancel_button.click()
    res = p.bench.result
    assert res.cancelled and 0 < len(res.measurements) < 3 * 21
    assert p.sweep.progress.format() == "cancelled"


def test_bad_sweep_form_gets_a_message(panel):
    bench, sweep = panel.bench, panel.sweep
    bench.set_availability(GPU)
    said = []
    bench.message.connect(said.append)
    sweep.sizes.setText("lots")
    assert sweep.start_sweep() is None and "not a number" in said[-1]
    for i in range(sweep.kernel_list.count()):
        sweep.kernel_list.item(i).setCheckState(Qt.CheckState.Unchecked)
    sweep.sizes.setText("2^20")
    assert sweep.start_sweep() is None and "tick at least one kernel" in said[-1]
    assert sweep.kernels_button.text() == "Kernels (0) ▾"


def test_results_file_from_bench_opens(qtbot, panel, tmp_path):
    """A file written by kernels.measure.results (what `python main.py bench` writes) plots here, and each
    plot's CSV is what it draws."""
    from kernels.measure.results import save_results

    res = fake_sweep()(["add_triton", "add_torch"], [2**20, 2**24], [1024, 4096])
    path = tmp_path / "bench.json"
    save_results(res, path)
    with qtbot.waitSignal(panel.sweep.jobs.runner.finished, timeout=5000):
        panel.sweep.jobs.open_results(str(path))
    assert len(panel.bench.result.measurements) == 8
    assert "8 measurements" in panel.log.toPlainText()
    items = {i.name: i for i in panel.export_items()}
    assert sorted((r[0], r[2]) for r in items["bandwidth_vs_size"].rows) == sorted(
        (k, n) for k in ("add_triton", "add_torch") for n in (2**20, 2**24))
    assert {r[2] for r in items["bandwidth_vs_block"].rows} == {2**24}
    assert len(items["bandwidth_vs_block"].rows) == 4


def test_results_file_that_is_broken(qtbot, panel, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    said = []
    panel.bench.message.connect(said.append)
    with qtbot.waitSignal(panel.sweep.jobs.runner.finished, timeout=5000):
        panel.sweep.jobs.open_results(str(bad))
    assert "load failed" in said[-1] and panel.sweep.open_button.isEnabled()


def test_correctness_run_reports_and_cancels(qtbot, runner):
    @dataclass(frozen=True)
    class R:
        kernel: str
        backend: str
        elements: int
        status: str
        where: str
        detail: str = ""
        max_abs_err: float | None = 0.0

    def run_checks(names, sizes, on_result=None):
        out = []
        for i in range(200):
            r = R(f"k{i}", "triton", 128, "OK", "interpreter")
            out.append(r)
            on_result(r)
            time.sleep(0.01)
        return out

    p = _panel(qtbot, runner, run_checks=run_checks)
    with qtbot.waitSignal(runner.finished, timeout=5000):
        p.check_button.click()
        assert p.tabs.currentWidget() is p.log_tab and not p.check_button.isEnabled()
        qtbot.waitUntil(lambda: p.sweep.progress.value() >= 2, timeout=3000)
        p.sweep.cancel_button.click()
    assert 0 < len(p.bench.checks) < 200
    assert "(cancelled)" in p.log.toPlainText()


def test_experiments_without_gpu_show_what_they_can(qtbot, runner):
    from kernels.measure.experiments import HostStep, HostSteps, LaunchVsFinish

    def count():
        from sim.inputs.errors import UserError

        raise UserError("counting GPU kernels needs a GPU: no CUDA GPU")

    lvf = LaunchVsFinish("add_torch", 4099, 30.0, 31.0, 5, False, "host clock")
    steps = HostSteps(4099, 256, tuple(HostStep(n, i * 1.0, 1.0, n == "launch") for i, n in
                                       enumerate(("allocate", "copy in", "launch", "copy out", "free"))),
                      5.0, True, False, "host clock")
    p = _panel(qtbot, runner, count_kernels=count, launch_vs_finish=lambda: lvf,
               square_host_steps=lambda: steps)
    with qtbot.waitSignal(runner.finished, timeout=5000):
        p.experiments.run_button.click()
    assert "needs a GPU" in p.experiments.note.text()
    assert [i.name for i in p.export_items()] == ["launch_vs_finish", "square_host_steps"]
    assert "NOT a GPU timing" in p.experiments.launch_plot.getPlotItem().titleLabel.text


@pytest.mark.slow
def test_ticked_kernels_choose_the_curves(panel):
    panel.bench.set_result(fake_sweep()(["add_triton", "add_torch", "copy_torch", "add_numba"],
                                        [2**20, 2**24], [256]))
    assert panel.bench.shown_kernels() == ["add_triton", "add_torch", "copy_torch"]
    lst = panel.sweep.kernel_list
    for i in range(lst.count()):
        if lst.item(i).data(Qt.ItemDataRole.UserRole) == "add_numba":
            lst.item(i).setCheckState(Qt.CheckState.Checked)
    assert "add_numba" in panel.bench.shown_kernels()
    panel.sweep.redraws.flush()
    assert len(_items(panel.sweep.size_plot.getPlotItem(), "ScatterPlotItem")) == 4


def test_banner_and_titles_follow_the_curves(panel):
    """After a CPU-path sweep the banner still said the curves were GPU timings."""
    bench = panel.bench
    bench.set_availability(NO_GPU)
    bench.set_result(fake_sweep()(["add_triton"], [2**20], [1024]))
    assert "are</b> GPU timings" in panel.banner.text() and "H200" in panel.banner.text()
    panel.sweep.redraws.flush()
    assert "NOT GPU" not in panel.sweep.size_plot.getPlotItem().titleLabel.text
    bench.set_result(fake_sweep(gpu=False)(["add_triton"], [2**20], [1024]))
    assert "NOT GPU timings" in panel.banner.text() and "are</b> GPU timings" not in panel.banner.text()
    panel.sweep.redraws.flush()
    assert "NOT GPU timings" in panel.sweep.size_plot.getPlotItem().titleLabel.text


@pytest.mark.slow
def test_h200_block_sweep_draws_the_prediction(panel):
    from pathlib import Path

    from kernels.measure.results import load_results

    panel.bench.set_result(load_results(Path(__file__).parents[2] / "tests" / "data" / "h200_block_size_sweep.json"))
    panel.sweep.redraws.flush()
    legend = [label.text for _, label in panel.sweep.block_plot.getPlotItem().legend.items]
    assert "simulated (dashed)" in legend
