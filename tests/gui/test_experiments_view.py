"""The Experiments tab draws whole plots side by side: the variant names of eager vs fused add+ReLU
stand one per row on the left axis (under the bars they ran together: "torch_compiletriton"),
and no plot is laid under its neighbour, however narrow the panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from gui.models.bench import BenchModel
from gui.widgets.qt_experiments import QtExperiments, variant_label
from kernels.measure.experiments import HostStep, HostSteps, KernelCount, LaunchVsFinish


class _Jobs:
    def start_experiments(self):
        return 0


def _records():
    kc = [KernelCount(f"add_relu_{v}", 1_000_000, n, tuple((f"k{i}", 6.0) for i in range(n)), 6.0 * n, t)
          for v, n, t in (("torch_eager", 2, 5), ("torch_compile", 1, 3), ("triton", 1, 3), ("numba", 1, 3))]
    lv = LaunchVsFinish("add_torch", 50_000_000, 12.0, 160.0, 5, True, "host clock")
    hs = HostSteps(1 << 24, 256, tuple(HostStep(n, 2.0 * i, 2.0, n == "launch") for i, n in
                                      enumerate(("allocate", "copy in", "launch", "copy out", "free"))),
                   10.0, True, True, "host clock")
    return {"count_kernels": kc, "launch_vs_finish": lv, "square_host_steps": hs}


def _drawn(qtbot, width, height, scrolled=False):
    """The Experiments view shown at `width` x `height` (in its tab's scroll area, or alone)
    with the records drawn; returns the view and what was shown."""
    from gui.widgets.qt_bandwidth import _scrolled

    bench = BenchModel()
    view = QtExperiments(bench, _Jobs())
    shown = _scrolled(view) if scrolled else view
    qtbot.addWidget(shown)
    shown.resize(width, height)
    shown.show()
    qtbot.waitExposed(shown)
    bench.set_experiments(_records())
    qtbot.wait(50)
    return view, shown


@pytest.mark.parametrize("width", [700, 1100])
def test_plots_stay_whole_and_apart(qtbot, width):
    view, _ = _drawn(qtbot, width, 340)
    plots = (view.fused_plot, view.launch_plot, view.steps_plot)
    for plot in plots:  # the scene's content fits its widget: nothing drawn under a neighbour
        need = plot.getPlotItem().effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
        assert need <= plot.width() + 1, (plot, need, plot.width())
    spans = [(p.geometry().left(), p.geometry().right()) for p in plots]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    axis = view.fused_plot.getPlotItem().getAxis("left")
    labels = [text for _, text in axis._tickLevels[0]]
    assert [ln.split(" · ")[0] for ln in labels] == ["torch eager", "torch.compile", "Triton", "Numba"]
    assert labels[0].startswith("torch eager · 12 µs\n")
    assert labels[0].endswith("2 kernels · 5 trips") and labels[1].endswith("1 kernel · 3 trips")
    metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
    widest = max(metrics.boundingRect(0, 0, 1000, 1000, 0, t).width() for t in labels)
    assert widest < axis.width()


def test_variant_labels():
    assert variant_label("add_relu_torch_compile") == "torch.compile"
    assert variant_label("add_relu_some_new_one") == "some new one"


@pytest.mark.parametrize("width, stacked", [(434, True), (1100, False)])
def test_a_narrow_tab_stacks_the_plots_instead_of_cutting_them(qtbot, width, stacked):
    """At 1024 x 640 the three plots needed 466 px of a 410 px tab that cannot scroll sideways:
    the last titles were cut ("Launch returne", "Square: fi")."""
    view, area = _drawn(qtbot, width, 250, scrolled=True)
    area.resize(width, 251)  # as the dock is laid out again
    qtbot.wait(50)
    assert view.minimumSizeHint().width() <= area.viewport().width()
    plots = (view.fused_plot, view.launch_plot, view.steps_plot)
    tops = [p.geometry().top() for p in plots]
    assert (len(set(tops)) == 3) if stacked else (len(set(tops)) == 1)
    for plot in plots:
        assert plot.geometry().right() < area.viewport().width()
