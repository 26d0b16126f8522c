"""Your own kernel in the window: File ▸ Open kernel…, its source, registers and shared memory from
the compiler for the selected GPU (built-in kernels too), compiled off the GUI thread, a broken
file or kernel answered with one line while the window keeps working, and files of an earlier
session offered again, never opened without a yes. (That the window's own process imports no
compiler for any of it: tests/gui/test_window_host.py, in a fresh process.)"""

from __future__ import annotations

import html
import json
from functools import partial
from pathlib import Path

import pytest

from gui.jobs import KernelJobs
from tests import compile_fakes as fake
from gui.live_kernels import KernelsInfo
from gui.models.compiled import COMPILER, COMPILING, FAILED
from tests.broken_kernel_files import BROKEN, write_broken
from tests.models.fakes import NO_GPU
from tests.patience import HANG_MS

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
SOFTMAX = str(EXAMPLES / "softmax_triton.py")


def _builtins():
    from kernels.declare.registry import KERNELS

    return tuple(KERNELS)


def _window(make_window, gpu="A100 80GB", **kw):
    """A window with the built-in kernels; the real compiler for the launch, but no threads
    sweep (six more compiles each time; tested with fakes below)."""
    win = make_window(gpu, 1_000_000, 256, **kw)
    win.apply_kernels_info(KernelsInfo(NO_GPU, _builtins(), None, "no CUDA GPU"))
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile_many=fake.no_sweep)
    return win


def _compiled_here(spec, n, block, cc):
    """What the compiler says in this process (the window's answer is in the session's cache)."""
    from kernels.offline_compile.resources import kernel_by_ref, launch_resources

    real = kernel_by_ref(spec.name, None if spec.origin == "built-in" else spec.origin)
    return launch_resources(real, n, block, cc)


@pytest.mark.slow
def test_an_opened_example_gets_its_registers_from_the_compiler_for_each_gpu(qtbot, make_window):
    win = _window(make_window)
    uk = win.user_kernels
    with qtbot.waitSignal(uk.files.opened, timeout=HANG_MS):
        uk.open(SOFTMAX)
    # the file is open and selected; the compiler has been asked, not waited for
    assert win.model.inputs.kernel == "softmax_kernel"
    assert win.model.state.origin.kind in (COMPILING, COMPILER)
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    spec = win.model.kernel()
    want = _compiled_here(spec, 1_000_000, {"num_warps": 8}, (8, 0))
    st = win.model.state
    assert (st.inputs.regs_per_thread, st.inputs.smem_per_block) == (
        want.regs_per_thread, want.smem_per_block)
    assert st.inputs.regs_per_thread > 0 and st.origin.text == want.source
    assert win.controls.regs.int_value() == want.regs_per_thread
    assert "from the compiler" in win.controls.resources.label.text()
    assert "sm_80" in win.controls.resources.label.text()
    assert st.geometry.blocks == 1_000_000 // 4096  # one program per row, its own grid rule
    # the kernel menu lists it with its file; the source panel shows the file at the kernel
    item = win.controls.kernel.findData("softmax_kernel")
    assert win.controls.kernel.itemText(item).endswith("· softmax_triton.py")
    src = uk.source
    assert src.title.text() == "softmax_triton.py — softmax_kernel"
    assert src.code.isReadOnly()
    lines = Path(SOFTMAX).read_text(encoding="utf-8").splitlines()
    assert lines[src.code.marked_line() - 1].startswith("def softmax_kernel(")
    # the Bandwidth panel measures it beside its torch peer
    names = [k.name for k in win.bench.kernels]
    assert "softmax_kernel" in names and "softmax_kernel_torch" in names
    assert {"softmax_kernel", "softmax_kernel_torch"} <= set(win.bench.ticked)
    # another GPU: another compile, for its compute capability
    win.controls.gpu.setCurrentText("T4")
    assert win.model.state.origin.kind == COMPILING
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    want = _compiled_here(spec, 1_000_000, {"num_warps": 8}, (7, 5))
    assert win.model.inputs.regs_per_thread == want.regs_per_thread
    assert win.model.state.origin.text.endswith("for sm_75")
    assert win.model.state.occ.regs_per_thread == want.regs_per_thread


