"""Kernel source ▸ Trace on the GPU: shown only once the kernel host found a GPU and only for a
Triton kernel from a file; it records in the background (the user's file in a kernel host) and
opens the trace beside its prediction. The recording itself is faked with a trace the H200 made
(tests/data/h200_kernel_files_heldout), since there is no GPU here."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui import user_kernels
from gui.live_kernels import KernelsInfo
from sim.traces.trace import write_trace
from sim.traces.trace_bundle import load_bundle
from tests.models.fakes import NO_GPU
from tests.patience import HANG_MS

DATA = Path(__file__).resolve().parents[1] / "data"
SOFTMAX = str(Path(__file__).resolve().parents[2] / "resources" / "examples" / "softmax_triton.py")


def _recorded(target, elements, block, warps, out, ctx):
    write_trace(out, load_bundle(DATA / "h200_kernel_files_heldout")["softmax_triton_n20"])
    return out


@pytest.mark.slow
def test_trace_on_the_gpu_records_off_the_gui_thread_and_opens_the_trace(qtbot, make_window,
                                                                      monkeypatch, tmp_path):
    from kernels.declare.registry import KERNELS

    win = make_window("H200", 2**20, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, tuple(KERNELS), None, "no CUDA GPU"))
    uk = win.user_kernels
    with qtbot.waitSignal(uk.files.opened, timeout=HANG_MS):
        uk.open(SOFTMAX)
    button = uk.source.trace_button
    assert button.isHidden()  # no GPU found: nothing to trace on
    uk.source.set_gpu_present(True)
    assert not button.isHidden()
    monkeypatch.setattr(user_kernels, "_trace_job", _recorded)
    monkeypatch.setattr(user_kernels, "trace_path", lambda *a: str(tmp_path / "t.json"))
    opened = []
    monkeypatch.setattr(win, "open_trace", lambda path, wait=False: opened.append(path) or True)
    with qtbot.waitSignal(uk.tracer.finished, timeout=HANG_MS):
        button.click()
    assert opened == [str(tmp_path / "t.json")] and (tmp_path / "t.json").is_file()


@pytest.mark.slow
def test_a_failed_recording_is_one_line(qtbot, make_window, monkeypatch):
    from kernels.declare.registry import KERNELS
    from sim.inputs.errors import UserError

    def fails(*a):
        raise UserError("no CUDA GPU here: trace --kernel-file needs one")

    win = make_window("H200", 2**20, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, tuple(KERNELS), None, "no CUDA GPU"))
    uk = win.user_kernels
    with qtbot.waitSignal(uk.files.opened, timeout=HANG_MS):
        uk.open(SOFTMAX)
    said = []
    monkeypatch.setattr(win, "show_message", lambda text, error=False, **k: said.append((text, error)))
    monkeypatch.setattr(user_kernels, "_trace_job", fails)
    with qtbot.waitSignal(uk.tracer.finished, timeout=HANG_MS):
        uk.trace_on_gpu(SOFTMAX)
    text, error = said[-1]
    assert error and "needs one" in text and "\n" not in text


@pytest.mark.slow
def test_a_numba_kernel_from_a_file_is_traced_the_same_way(qtbot, make_window, monkeypatch, tmp_path):
    """The stencil example (Numba): the button shows once a GPU is found, and the recording gets
    the file's kernel with no Triton num_warps (a Numba block is its threads)."""
    from kernels.declare.registry import KERNELS

    stencil = SOFTMAX.replace("softmax_triton.py", "stencil_numba.py")
    win = make_window("H200", 2**20, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, tuple(KERNELS), None, "no CUDA GPU"))
    uk = win.user_kernels
    with qtbot.waitSignal(uk.files.opened, timeout=HANG_MS):
        uk.open(stencil)
    assert win.model.kernel().backend == "numba"
    button = uk.source.trace_button
    assert button.isHidden()
    uk.source.set_gpu_present(True)
    assert not button.isHidden()
    asked = []

    def recorded(target, elements, block, warps, out, ctx):
        asked.append((target, block, warps))
        return _recorded(target, elements, block, warps, out, ctx)

    monkeypatch.setattr(user_kernels, "_trace_job", recorded)
    monkeypatch.setattr(user_kernels, "trace_path", lambda *a: str(tmp_path / "t.json"))
    monkeypatch.setattr(win, "open_trace", lambda path, wait=False: True)
    with qtbot.waitSignal(uk.tracer.finished, timeout=HANG_MS):
        button.click()
    assert asked == [(f"{stencil}:stencil_kernel", None, None)]
