"""Exports write valid files; settings persist; the CLI entry points work and stay cheap."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import sweep_threads

from tests.gui.conftest import wait_sim
from tests.gui.export_checks import check_exports as _check_exports, rows as _rows

ROOT = Path(__file__).resolve().parents[2]


def test_export_all_writes_valid_files(qtbot, win, tmp_path):
    win = win("H200", 1_000_000, 256, regs=40)  # the shared window (building one costs seconds)
    win.show()
    qtbot.waitExposed(win)
    run = wait_sim(qtbot, win)
    win.playback.set_time(run.makespan_us * 0.3)
    out = tmp_path / "export"
    files = win.export_all(out)
    _check_exports(out, files)
    # the CSV holds the plotted points: the threads sweep equals sim's sweep, current launch marked
    rows = _rows(out / "occupancy_vs_threads.csv")
    xs, ys = sweep_threads(preset("H200"), 40, 0)
    assert rows[0] == ["threads_per_block", "active_warps_per_sm", "is_current_launch"]
    assert [(int(r[0]), int(r[1])) for r in rows[1:]] == list(zip(xs.tolist(), ys.tolist()))
    assert [int(r[0]) for r in rows[1:] if r[2] == "1"] == [256]
    # the timeline CSV is the simulated trace, one row per block
    assert len(_rows(out / "timeline.csv")) == 1 + run.timeline.n_blocks
    # the SM view CSV is the residency at the current time
    sm_rows = _rows(out / "sm_view.csv")[1:]
    assert len(sm_rows) == 132 * run.timeline.lanes
    session = json.loads((out / "session.json").read_text())
    assert session["format"] == "warpscope-session/1"
    assert session["inputs"]["regs_per_thread"] == 40
    assert session["device"]["name"] == "H200"
    assert session["occupancy"]["blocks_per_sm"] == win.model.state.occ.blocks_per_sm
    assert session["geometry"]["blocks"] == 3907
    assert session["simulation"]["blocks_simulated"] == 3907
    assert session["simulation"]["tail_fraction"] == round(run.timeline.tail_fraction, 4)
    # the geometry table's CSV holds the rows `explain` prints
    from sim.rules.geometry import geometry_facts

    facts = geometry_facts(preset("H200"), win.model.state.geometry)
    assert _rows(out / "geometry_table.csv")[1:] == [[f.label, f.value, f.how] for f in facts]
    html = (out / "summary.html").read_text()
    assert "data:image/png;base64," in html and "H200" in html
    assert QImage(str(out / "summary.png")).height() > 1000


def test_svg_fallback_when_pyqtgraph_exporter_breaks(qtbot, mount, tmp_path, monkeypatch):
    """pyqtgraph 0.14's SVGExporter raises on Qt >= 6.11; we must still write an SVG."""
    import pyqtgraph.exporters as ex

    def broken(self, *a, **k):
        raise ValueError("not enough values to unpack (expected 2, got 1)")

    monkeypatch.setattr(ex.SVGExporter, "export", broken)
    from gui.export import export_svg

    win = mount("T4", 100_000, 128, views=("occupancy",))  # the view alone
    path = export_svg(win.occupancy_view.threads_plot.getPlotItem(), tmp_path / "t.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert path.stat().st_size > 1000


def test_export_to_unwritable_place_is_a_user_error(qtbot, win, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    win = win("T4")
    with pytest.raises(UserError):
        win.export_all(blocker / "sub")


@pytest.mark.slow
def test_settings_are_remembered(qtbot, make_window):
    win = make_window("T4", 12345, 96, restore=True)
    win.model.update(
        gpu="A100 80GB"
        if "A100 80GB" in [win.controls.gpu.itemText(i) for i in range(win.controls.gpu.count())]
        else "V100",
        elements=777_777,
        threads_per_block=160,
        regs_per_thread=48,
    )
    win.controls.placement.setCurrentIndex(win.controls.placement.findData("tpc-spread"))
    win.playback.set_speed(4.0)
    gpu = win.model.inputs.gpu
    win.close()  # closeEvent saves
    win2 = make_window(restore=True)
    # explicit inputs win over saved ones; a window opened from settings gets the saved launch
    from gui.main_window import MainWindow

    win3 = MainWindow(None, restore=True, load_kernels=False)
    qtbot.addWidget(win3)
    try:
        i = win3.model.inputs
        assert (i.gpu, i.elements, i.threads_per_block, i.regs_per_thread) == (
            gpu,
            777_777,
            160,
            48,
        )
        assert win3.options.placement == "tpc-spread"
        assert win3.playback.speed == 4.0
    finally:
        win3.shutdown()
    assert win2.model.inputs.gpu == "L40S"


def test_settings_file_goes_where_tests_say(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSCOPE_SETTINGS_DIR", str(tmp_path / "s"))
    from gui.settings import open_settings

    s = open_settings()
    s.setValue("x", 1)
    s.sync()
    assert (tmp_path / "s" / "warpscope.ini").exists()


def test_cli_import_is_cheap():
    code = (
        "import sys, gui.cli; "
        "heavy = ('PySide6', 'pyqtgraph', 'torch', 'triton', 'numba'); "
        "bad = [m for m in heavy if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_register_adds_export():
    import argparse

    import gui.cli

    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    gui.cli.register(sub)
    args = p.parse_args(
        [
            "export",
            "--gpu",
            "T4",
            "--elements",
            "2^20",
            "--block",
            "128",
            "--regs",
            "32",
            "--smem",
            "4096",
            "--out",
            "x",
        ]
    )
    assert args.handler is gui.cli._export_handler
    assert (args.gpu, args.elements, args.block, args.regs, args.smem, args.out) == (
        "T4",
        2**20,
        128,
        32,
        4096,
        "x",
    )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(gpu="GTX 9999"), "unknown GPU"),
        (dict(elements=0), "element"),
        (dict(block=0), "threads per block"),
        (dict(block=2000), "block size must be 1..1024"),
        (dict(smem=2**32), "at most 1,048,576 B"),  # used to be an OverflowError traceback
        (dict(regs=2**40), "at most 512"),
    ],
)
def test_headless_export_bad_input_is_one_line(qtbot, tmp_path, kwargs, words):
    from gui.app import run_export

    args = dict(gpu="H200", elements=1000, block=256, regs=None, smem=None, out=str(tmp_path / "o"))
    args.update(kwargs)
    with pytest.raises(UserError) as exc:
        run_export(**args)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_screenshot_in_process(qtbot, tmp_path):
    from gui.app import run_window

    path = tmp_path / "shot.png"
    assert run_window(gpu="T4", elements=1_000_000, block=256, screenshot=str(path)) == 0
    img = QImage(str(path))
    assert (img.width(), img.height()) == (1600, 1000)


def test_screenshot_wants_png(qtbot, tmp_path):
    from gui.app import run_window

    with pytest.raises(UserError):
        run_window(screenshot=str(tmp_path / "shot.jpg"))


def test_export_command_refuses_an_unknown_gpu(tmp_path, capsys):
    """A bad value is status 2 and nothing written. (`main.py export` end to end, in a fresh
    process with a bench results file, is tests/kernels/test_kernels_optional.py's export: one
    whole export in a child costs ~10 s of CI's two cores.)"""
    import main

    out = tmp_path / "cli"
    assert main.main(["export", "--gpu", "nope", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "unknown GPU" in err and not out.exists()


def test_headless_export_with_unreadable_results_is_a_user_error(qtbot, tmp_path):
    from gui.app import run_export

    with pytest.raises(UserError):
        run_export(
            "H200", 1000, 256, None, None, str(tmp_path / "x"), results=str(tmp_path / "no.json")
        )
    assert not (tmp_path / "x").exists()


def test_no_display_is_a_clear_error(monkeypatch):
    from gui.app import run_window

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(UserError) as exc:
        run_window(gpu="T4")
    assert "xvfb-run" in str(exc.value)


@pytest.mark.slow
def test_help_for_every_panel_and_layout_reset(qtbot, make_window):
    from gui import help as help_texts

    win = make_window("T4")
    win.show()
    qtbot.waitExposed(win)
    for key in help_texts.PANELS:
        win.show_help(key)
        assert win._help_box.isVisible()
        assert len(win._help_box.text()) > 200
        win._help_box.close()
    win.docks["occupancy"].toggleViewAction().trigger()
    assert not win.docks["occupancy"].isVisible()
    win.reset_layout()
    assert win.docks["occupancy"].isVisible()
    # every control of the form explains itself
    c = win.controls
    for w in (
        c.gpu,
        c.kernel,
        c.elements,
        c.elements_slider,
        c.threads,
        c.threads_slider,
        c.snap,
        c.regs,
        c.regs_slider,
        c.smem,
        c.smem_slider,
        c.carveout,
        c.cost,
        c.placement,
        win.playback_view.play,
        win.playback_view.speed,
        win.playback_view.scrub,
    ):
        assert w.toolTip(), w


def test_unwritable_screenshot_path_is_one_line_and_leaves_nothing(tmp_path):
    from gui.app import run_window

    with pytest.raises(UserError, match="cannot create"):
        run_window(screenshot="/proc/no-such-dir/shot.png")
    with pytest.raises(UserError, match="threads per block"):  # bad input: no folder is made
        run_window(block=0, screenshot=str(tmp_path / "new" / "shot.png"))
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "saved",
    [{"elements": 0}, {"carveout_percent": 500}, {"threads_per_block": 5000}, {"smem_per_block": -1}],
)
@pytest.mark.slow
def test_damaged_saved_launch_opens_the_defaults(qtbot, saved):
    """A saved launch that is nonsense would leave every later change refused: defaults instead."""
    import json

    from gui.main_window import MainWindow
    from gui.models.launch import LaunchInputs
    from gui.settings import open_settings

    s = open_settings()
    s.setValue("launch/inputs", json.dumps({**LaunchInputs().to_dict(), **saved}))
    s.sync()
    win = MainWindow(None, restore=True, load_kernels=False)
    qtbot.addWidget(win)
    try:
        assert win.model.inputs == LaunchInputs()
        assert win.model.state.ok and win.controls.threads.value() == 256
        assert win.model.update(threads_per_block=512)
    finally:
        win.shutdown()


@pytest.mark.slow
def test_old_saved_simulation_options_still_load(qtbot):
    """Settings saved by earlier versions named the cost model 'memory-bound' and launches with an
    elements_per_thread; both still load."""
    import json

    from gui.main_window import MainWindow
    from gui.settings import open_settings

    s = open_settings()
    s.setValue("sim/cost", "memory-bound")
    s.setValue("sim/placement", "TPC/GPC spread")
    s.setValue("launch/inputs", json.dumps({"gpu": "T4", "kernel": "add_triton", "elements": 4096,
                                            "threads_per_block": 128, "elements_per_thread": 8}))
    s.sync()
    win = MainWindow(None, restore=True, load_kernels=False)
    qtbot.addWidget(win)
    try:
        assert (win.options.cost, win.options.placement) == ("memory", "tpc-spread")
        assert win.controls.cost.currentText() == "memory-bound"
        assert win.model.inputs.block_size == 1024 and win.model.inputs.gpu == "T4"
        win.save_settings()
        assert open_settings().value("sim/cost") == "memory"
    finally:
        win.shutdown()
