"""pytest-qt set-up for the GUI tests: offscreen Qt, settings in a temp dir, strict Qt logging,
a check after every test that no worker thread is left running, and one shared window.

A test that is about one view or a few mounts just them (`mount`: gui.panels.Stage, the same
models and views the window makes, simulated on this thread). Tests about the window itself
share one (`win`, reset to a known launch before each test); tests that load kernels, results
files or settings make their own (`make_window`)."""

from __future__ import annotations

import os
import tempfile

# Before anything imports Qt: no display here, and never the user's settings file.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["WARPSCOPE_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="settings-",
                                                     dir=os.environ["WARPSCOPE_TEST_RUN_CACHE"])

import pytest


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            # Any Qt warning fails the test (pyqtgraph's habit), except the offscreen plugin's
            # note that it cannot propagate size hints to a window manager it does not have.
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore("propagateSizeHints"))


@pytest.fixture(autouse=True)
def _settings_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSCOPE_SETTINGS_DIR", str(tmp_path / "settings"))
    yield


_SHARED: list = []


@pytest.fixture(autouse=True)
def _no_threads_left(qapp):
    yield
    from gui.adapter import live_runners

    shared = {r for w in _SHARED for r in (w.sim_runner, w.trace_runner, w.live_runner,
                                           w.waves_runner, w.file_jobs.runner,
                                           *w.user_kernels.runners())}
    left = [r for r in live_runners() if r not in shared]
    for r in left:  # do not let one failure cascade into every later test
        r.shutdown()
    assert not left, f"worker threads left running: {[r.name for r in left]}"


@pytest.fixture(scope="session", autouse=True)
def _theme(qapp):
    from gui.style import apply_dark_theme

    apply_dark_theme(qapp)
    yield
    for w in _SHARED:
        w.shutdown()
        w.deleteLater()


def _inputs(gpu="L40S", elements=1_000_000, threads=256, regs=0, smem=0):
    from gui.models.launch import LaunchInputs

    return LaunchInputs(gpu=gpu, elements=elements, threads_per_block=threads, regs_per_thread=regs,
                        smem_per_block=smem)


@pytest.fixture
def make_window(qtbot):
    """Factory: a MainWindow of its own for a launch, shut down after the test."""
    from gui.main_window import MainWindow

    made = []

    def make(gpu="L40S", elements=1_000_000, threads=256, regs=0, smem=0, **kw):
        kw.setdefault("restore", False)
        kw.setdefault("load_kernels", False)
        kw.setdefault("sim_delay_ms", 5)
        win = MainWindow(_inputs(gpu, elements, threads, regs, smem), **kw)
        qtbot.addWidget(win)
        win.resize(1400, 900)
        made.append(win)
        return win

    yield make
    for w in made:
        w.shutdown()


@pytest.fixture
def win(qapp):
    """The shared window; call it with a launch to reset it: `w = win("T4", 100_000, 256)`."""
    from gui.main_window import MainWindow

    if not _SHARED:
        _SHARED.append(MainWindow(_inputs(), restore=False, load_kernels=False, sim_delay_ms=5))
    w = _SHARED[0]

    def reset(gpu="L40S", elements=1_000_000, threads=256, regs=0, smem=0):
        w.playback.set_playing(False)
        w.traces.close()
        w.options.set("uniform", "sm-order", "ideal", "spin")  # the textbook, unless a test asks
        w.model.update(**_inputs(gpu, elements, threads, regs, smem).to_dict())
        w.controls.snap.setChecked(True)
        w.resize(1400, 900)
        w.simulate_now()
        return w

    yield reset
    w.hide()


VIEWS = ("controls", "occupancy", "geometry", "sm_view")


@pytest.fixture
def mount(qtbot):
    """Factory: views of one launch without the window, `mount("T4", 100_000, 256)` (the
    launch form, occupancy, geometry and SM view) or `mount(..., views=("latency",))`."""

    made = []

    def make(gpu="L40S", elements=1_000_000, threads=256, regs=0, smem=0, views=VIEWS, show=False):
        from gui.panels import SIMULATED, Stage

        stage = Stage(views, _inputs(gpu, elements, threads, regs, smem))
        stage.options.set("uniform", "sm-order", "ideal", "spin")  # the textbook, as `win`
        if set(views) & SIMULATED:
            stage.simulate_now()
        qtbot.addWidget(stage)
        made.append(stage)  # alive until the test ends, even when only a view is kept
        stage.resize(1200, 800)
        if show:
            stage.show()
            qtbot.waitExposed(stage)
        return stage

    yield make
    made.clear()


def drawn(view):
    """`view` after its waiting redraw (gui.redraw.StagedRedraw): a view out of sight, as the
    shared window's are, draws, and asks its models, only when shown, exported or flushed."""
    view.redraws.flush()
    return view


def wait_sim(qtbot, win, timeout=15000):
    """Wait until the window's simulation matches its current inputs."""
    qtbot.waitUntil(win.simulation.is_current, timeout=timeout)
    return win.simulation.run


def summary_problems(view) -> list[str]:
    """What of a Timeline view's summary or charts is cut, covered or squeezed (empty: whole)."""
    cap, problems = view.caption, []
    fm = cap.head.fontMetrics()
    for label in (cap.head, cap.rest):
        if label.isHidden():
            continue
        lines = label.text().split("\n")
        for line in lines:
            if fm.horizontalAdvance(line) > label.contentsRect().width():
                problems.append(f"cut on the right: {line!r}")
        if len(lines) * fm.lineSpacing() > label.contentsRect().height():
            problems.append(f"{len(lines)} lines in {label.contentsRect().height()} px: {lines[-1]!r}")
        shown = label.visibleRegion().boundingRect()
        if shown != label.rect():  # its parents cut it (the panel too short for it)
            problems.append(f"only {shown.height()} of {label.height()} px seen: {lines[-1]!r}")
    for button in (view.open_trace_button, view.close_trace_button):
        if not button.isHidden() and cap.head.geometry().intersects(button.geometry()):
            problems.append(f"the summary runs under {button.text()!r}")
    charts = [g for g in (view.trace_plot, view.plot, view.ideal_plot) if not g.isHidden()]
    if cap.geometry().bottom() >= charts[0].geometry().top():
        problems.append("the summary covers the chart")
    for gantt in charts:
        if gantt.height() < gantt.minimumHeight():
            problems.append(f"a chart squeezed to {gantt.height()} px (at least {gantt.minimumHeight()})")
        if gantt.geometry().bottom() > view.rect().bottom():
            problems.append(f"a chart's bottom {gantt.geometry().bottom() - view.rect().bottom()} px under the panel's")
    return problems
