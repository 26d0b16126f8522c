"""The window opens kernel files in parallel, each in a process of its own: a file stuck at
import holds up no other and none is dropped; a timed-out open, and a grid rule that loops, are
one line off the GUI thread (the issue: 120 s of File ▸ Open kernel blocked, files opened
meanwhile lost, a looping grid rule froze the window 5 s)."""

from __future__ import annotations

import time

import pytest

from gui.adapter import TaskRunner
from gui.jobs import KernelFileJobs
from gui.models.kernel_files import KernelFilesModel
from kernels.declare.declarations import Limits
from tests.hostile.test_kernel_files import KERNEL
from tests.patience import HANG_MS


@pytest.fixture
def opener(qapp, monkeypatch):
    def make(**limits):
        monkeypatch.setattr(Limits, "from_env", classmethod(lambda cls: Limits(**limits)))
        files = KernelFilesModel()
        jobs = KernelFileJobs(files, lambda: TaskRunner("kernel file"))
        failed, opened = {}, []
        files.failed.connect(lambda path, message: failed.__setitem__(path, message))
        files.opened.connect(opened.append)
        made.append(jobs)
        return jobs, failed, opened

    made: list = []
    yield make
    for jobs in made:
        jobs.shutdown()
        jobs.files.close()


def _stuck(tmp_path):
    path = tmp_path / "stuck.py"
    flag = tmp_path / "never"
    path.write_text(f"import os, time\nwhile not os.path.exists({str(flag)!r}):\n"
                    "    time.sleep(0.01)\n", encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_a_stuck_file_holds_up_no_other_and_none_is_dropped(opener, tmp_path, qtbot):
    jobs, failed, opened = opener(open_s=60, call_s=0.3, launch_s=60)
    stuck = _stuck(tmp_path)
    good = tmp_path / "good.py"
    good.write_text(KERNEL + "WARPSCOPE = GOOD\n", encoding="utf-8")
    looping = tmp_path / "loops.py"
    looping.write_text(KERNEL + "WARPSCOPE = dict(GOOD, grid=lambda n: [i for i in iter(int, 1)])\n",
                       encoding="utf-8")
    for path in (stuck, str(good), str(looping)):
        assert jobs.open(path)
    assert not jobs.open(stuck)  # already opening: not twice
    qtbot.waitUntil(lambda: bool(opened) and str(looping) in failed, timeout=HANG_MS)
    assert [f.path for f in opened] == [str(good)]
    assert _off_the_gui_thread(opened[0].kernels[0].launch_shape, 1 << 20, None, 132
                               ).grid_blocks == 4096
    assert failed[str(looping)] == (f"{looping}: no answer while working out k's launch within "
                                    "1.5 s (a loop, or waiting on something? "
                                    "WARPSCOPE_USER_CODE_TIMEOUT_S); its process was stopped")
    assert list(jobs.opening) == [stuck] and stuck not in failed  # still importing
    t0 = time.perf_counter()
    jobs.shutdown()  # the window closing: the stuck open is cancelled, its process killed
    assert time.perf_counter() - t0 < 5 and not jobs.opening


def test_an_open_that_times_out_says_so_in_one_line(opener, tmp_path, qtbot):
    jobs, failed, opened = opener(open_s=1.0, call_s=0.3, launch_s=1.0)
    stuck = _stuck(tmp_path)
    jobs.open(stuck)
    qtbot.waitUntil(lambda: stuck in failed, timeout=HANG_MS)
    assert failed[stuck] == (f"{stuck}: no answer while importing it within 1 s (a loop, or "
                             "waiting on something? WARPSCOPE_USER_CODE_TIMEOUT_S); its process "
                             "was stopped")
    assert not opened and not jobs.opening


def test_a_grid_rule_that_loops_later_stalls_one_call_for_call_s_at_most(opener, tmp_path, qtbot):
    """A rule that loops only at some sizes passes the open; the window's first call there ends
    after Limits.call_s with one line, and every later call answers at once."""
    from kernels.declare.user_code import UserCodeError

    jobs, failed, opened = opener(open_s=60, call_s=0.3, launch_s=60)
    path = tmp_path / "later.py"
    path.write_text(KERNEL + "WARPSCOPE = dict(GOOD, grid=lambda n: n // 256 if n < 2**21 "
                    "else [i for i in iter(int, 1)])\n", encoding="utf-8")
    jobs.open(str(path))
    qtbot.waitUntil(lambda: bool(opened) or bool(failed), timeout=HANG_MS)
    [spec] = opened[0].kernels
    assert _off_the_gui_thread(spec.launch_shape, 2**20, None, 132).grid_blocks == 4096
    t0 = time.perf_counter()
    with pytest.raises(UserCodeError, match=r"no answer in k's 'grid' within 0.3 s"):
        _off_the_gui_thread(spec.launch_shape, 2**22, None, 132)
    t1 = time.perf_counter()
    with pytest.raises(UserCodeError, match="its process ended earlier .*open the file again"):
        _off_the_gui_thread(spec.launch_shape, 2**21 - 1, None, 132)
    # what the file answered before its process was stopped still stands
    assert _off_the_gui_thread(spec.launch_shape, 2**20, None, 132).grid_blocks == 4096
    assert t1 - t0 < 3 and time.perf_counter() - t1 < 1


def test_the_gui_thread_never_waits_for_a_rule(opener, tmp_path, qtbot):
    """Asked on the GUI thread, a rule not answered before says so at once (the window then asks
    it on a worker: tests/gui/test_kernel_rules_async.py)."""
    from gui.models.kernel_rules import RulesPending

    jobs, failed, opened = opener(open_s=60, call_s=0.3, launch_s=60)
    path = tmp_path / "good.py"
    path.write_text(KERNEL + "WARPSCOPE = GOOD\n", encoding="utf-8")
    jobs.open(str(path))
    qtbot.waitUntil(lambda: bool(opened) or bool(failed), timeout=HANG_MS)
    [spec] = opened[0].kernels
    with pytest.raises(RulesPending, match="asking good.py"):
        spec.launch_shape(3 << 20, None, 132)
    assert _off_the_gui_thread(spec.launch_shape, 3 << 20, None, 132).grid_blocks == 3 * 4096
    assert spec.launch_shape(3 << 20, None, 132).grid_blocks == 3 * 4096  # answered: at hand


def _off_the_gui_thread(fn, *args):
    """`fn(*args)` on a worker thread, as the window asks a file's rules; its error re-raised."""
    from concurrent.futures import ThreadPoolExecutor

    from gui.models.kernel_rules import answering

    def ask():
        with answering():
            return fn(*args)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(ask).result()
