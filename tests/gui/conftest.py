"""pytest-qt set-up for the GUI tests: offscreen Qt, settings in a temp dir, strict Qt logging,
and a check after every test that no worker thread is left running."""

from __future__ import annotations

import os
import tempfile

# Before anything imports Qt: no display here, and never the user's settings file.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["WARPSCOPE_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="warpscope-settings-")

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


@pytest.fixture(autouse=True)
def _no_threads_left(qapp):
    yield
    from gui.adapter import live_runners

    left = live_runners()
    for r in left:  # do not let one failure cascade into every later test
        r.shutdown()
    assert not left, f"worker threads left running: {[r.name for r in left]}"


@pytest.fixture(scope="session", autouse=True)
def _theme(qapp):
    from gui.style import apply_dark_theme

    apply_dark_theme(qapp)


@pytest.fixture
def make_window(qtbot):
    """Factory: a MainWindow for a launch, shown offscreen, shut down after the test."""
    from gui.main_window import MainWindow
    from gui.model import LaunchInputs

    made = []

    def make(gpu="L40S", elements=1_000_000, threads=256, regs=0, smem=0, **kw):
        kw.setdefault("restore", False)
        kw.setdefault("load_kernels", False)
        kw.setdefault("sim_delay_ms", 5)
        win = MainWindow(
            LaunchInputs(
                gpu=gpu,
                elements=elements,
                threads_per_block=threads,
                regs_per_thread=regs,
                smem_per_block=smem,
            ),
            **kw,
        )
        qtbot.addWidget(win)
        win.resize(1400, 900)
        made.append(win)
        return win

    yield make
    for w in made:
        w.shutdown()


def wait_sim(qtbot, win, timeout=5000):
    """Wait until the window's simulation matches its current inputs."""

    def done():
        assert win.record is not None and win.record.key == win._sim_key()

    qtbot.waitUntil(done, timeout=timeout)
    return win.record