@pytest.mark.slow
def test_a_builtin_kernel_without_a_gpu_gets_compiled_registers(qtbot, make_window):
    win = _window(make_window, "T4")
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_numba"))
    assert win.model.state.origin.kind == COMPILING  # asked, not waited for
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    spec = win.model.kernel()
    want = _compiled_here(spec, 1_000_000, 256, (7, 5))
    assert win.model.inputs.regs_per_thread == want.regs_per_thread > 0
    assert win.model.state.origin.text == want.source
    assert "numba" in win.controls.resources.label.text()
    # a Numba kernel's registers do not change with its block: no sweep to recompile
    assert win.occupancy_view.curve_note.isHidden()


@pytest.mark.parametrize("name", ["syntax.py", "nodecl.py", "raises.py"])
@pytest.mark.slow
def test_a_file_that_does_not_open_is_one_line_and_the_window_keeps_working(
        qtbot, make_window, tmp_path, name):
    win = _window(make_window)
    path = write_broken(tmp_path)[name]
    before = [k.name for k in win.model.kernels()]
    with qtbot.waitSignal(win.user_kernels.files.failed, timeout=HANG_MS) as got:
        win.user_kernels.open(str(path))
    _, message = got.args
    assert BROKEN[name][1] in message and "\n" not in message
    assert message in win.statusBar().currentMessage()
    assert win.user_kernels.source.banner.isVisibleTo(win.user_kernels.source)
    assert BROKEN[name][1] in win.bandwidth.log.toPlainText()
    assert [k.name for k in win.model.kernels()] == before
    assert win.model.update(elements=2_000_000) and win.model.state.ok  # still working


@pytest.mark.slow
def test_a_kernel_that_does_not_compile_is_one_line_with_the_whole_output_in_the_log(
        qtbot, make_window, tmp_path):
    win = _window(make_window, "H200")
    path = write_broken(tmp_path)["compile_error.py"]
    with qtbot.waitSignal(win.user_kernels.files.opened, timeout=HANG_MS):
        win.user_kernels.open(str(path))
    qtbot.waitUntil(lambda: win.model.state.origin.kind == FAILED, timeout=HANG_MS)
    origin = win.model.state.origin
    assert origin.text.startswith("broken_kernel does not compile") and "line 8" in origin.text
    assert "\n" not in origin.text
    res = win.controls.resources
    assert html.escape(origin.text) in res.label.text() and res.retry.isVisibleTo(res)
    log = win.bandwidth.log.toPlainText()
    assert "not_defined" in log and "Traceback" in log  # the compiler's whole output
    assert win.model.update(elements=3_000_000)  # its grid rule answers off the GUI thread
    qtbot.waitUntil(lambda: win.model.state.ok, timeout=HANG_MS)  # the window keeps working


@pytest.mark.slow
def test_compiling_can_be_cancelled_and_asked_again(qtbot, make_window):
    win = _window(make_window)
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=fake.until_cancelled)
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_triton"))
    res = win.controls.resources
    assert win.model.state.origin.kind == COMPILING
    assert res.busy.isVisibleTo(res) and res.cancel.isVisibleTo(res)
    qtbot.waitUntil(lambda: win.user_kernels.compiler.host_pid is not None, timeout=HANG_MS)
    res.cancel.click()
    qtbot.waitUntil(lambda: win.model.state.origin.kind == FAILED, timeout=HANG_MS)
    assert "cancelled" in win.model.state.origin.text and res.retry.isVisibleTo(res)
    assert win.model.inputs.regs_per_thread == 0  # not pretended
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 25, 0))
    res.retry.click()
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    assert win.model.inputs.regs_per_thread == 25


