"""Every view opens alone (gui.panels.Stage, what `python -m gui.widgets.qt_<view>` shows) for a
default launch, drawing the launch its models hold."""

from __future__ import annotations

import importlib
import inspect

import pytest

from gui.panels import PANELS


@pytest.mark.parametrize("key", sorted(PANELS))
def test_each_view_opens_alone_with_a_launch(mount, key):
    w = mount("H200", 2**20, 256, views=(key,))
    view = w.views[key]
    assert getattr(w, PANELS[key][1]) is view
    assert not view.grab().isNull()
    if key in ("sm_view", "playback", "timeline", "verdicts"):
        assert w.simulation.is_current()  # drawn from a run of this launch, made in the stage
    if key == "waves":
        assert w.waves.is_current() and w.waves.run.gpu.name == "H200"  # the launch's GPU, here


def test_every_view_module_opens_its_view_when_run():
    for key, (factory, _) in PANELS.items():
        module = importlib.import_module(inspect.getsource(factory).split("from ")[1].split(" import")[0])
        assert f'open_alone("{key}")' in inspect.getsource(module), module.__name__


def test_a_stage_follows_its_launch_once_per_burst(qtbot, mount):
    w = mount("T4", 100_000, 256, views=("sm_view",))
    runs = []
    w.simulation.changed.connect(lambda run, _m: runs.append(run))
    for t in (64, 128, 192, 256, 320):  # a slider dragged
        w.model.update(threads_per_block=t)
    qtbot.waitUntil(w.simulation.is_current, timeout=5000)
    assert len(runs) == 1 and runs[0].occ.threads_per_block == 320


def test_the_kernel_source_alone_follows_the_launchs_kernel_and_says_a_failed_file(mount):
    from kernels.declare.registry import KERNELS

    w = mount("H200", views=("source",))
    view = w.source_view
    assert view.title.text() == ""  # a custom launch: no source to show
    w.model.set_kernels(tuple(KERNELS))
    assert w.model.update(kernel="add_triton")
    assert view.title.text() == "triton_kernels.py — add_fast_kernel (built-in)"
    marked = view.code.toPlainText().splitlines()[view.code.marked_line() - 1]
    assert marked.startswith("def add_fast_kernel(")  # the view opens at the kernel
    w.models.kernel_files.failed.emit("/tmp/broken.py", "broken.py, line 3: invalid syntax")
    assert view.banner.isVisibleTo(view) and "invalid syntax" in view.banner.text()
