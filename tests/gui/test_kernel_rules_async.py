"""A kernel file's grid rule runs in the file's process, and the window never waits for it on the
GUI thread: while the rule works, the event loop keeps turning and the panels say "grid: asking
FILE…" (never a grid from the launch before); the answer then shows; a newer launch replaces the
one being asked; a rule that loops is one line, and the window keeps the launch it had."""

from __future__ import annotations

import time
from functools import partial

import pytest
from PySide6.QtCore import QTimer

from gui.jobs import KernelJobs
from kernels.declare.declarations import Limits
from tests import compile_fakes as fake
from tests.hostile.test_kernel_files import KERNEL
from tests.patience import HANG_MS

SLEEP_S = 1.5
# a rule called on the GUI thread stands the event loop still for the whole sleep; half of it
# leaves room for a loaded machine's pauses (a quiet one shows gaps of about 0.02 s)
MAX_GAP_S = SLEEP_S / 2
SLOW = (KERNEL + "import time\n\nWARPSCOPE = dict(GOOD, grid=lambda n, BLOCK_SIZE: "
        f"time.sleep({SLEEP_S}) or -(-n // BLOCK_SIZE))\n")
LOOPS_PAST_2M = (KERNEL + "WARPSCOPE = dict(GOOD, grid=lambda n, BLOCK_SIZE: -(-n // BLOCK_SIZE) "
                 "if n < 2**21 else [i for i in iter(int, 1)])\n")


@pytest.fixture
def opened(make_window, qtbot, tmp_path, monkeypatch):
    """A window with `text` opened as a kernel file (its kernel selected, its rule being asked);
    compiles are faked (not the question here)."""
    def open_(text: str, name: str, **limits):
        monkeypatch.setattr(Limits, "from_env", classmethod(lambda cls: Limits(**limits)))
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        win = make_window("H100 SXM", 1_000_000, 256)
        win.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 30, 0),
                                                        compile_many=fake.no_sweep)
        with qtbot.waitSignal(win.user_kernels.files.opened, timeout=HANG_MS):
            win.user_kernels.open(str(path))
        return win

    return open_


