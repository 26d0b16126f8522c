"""Worker results arrive through signals; cancel works; the live panel without a GPU; results
files open and plot."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from gui.adapter import TaskRunner, live_runners
from gui.main_window import KernelsInfo
from gui.widgets.qt_bandwidth import BandwidthJobs, QtBandwidth, parse_blocks, parse_sizes
from kernels.timing import BenchResult, Measurement


def _m(kernel, n, block, gbps, gpu=True):
    ms = 3 * n * 4 / (gbps * 1e6)
    return Measurement(
        kernel=kernel,
        backend="triton",
        elements=n,
        block_size=block,
        threads_per_block=128,
        num_warps=4,
        median_ms=ms,
        p20_ms=ms * 0.98,
        p80_ms=ms * 1.03,
        reps=50,
        flush_l2=True,
        bytes_moved=3 * n * 4,
        bandwidth_gbps=gbps,
        bandwidth_p20_gbps=gbps * 0.97,
        bandwidth_p80_gbps=gbps * 1.02,
        regs_per_thread=24,
        smem_per_block_bytes=0,
        is_gpu_timing=gpu,
        method="CUDA events, median of 50",
        device="H200",
        grid_blocks=-(-n // block),
        blocks_per_sm=16,
        occupancy=1.0,
        limited_by=("warps",),
        waves=1.5,
    )


def fake_sweep(points_done=None, delay=0.0):
    def sweep(
        names,
        sizes,
        blocks,
        flush_l2=True,
        reps=50,
        on_progress=None,
        should_cancel=None,
        allow_cpu=False,
        command="",
    ):
        pts = [(k, n, b) for k in names for n in sizes for b in (blocks or [1024])]
        out, cancelled = [], False
        for i, (k, n, b) in enumerate(pts):
            if should_cancel and should_cancel():
                cancelled = True
                break
            if on_progress:
                on_progress(i, len(pts), f"{k} n={n}")
            time.sleep(delay)
            out.append(_m(k, n, b, 100.0 + i))
            if points_done is not None:
                points_done.set()
        return BenchResult(
            device={"name": "H200"},
            created="2026-11-29T00:00:00+00:00",
            command=command,
            measurements=tuple(out),
            copy_ceiling_gbps=4200.0,
            peak_dram_gbps=4800.0,
            cancelled=cancelled,
        )

    return sweep


@dataclass(frozen=True)
class _Av:
    ok: bool
    is_gpu: bool
    reason: str

    @property
    def mode(self):
        return "gpu" if self.is_gpu else ("interpreter" if self.ok else "unavailable")


NO_GPU = {
    "triton": _Av(True, False, "no CUDA GPU; TRITON_INTERPRET=1"),
    "numba": _Av(True, False, "no CUDA GPU; NUMBA_ENABLE_CUDASIM=1"),
    "torch": _Av(True, False, "no CUDA GPU: torch runs on the CPU"),
}
GPU = {k: _Av(True, True, "") for k in ("triton", "numba", "torch")}


@pytest.fixture
def runner():
    r = TaskRunner("test")
    yield r
    r.shutdown()


@pytest.fixture
def panel(qtbot, runner):
    jobs = BandwidthJobs(sweep=fake_sweep(delay=0.01))
    p = QtBandwidth(runner, jobs)
    qtbot.addWidget(p)
    from kernels.registry import KERNELS

    p.set_kernels(list(KERNELS))
    return p


def test_runner_result_arrives_on_gui_thread(qtbot, runner):
    seen = {}

    def job(ctx):
        seen["thread"] = threading.current_thread()
        ctx.progress(1, 2, "half")
        return 42

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        with qtbot.waitSignal(runner.progress, timeout=3000) as prog:
            runner.submit(job)
    out = blocker.args[0]
    assert out.ok and out.result == 42 and not out.cancelled
    assert prog.args[1:] == [1, 2, "half"]
    assert seen["thread"] is not threading.main_thread()


def test_runner_cancel_and_errors(qtbot, runner):
    started = threading.Event()

    def forever(ctx):
        started.set()
        while not ctx.cancelled():
            time.sleep(0.005)
        return "stopped"

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(forever)
        assert started.wait(2)
        runner.cancel()
    assert blocker.args[0].cancelled and blocker.args[0].result == "stopped"

    def boom(ctx):
        raise ValueError("bad things\nmore lines")

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(boom)
    out = blocker.args[0]
    assert not out.ok and out.error == "ValueError: bad things"

    def user_error(ctx):
        from sim.errors import UserError

        raise UserError("Triton BLOCK_SIZE must be a power of two up to 131072, got 2000")

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(user_error)
    assert blocker.args[0].error.startswith("Triton BLOCK_SIZE")  # was 'UserError: Triton ...'


def test_runner_latest_request_wins(qtbot, runner):
    gate = threading.Event()
    results = []
    runner.finished.connect(lambda o: results.append(o.result))
    runner.submit(lambda ctx: (gate.wait(2), "first")[1])
    runner.submit(lambda ctx: "second")
    runner.submit(lambda ctx: "third")  # replaces "second" while "first" runs
    gate.set()
    qtbot.waitUntil(lambda: len(results) == 2, timeout=3000)
    assert results == ["first", "third"]


def test_runner_shutdown_stops_thread(runner):
    assert runner in live_runners()
    assert runner.shutdown()
    assert runner not in live_runners()
    with pytest.raises(RuntimeError):
        runner.submit(lambda ctx: None)


def test_no_gpu_panel_says_why_and_refuses_to_time(qtbot, panel):
    panel.set_availability(NO_GPU)
    assert panel.banner.isVisibleTo(panel)
    assert "No GPU" in panel.banner.text() and "interpreter" in panel.banner.text()
    assert "TRITON_INTERPRET" in panel.banner.toolTip()
    with qtbot.waitSignal(panel.status_message) as msg:
        assert panel.start_sweep() is None
    assert "no GPU" in msg.args[0]
    assert panel.check_button.isEnabled()
    assert panel.open_button.isEnabled()


def test_sweep_runs_in_worker_with_progress(qtbot, panel):
    panel.set_availability(GPU)
    assert not panel.banner.isVisibleTo(panel)
    panel.sizes.setText("2^16..2^20")
    panel.blocks.setText("256,1024")
    with qtbot.waitSignal(panel.result_loaded, timeout=5000) as blocker:
        job = panel.start_sweep()
        assert job is not None
        assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    res = blocker.args[0]
    names = panel.selected_kernels()
    assert len(res.measurements) == len(names) * 5 * 2
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    assert panel.progress.format().endswith("done")
    # plotted: one line per kernel, plus points with tooltips naming grid, waves and occupancy
    pi = panel.size_plot.getPlotItem()
    scatters = [i for i in pi.items if i.__class__.__name__ == "ScatterPlotItem"]
    assert len(scatters) == len(names)
    tip = scatters[0].data["data"][0]
    assert "grid" in tip and "waves" in tip and "occupancy" in tip and "limited by" in tip
    # ceiling and peak are drawn
    lines = [i for i in pi.items if i.__class__.__name__ == "InfiniteLine"]
    assert {round(ln.value()) for ln in lines} == {4200, 4800}


def test_sweep_cancel_keeps_what_was_measured(qtbot, runner):
    one = threading.Event()
    p = QtBandwidth(runner, BandwidthJobs(sweep=fake_sweep(points_done=one, delay=0.05)))
    qtbot.addWidget(p)
    from kernels.registry import KERNELS

    p.set_kernels(list(KERNELS))
    p.set_availability(GPU)
    p.sizes.setText("2^10..2^30")
    with qtbot.waitSignal(p.result_loaded, timeout=5000) as blocker:
        p.start_sweep()
        assert one.wait(3)
        p.cancel_button.click()
    res = blocker.args[0]
    assert res.cancelled
    assert 0 < len(res.measurements) < 3 * 21
    assert p.progress.format() == "cancelled"


def test_bad_sweep_form_gets_a_message(qtbot, panel):
    panel.set_availability(GPU)
    panel.sizes.setText("lots")
    with qtbot.waitSignal(panel.status_message) as msg:
        assert panel.start_sweep() is None
    assert "not a number" in msg.args[0]
    for i in range(panel.kernel_list.count()):
        panel.kernel_list.item(i).setCheckState(
            __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.CheckState.Unchecked
        )
    panel.sizes.setText("2^20")
    with qtbot.waitSignal(panel.status_message) as msg:
        assert panel.start_sweep() is None
    assert "tick at least one kernel" in msg.args[0]


def test_parse_sizes_and_blocks():
    assert parse_sizes("2^16..2^20") == [2**k for k in range(16, 21)]
    assert parse_sizes("2^16..2^20 x4") == [2**16, 2**18, 2**20]
    assert parse_sizes("1e6, 1048583") == [1_000_000, 1_048_583]
    with pytest.raises(ValueError):
        parse_sizes("2^40")
    with pytest.raises(ValueError):
        parse_sizes("")
    assert parse_blocks("default") is None
    assert parse_blocks("1024, 256") == [256, 1024]
    with pytest.raises(ValueError):
        parse_blocks("big")


def test_results_file_from_bench_opens(qtbot, panel, tmp_path):
    """A file written by kernels.results (what `python main.py bench` writes) plots here."""
    from kernels.results import save_results

    res = fake_sweep()(["add_triton", "add_torch"], [2**20, 2**24], [1024, 4096])
    path = tmp_path / "bench.json"
    save_results(res, path)
    with qtbot.waitSignal(panel.result_loaded, timeout=5000) as blocker:
        panel.open_results(str(path))
    got = blocker.args[0]
    assert len(got.measurements) == 8
    assert "8 measurements" in panel.log.toPlainText()
    items = {i.name: i for i in panel.export_items()}
    # each plot's CSV is what it draws: the best block per size (vs size), the largest size
    # (vs block)
    size_rows = items["bandwidth_vs_size"].rows
    assert sorted((r[0], r[2]) for r in size_rows) == sorted(
        (k, n) for k in ("add_triton", "add_torch") for n in (2**20, 2**24)
    )
    for r in size_rows:
        same = [m for m in got.measurements if m.kernel == r[0] and m.elements == r[2]]
        assert r[7] == max(m.bandwidth_gbps for m in same)
    assert {r[2] for r in items["bandwidth_vs_block"].rows} == {2**24}
    assert len(items["bandwidth_vs_block"].rows) == 4


def test_results_file_that_is_broken(qtbot, panel, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with qtbot.waitSignal(panel.status_message, timeout=5000) as msg:
        panel.open_results(str(bad))
    assert "load failed" in msg.args[0]
    assert panel.open_button.isEnabled()


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

    p = QtBandwidth(runner, BandwidthJobs(run_checks=run_checks))
    qtbot.addWidget(p)
    with qtbot.waitSignal(runner.finished, timeout=5000):
        p.start_checks()
        qtbot.waitUntil(lambda: p.progress.value() >= 2, timeout=3000)
        p.cancel()
    assert 0 < len(p.checks) < 200
    assert "(cancelled)" in p.log.toPlainText()


def test_experiments_without_gpu_show_what_they_can(qtbot, runner):
    from kernels.experiments import HostStep, HostSteps, LaunchVsFinish

    def count():
        from sim.errors import UserError

        raise UserError("counting GPU kernels needs a GPU: no CUDA GPU")

    lvf = LaunchVsFinish("add_torch", 4099, 30.0, 31.0, 5, False, "host clock")
    steps = HostSteps(
        4099,
        256,
        tuple(
            HostStep(n, i * 1.0, 1.0, n == "launch")
            for i, n in enumerate(("allocate", "copy in", "launch", "copy out", "free"))
        ),
        5.0,
        True,
        False,
        "host clock",
    )
    p = QtBandwidth(
        runner,
        BandwidthJobs(
            count_kernels=count, launch_vs_finish=lambda: lvf, square_host_steps=lambda: steps
        ),
    )
    qtbot.addWidget(p)
    with qtbot.waitSignal(runner.finished, timeout=5000):
        p.start_experiments()
    assert "needs a GPU" in p.exp_note.text()
    names = [i.name for i in p.export_items()]
    assert names == ["launch_vs_finish", "square_host_steps"]
    assert "NOT a GPU timing" in p.launch_plot.getPlotItem().titleLabel.text


def test_window_applies_kernels_info(qtbot, make_window):
    from kernels.registry import KERNELS

    win = make_window("H200", 1_000_000, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, tuple(KERNELS), None, "no CUDA GPU"))
    assert "interpreter" in win.kernels_label.text()
    assert win.bandwidth.banner.isVisibleTo(win.bandwidth)
    names = [win.controls.kernel.itemData(i) for i in range(win.controls.kernel.count())]
    assert names[0] == "custom" and "add_triton" in names and "trace_triton" not in names
    idx = win.controls.kernel.findData("add_triton")
    win.controls.kernel.setCurrentIndex(idx)
    inp = win.model.inputs
    spec = next(k for k in KERNELS if k.name == "add_triton")
    assert inp.threads_per_block == 32 * spec.default_num_warps
    assert inp.elements_per_thread * inp.threads_per_block == spec.default_block
    assert win.geometry_view.value("blocks") == f"{-(-1_000_000 // spec.default_block):,}"
    idx = win.controls.kernel.findData("add_numba_naive")
    win.controls.kernel.setCurrentIndex(idx)
    assert win.model.inputs.threads_per_block == 256 and win.model.inputs.elements_per_thread == 1


def test_window_survives_kernels_failing_to_load(qtbot, make_window):
    win = make_window("H200")
    win.apply_kernels_info(KernelsInfo(None, (), None, "", "ImportError: no torch"))
    assert "unavailable" in win.kernels_label.text()
    assert "no torch" in win.bandwidth.banner.text()


def test_measured_resources_feed_the_launch(qtbot, make_window):
    """Bench results carry each compiled kernel's registers and shared memory; selecting that
    kernel uses them, so occupancy is the real kernel's."""
    from kernels.registry import KERNELS

    win = make_window("H200", 1_000_000, 256)
    win.apply_kernels_info(KernelsInfo(GPU, tuple(KERNELS), None, ""))
    res = fake_sweep()(["add_triton"], [2**20], [4096])  # regs_per_thread=24 in the fake
    win.bandwidth.show_result(res)
    idx = win.controls.kernel.findData("add_triton")
    win.controls.kernel.setCurrentIndex(idx)
    assert win.model.inputs.regs_per_thread == 24
    assert "Compiled: 24 registers" in win.controls.kernel_note.text()