@pytest.mark.slow
def test_spills_warn_and_the_threads_curve_is_recompiled_per_warp_count(qtbot, make_window):
    win = _window(make_window, "H200")
    regs = {1: 64, 2: 32, 4: 255, 8: 182, 16: 76, 32: 46}  # layer norm, BLOCK_SIZE 16384
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 255, 416),
                                                    compile_many=partial(fake.by_warps, regs))
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_triton"))
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    res = win.controls.resources
    assert res.spills.isVisibleTo(res) and "416 B of stack per thread" in res.spills.text()
    view = win.occupancy_view
    qtbot.waitUntil(lambda: "recompiled at each warp count (triton" in view.curve_note.text(),
                    timeout=HANG_MS)
    xs, ys = view.sweep_data("threads")
    assert list(xs) == [32, 64, 128, 256, 512, 1024]
    from sim.rules.occupancy import occupancy

    spec = win.model.state.spec
    assert list(ys) == [occupancy(spec, 32 * w, r, 16).active_warps_per_sm
                        for w, r in regs.items()]
    # registers typed in: by hand, and said so
    win.controls.regs.setValue(40)
    win.controls.regs.editingFinished.emit()
    assert win.model.state.origin.kind == "hand" and "by hand" in res.label.text()
    assert not res.spills.isVisibleTo(res)


def test_files_of_an_earlier_session_are_offered_and_never_opened_without_a_yes(
        qtbot, make_window):
    from PySide6.QtWidgets import QMessageBox

    from gui.settings import open_settings

    settings = open_settings()
    settings.setValue("kernels/files", json.dumps([SOFTMAX]))
    settings.sync()
    win = make_window("H200", restore=True)
    uk = win.user_kernels
    uk.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 30, 0),  # not the question here
                                      compile_many=fake.no_sweep)
    assert [a.text() for a in uk.recent_menu.actions()][0] == SOFTMAX
    qtbot.waitUntil(lambda: uk.reopen_box is not None and uk.reopen_box.isVisible(),
                    timeout=5000)
    assert SOFTMAX in uk.reopen_box.informativeText()
    assert "runs its Python code" in uk.reopen_box.informativeText()
    assert not uk.files.files and not uk.file_jobs.opening  # nothing ran yet
    uk.reopen_box.done(QMessageBox.StandardButton.No)
    assert not uk.files.files and not uk.file_jobs.opening
    with qtbot.waitSignal(uk.files.opened, timeout=HANG_MS):
        uk.ask_to_reopen()
        uk.reopen_box.done(QMessageBox.StandardButton.Yes)
    assert "softmax_kernel" in [k.name for k in win.model.kernels()]


@pytest.mark.slow
def test_a_window_started_from_settings_never_runs_a_kernel_file(qtbot, make_window):
    """restore=False (tests, --screenshot): nothing is asked and nothing is opened."""
    from gui.settings import open_settings

    open_settings().setValue("kernels/files", json.dumps([SOFTMAX]))
    win = make_window("H200")
    qtbot.wait(50)
    assert win.user_kernels.reopen_box is None and not win.user_kernels.files.files


@pytest.mark.slow
def test_a_file_being_opened_shows_its_limit_and_can_be_cancelled(qtbot, make_window, tmp_path):
    win = _window(make_window)
    uk = win.user_kernels
    stuck = tmp_path / "stuck.py"
    stuck.write_text("import time\nwhile True:\n    time.sleep(0.01)\n", encoding="utf-8")
    failed = []
    uk.files.failed.connect(lambda path, message: failed.append(message))
    assert uk.open(str(stuck))
    assert uk.opening_bar.isVisibleTo(win) and "Opening stuck.py" in uk.opening_label.text()
    assert "20 s" in uk.opening_label.text()  # the file's own limit (Limits.open_s)
    qtbot.waitUntil(lambda: bool(_file_processes()), timeout=HANG_MS)
    uk.opening_cancel.click()
    assert not uk.file_jobs.opening and not uk.opening_bar.isVisibleTo(win)
    assert f"Stopped opening {stuck}" in win.statusBar().currentMessage()
    qtbot.waitUntil(lambda: not _file_processes(), timeout=HANG_MS)  # its process ended
    assert not failed


def _file_processes() -> list[int]:
    """This process's live children that run a kernel file (kernels.declare.declarations)."""
    import os

    from tests.hostile.test_child_processes import _children_of

    found = []
    for pid in _children_of(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"kernels.declare.declarations" in fh.read():
                    found.append(pid)
        except OSError:
            pass
    return found