class Ticks:
    """A 20 ms timer on the GUI thread: the longest gap between its ticks is how long the event
    loop stood still."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(20)
        self.timer.timeout.connect(lambda: self.times.append(time.perf_counter()))
        self.timer.start()

    def max_gap(self) -> float:
        return max(b - a for a, b in zip(self.times, self.times[1:]))


def _blocks(n: int, block_size: int = 256) -> int:
    return -(-n // block_size)  # the file's own rule, worked out here


def test_a_slow_grid_rule_never_stalls_the_window_and_its_answer_shows(opened, qtbot):
    win = opened(SLOW, "slow.py", call_s=3.0)
    model, geo = win.model, win.geometry_view
    assert model.inputs.kernel == "k"
    assert model.state.asking == "grid: asking slow.py…"  # selected, not answered yet
    # provisional everywhere: no grid from the launch before, no simulation of one
    assert model.state.geometry is None and not model.state.ok
    assert geo.value("blocks") == "—" and geo.lanes_label.text() == "grid: asking slow.py…"
    assert win.simulation.message == "grid: asking slow.py…"
    assert win.controls.ept_note.text() == "grid: asking slow.py…"
    assert "asking" not in win.controls.error.text()  # asked, not refused
    ticks = Ticks()
    t0 = time.perf_counter()
    qtbot.waitUntil(lambda: not model.state.asking, timeout=HANG_MS)
    waited, gap = time.perf_counter() - t0, ticks.max_gap()
    ticks.timer.stop()
    assert waited > SLEEP_S / 2  # the rule did take its time, and the loop kept turning
    assert gap < MAX_GAP_S, f"the event loop stood still {gap:.2f} s"
    st = model.state
    assert st.ok and st.geometry.blocks == _blocks(1_000_000)
    assert geo.value("blocks") == f"{_blocks(1_000_000):,}"
    qtbot.waitUntil(lambda: win.simulation.run is not None, timeout=HANG_MS)
    # asked again, the same launch answers at once
    t0 = time.perf_counter()
    assert model.update(elements=2_000_000) and model.state.asking
    qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    assert model.update(elements=1_000_000) and model.state.ok and not model.state.asking
    assert time.perf_counter() - t0 < 60


@pytest.mark.slow
def test_a_newer_launch_replaces_the_one_being_asked(opened, qtbot):
    win = opened(SLOW, "slow.py", call_s=3.0)
    model = win.model
    shown = []
    model.changed.connect(shown.append)
    assert model.state.asking
    win.controls.threads_slider.setValue(128)  # moved during the wait
    assert model.inputs.threads_per_block == 128 and model.state.asking
    assert model.update(elements=3_000_000)  # and the size, which the rule is asked for again
    qtbot.waitUntil(lambda: not model.state.asking, timeout=HANG_MS)
    st = model.state
    assert st.ok and st.inputs.threads_per_block == 128 and st.inputs.elements == 3_000_000
    assert st.geometry.blocks == _blocks(3_000_000)
    answered = [s for s in shown if s.geometry is not None]
    assert all(s.inputs.elements == 3_000_000 and s.inputs.threads_per_block == 128
               for s in answered)  # the replaced launches never showed as answered


@pytest.mark.slow
def test_a_grid_rule_that_loops_is_one_line_and_the_window_keeps_its_launch(opened, qtbot):
    # a limit a loaded machine keeps for the answers that do come (the first launch's)
    win = opened(LOOPS_PAST_2M, "loops.py", call_s=2.0)
    model = win.model
    qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    before = model.state
    rejected = []
    model.rejected.connect(rejected.append)
    assert model.update(elements=4_000_000) and model.state.asking  # asked: it loops there
    qtbot.waitUntil(lambda: bool(rejected), timeout=HANG_MS)
    [line] = rejected
    assert "\n" not in line and "no answer in k's 'grid' within 2" in line
    assert "loops.py" in line and line in win.statusBar().currentMessage()
    assert model.state == before and model.state.ok  # the launch it had stays
    # its process was stopped: a new size says so in one line, and the window keeps working
    assert model.update(elements=1_500_000)
    qtbot.waitUntil(lambda: len(rejected) == 2, timeout=HANG_MS)
    assert "open the file again" in rejected[1] and "\n" not in rejected[1]
    assert model.select_kernel("custom") and model.update(elements=5_000_000) and model.state.ok


PERSISTENT = (KERNEL + "import time\n\nWARPSCOPE = dict(GOOD, grid=lambda n, sm_count: "
              f"time.sleep({SLEEP_S}) or 2 * sm_count)\n")


@pytest.mark.slow
def test_the_second_gpu_asks_a_rule_that_needs_its_sms_off_the_gui_thread(opened, qtbot):
    """Two GPUs: a persistent kernel's grid is its GPU's SM count twice; the second GPU's is
    asked of the file too, and the panel says so until it answers."""
    from sim.rules.devices import preset

    win = opened(PERSISTENT, "persistent.py", call_s=3.0)
    model, compare = win.model, win.models.compare
    qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    assert model.state.geometry.blocks == 2 * preset("H100 SXM").sm_count
    assert compare.set_other("T4")
    assert compare.message == "T4: grid: asking persistent.py…" and compare.sides is None
    qtbot.waitUntil(lambda: compare.sides is not None, timeout=HANG_MS)
    here, there = compare.sides
    assert there.geo.blocks == 2 * preset("T4").sm_count and here.geo.blocks == 2 * 132


def test_no_rule_of_the_file_runs_on_the_gui_thread(opened, qtbot, monkeypatch):
    """Every call into the file's process, whatever the window is asked to do, comes from a
    worker thread (the GUI thread only takes answers already at hand)."""
    import threading

    from kernels.declare.declarations import RemoteFunction

    on_gui: list[str] = []
    call = RemoteFunction.__call__

    def watched(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_gui.append(self.key)
        return call(self, *args, **kwargs)

    monkeypatch.setattr(RemoteFunction, "__call__", watched)
    text = KERNEL + ("WARPSCOPE = dict(GOOD, grid=lambda n, BLOCK_SIZE: -(-n // BLOCK_SIZE), "
                     "bytes=lambda n: 12 * n)\n")
    win = opened(text, "rules.py", call_s=3.0)
    model = win.model
    qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    assert model.state.bytes_moved == 12 * 1_000_000  # the file's own formula
    for change in ({"elements": 5_000_000}, {"gpu": "T4"}, {"threads_per_block": 64},
                   {"block_size": 1024}, {"elements": 777_777}):
        assert model.update(**change)
        qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    assert model.state.geometry.blocks == -(-777_777 // 1024)
    win.models.compare.set_other("H200")
    qtbot.waitUntil(lambda: win.models.compare.sides is not None, timeout=HANG_MS)
    assert model.select_kernel("custom") and model.select_kernel("k")
    qtbot.waitUntil(lambda: model.state.ok, timeout=HANG_MS)
    win.grab()  # every panel drawn
    assert on_gui == []