def test_detected_device_is_listed_first_and_chosen(qtbot, make_window):
    """On a GPU machine the detected device heads the list and, with nothing saved, is shown."""
    from dataclasses import replace

    from kernels.registry import KERNELS
    from sim.devices import preset

    win = make_window("H200")
    win.prefer_detected = True
    dev = replace(preset("H200"), name="NVIDIA H200", sm_count=132, detected=True)
    win.apply_kernels_info(KernelsInfo(GPU, tuple(KERNELS), dev, ""))
    assert win.controls.gpu.itemText(0) == "NVIDIA H200"
    assert win.model.inputs.gpu == "NVIDIA H200"
    assert win.model.state.spec.detected
    assert "detected" in win.controls.gpu_note.text()


def test_ticked_kernels_choose_the_curves(qtbot, panel):
    from PySide6.QtCore import Qt

    res = fake_sweep()(
        ["add_triton", "add_torch", "copy_torch", "add_numba"], [2**20, 2**24], [256]
    )
    panel.show_result(res)
    assert panel.shown_kernels() == ["add_triton", "add_torch", "copy_torch"]  # the ticked ones
    for i in range(panel.kernel_list.count()):
        it = panel.kernel_list.item(i)
        if it.data(Qt.ItemDataRole.UserRole) == "add_numba":
            it.setCheckState(Qt.CheckState.Checked)
    assert "add_numba" in panel.shown_kernels()
    pi = panel.size_plot.getPlotItem()
    assert len([i for i in pi.items if i.__class__.__name__ == "ScatterPlotItem"]) == 4


