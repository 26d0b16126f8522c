"""Exports are slide-ready at every window size: no figure's title, axis, legend or data area
leaves its image, no legend covers a curve, no label spills over a plot. The check
(gui.export_layout.layout_problems) is itself tested on a plot made to fail."""

from __future__ import annotations

import pyqtgraph as pg
import pytest

from gui.export import ExportItem, export_item, render_image
from gui.export_layout import image_problems, lay_out, layout_problems, widget_slide, slide_plot, slide_size
from gui.window_export import lay_out_hidden_dock, launch_caption

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _items_problems(w):
    from gui.redraw import flush_redraws

    for key in ("bandwidth", "latency", "compare"):
        lay_out_hidden_dock(w, key)
    flush_redraws(w)
    caption, found = launch_caption(w), []
    for item in w.export_items():
        if isinstance(item.target, pg.PlotItem):
            with slide_plot(item.target, item, caption):
                found += layout_problems(item.target, item.name)
                found += image_problems(item.target, render_image(item.target.getViewWidget()),
                                        item.name)
        else:
            lay_out(item.target)
            with widget_slide(item.target):
                found += layout_problems(item.target, item.name)
    return found


@pytest.mark.slow  # an export per size
@pytest.mark.parametrize("size", [(1024, 640), (1366, 768), (1920, 1080)])
def test_every_exported_figure_is_whole_at_every_window_size(qtbot, make_window, size):
    from kernels.measure.results import load_results

    w = make_window("H200", 2**24, 256)
    w.bench.set_result(load_results(ROOT / "tests" / "data" / "h200_size_sweep.json"))
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.apply_default_dock_sizes()
    assert _items_problems(w) == []


def test_the_check_fails_on_a_cut_plot_and_a_legend_over_a_curve(qtbot, tmp_path):
    """A caption wider than the plot pushed its data area out of the image (the occupancy
    plots at every size), and a legend inside the data covers a curve: both are reported."""
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(300, 220)
    plot.show()
    pi = plot.getPlotItem()
    pi.plot(list(range(100)), list(range(100)))  # a diagonal through the middle
    legend = pi.addLegend()
    legend.addItem(pi.listDataItems()[0], "a curve")
    legend.anchor((0.5, 0.5), (0.5, 0.5))
    pi.setTitle("x" * 120)  # wider than the view: the layout overflows to the right
    qtbot.wait(50)
    pi.layout.activate()
    found = layout_problems(pi, "bad")
    assert any("leaves the image" in p for p in found)
    assert any("covers a point" in p for p in found)
    # exported as a slide, the same plot is whole (the caption wraps to the slide's width)
    pi.setTitle(None)
    item = ExportItem("bad", pi, ["x"], [])
    with slide_plot(pi, item, "H200 · custom launch · " + "16,777,216 elements × 256 threads " * 3):
        assert plot.size().toTuple() == slide_size(plot)
        assert [p for p in layout_problems(pi, "bad") if "leaves" in p] == []
        # a view whose viewport is narrower than the image it renders into: reported as cut
        cut = render_image(plot)
        from PySide6.QtGui import QPainter

        p = QPainter(cut)
        p.fillRect(cut.width() // 3, 0, cut.width(), cut.height(), cut.pixelColor(1, 1))
        p.end()
        assert image_problems(pi, cut, "bad") and image_problems(pi, render_image(plot), "ok") == []
    export_item(item, tmp_path, "caption")
    assert (tmp_path / "bad.png").stat().st_size > 0

