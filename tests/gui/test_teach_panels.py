"""The teaching panels in the window: verdicts, latency hiding, two GPUs, timing methods, the
theme and the light export."""

from __future__ import annotations

import json

import pytest

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from gui import style
from gui.teach_panels import set_theme
from sim.inputs.units import fmt_us
from tests.gui.conftest import drawn, wait_sim


def _raise(w, key):
    w.docks[key].show()
    w.docks[key].raise_()
    for _ in range(3):
        QApplication.processEvents()


def test_verdicts_for_a_grid_below_one_wave_and_a_register_limit(mount):
    text = drawn(mount("B200", 40 * 256, 256, views=("verdicts",)).verdicts_view).list.toPlainText()
    assert "Grid below one wave: 40 blocks fill 3% of the GPU" in text
    assert "theoretical" in text and "Whole launch, predicted" in text
    text = drawn(mount("T4", 2**24, 256, regs=72, views=("verdicts",)).verdicts_view).list.toPlainText()
    assert "Occupancy limited by registers: 3 blocks/SM (75% theoretical)" in text
    assert "Grid below one wave" not in text


def test_the_whole_launch_time_is_shown_when_waves_are_skipped(mount):
    w = mount("H200", 2**31, 256, views=("timeline", "verdicts"))
    run = w.simulation.run
    tl = run.timeline
    assert tl.skipped_waves > 7000
    whole = fmt_us(run.prediction.whole_launch_us)  # the launch model's, overhead included
    assert f"whole launch {whole}" in w.timeline.caption.text()
    assert f"takes {whole} over {tl.waves + tl.skipped_waves:,} waves" in \
        drawn(w.verdicts_view).list.toPlainText()
    assert run.prediction.whole_launch_us == pytest.approx(
        tl.whole_grid_us + run.prediction.launch_overhead_us, rel=0.01)
    assert tl.whole_grid_us > 50 * tl.makespan_us


@pytest.mark.slow
def test_latency_view_draws_the_h200_sweep_and_an_empty_sm(mount, qtbot):
    w = mount("H200", 2**26, 256, views=("latency",), show=True)
    view = w.latency_view
    assert view.isVisible()  # drawn when seen, in steps
    qtbot.waitUntil(lambda: not view.redraws.pending())
    assert "measured (H200, 2^26)" in view.legend.text()
    assert not view.lanes.grab().isNull()
    w.model.update(gpu="B200", elements=40 * 256)
    view.sm.setValue(100)  # past the grid's 40 blocks
    assert w.models.insight.activity() is None and not view.lanes.grab().isNull()
    view.sm.setValue(0)


def test_second_gpu_names_what_differs(mount):
    w = mount("H200", 2**24, 256, regs=32, views=("compare",))
    view = drawn(w.compare_view)
    view.other.setCurrentText("T4")
    drawn(view)
    assert w.models.compare.other == "T4"
    assert "The T4 is warp-limited at 4 blocks/SM" in view.diff.text()
    assert view.sides[1].title.text().startswith("<b>T4</b>")


def test_timing_toggles_and_a_live_run(mount, qtbot):
    from gui.adapter import TaskRunner
    from gui.models.timing import TimingModel
    from gui.widgets.qt_timing_methods import QtTimingMethods
    from sim.traces.latency_data import load_latency_run

    alone = mount("H200", 2**20, 256, views=("timing",), show=True).timing_view  # the checked-in run
    assert alone.isVisible() and "device events, L2 flushed" in alone.notes.text()

    records = load_latency_run().methods[:6]  # add_triton at 2^16, every method
    runner = TaskRunner("timing test")
    model = TimingModel()
    view = QtTimingMethods(model, runner, task_factory=lambda: (
        lambda ctx: (records, ["add_torch: not here"])))
    qtbot.addWidget(view)
    view.show()
    view.load_file()
    view.toggles["l2"].setChecked(True)
    assert "device events, not flushed" in view.notes.text()
    assert [s.method for s in model.series()] == ["events_flushed", "events_no_flush"]
    with qtbot.waitSignal(runner.finished, timeout=5000):
        view.start_live()
    assert model.source.startswith("a live run on this machine (skipped: add_torch")
    assert view.run_button.isEnabled()
    runner.shutdown()


@pytest.mark.slow
def test_light_theme_and_its_export_with_verdicts_titles_and_no_controls(make_window, qtbot,
                                                                          tmp_path):
    w = make_window("T4", 2**24, 256, regs=72)
    w.show()
    qtbot.waitExposed(w)
    wait_sim(qtbot, w)
    plot = w.teach.latency_view.blocks_plot
    try:
        set_theme(w, "light")  # the window itself: recoloured, remembered, ticked in the menu
        assert style.current_theme() == "light" and style.PLOT_BG == "#ffffff"
        assert plot.backgroundBrush().color().name() == "#ffffff"
        assert w.settings.value("view/theme") == "light"
        assert w.teach.theme_actions["light"].isChecked()
        files = {f.name for f in w.export_all(tmp_path)}  # exports: light by default
    finally:
        set_theme(w, "dark")
    assert plot.backgroundBrush().color().name() == style.THEMES["dark"]["PLOT_BG"]
    assert {"verdicts.png", "latency_plots.png", "two_gpus.png", "timing_methods.csv"} <= files
    shot = QImage(str(tmp_path / "residency.png"))
    assert shot.pixelColor(4, shot.height() // 2).lightness() > 230  # light background
    assert shot.height() >= 2 * 260  # a strip drawn tall enough for a slide (2x scale)
    session = json.loads((tmp_path / "session.json").read_text())
    assert session["verdicts"][0]["key"] == "registers"
    assert session["second_gpu"]["gpu"] == "H200"
    html = (tmp_path / "summary.html").read_text()
    assert "Verdicts, biggest waste first" in html and "Occupancy limited by registers" in html


@pytest.mark.slow
def test_the_bandwidth_panel_raises_its_own_tabs_beside_the_inserted_timing_tab(make_window):
    """The Timing methods tab is inserted at index 1; finished experiments and a correctness run
    must still raise their own tabs (they raised Timing methods and Experiments by index)."""
    w = make_window("H200")
    tabs = w.bandwidth.tabs
    assert tabs.tabText(1) == "Timing methods"
    w.bench.begin("check")
    assert tabs.tabText(tabs.currentIndex()) == "Checks and log"
    w.bench.set_experiments({})
    assert tabs.tabText(tabs.currentIndex()) == "Experiments"