def test_gpu_results_change_the_no_gpu_banner(qtbot, panel):
    panel.set_availability(NO_GPU)
    panel.show_result(fake_sweep()(["add_triton"], [2**20], [1024]))
    assert "are</b> GPU timings" in panel.banner.text() and "H200" in panel.banner.text()


def test_measured_points_come_with_the_simulators_prediction(qtbot, panel):
    """The H200 block-size sweep: every Numba/Triton point gets a dashed predicted curve and a
    predicted_gbps column; torch peers (their grid is torch's choice) get none."""
    from pathlib import Path

    from kernels.results import load_results

    path = Path(__file__).parents[2] / "benchmarks" / "gpu_blocks_h200.json"
    panel.show_result(load_results(path))
    rows = {i.name: i for i in panel.export_items()}["bandwidth_vs_block"].rows
    header = {i.name: i for i in panel.export_items()}["bandwidth_vs_block"].header
    k, measured, predicted = header.index("kernel"), header.index("bandwidth_gbps"), header.index("predicted_gbps")
    ours = [r for r in rows if not r[k].endswith("torch")]
    assert ours and all(0.75 < r[predicted] / r[measured] < 1.3 for r in ours)
    assert all(r[predicted] is None for r in rows if r[k].endswith("torch"))
    legend = [label.text for _, label in panel.block_plot.getPlotItem().legend.items]
    assert "dashed: simulator's prediction" in legend


def test_only_gpu_timings_get_a_prediction(qtbot, panel):
    import dataclasses

    res = fake_sweep()(["add_triton"], [2**20], [1024])  # device named "H200" only: the preset
    panel.show_result(res)
    assert all(panel.predicted(m) is not None for m in res.measurements)
    cpu = dataclasses.replace(res, measurements=tuple(
        dataclasses.replace(m, is_gpu_timing=False) for m in res.measurements))
    panel.show_result(cpu)
    assert all(panel.predicted(m) is None for m in cpu.measurements)
