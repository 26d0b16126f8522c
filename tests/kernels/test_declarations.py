"""kernels/declare/declarations.py: the window evaluates a kernel file's grid rule, bytes and sizes in the
file's own process, and gets the same answers as the declaration itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.declare.declarations import DeclarationProcess
from kernels.declare.kernel_file import open_kernel_file
from sim.inputs.errors import UserError
from tests.patience import HANG_S

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


@pytest.fixture(scope="module")
def stencil():
    process = DeclarationProcess(str(EXAMPLES / "stencil_numba.py"))
    yield process, process.open()
    process.close()


def test_the_windows_spec_answers_as_the_declaration_does(stencil):
    process, (spec, peer) = stencil
    [real, real_peer] = open_kernel_file(EXAMPLES / "stencil_numba.py")
    assert (spec.name, spec.backend, spec.origin, dict(spec.block)) == (
        real.name, real.backend, real.origin, dict(real.block))
    assert peer.name == real_peer.name == "stencil_kernel_torch" and not peer.launchable
    for n, block in ((1_000_000, None), (12_345, {"threads": (16, 16)}), (7, {"threads": (32, 32)})):
        assert spec.launch_shape(n, block, 80) == real.launch_shape(n, block, 80)
        assert spec.bytes_moved(n) == real.bytes_moved(n)
        assert spec.size_dims(n) == real.size_dims(n)
    assert spec.kernel.endswith("stencil_numba.py:stencil_kernel")
    assert spec.reference is not None and spec.peer is not None  # declared, run elsewhere


def test_the_windows_process_imports_no_gpu_library(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from kernels.declare.declarations import DeclarationProcess; "
            f"p = DeclarationProcess({str(EXAMPLES / 'softmax_triton.py')!r}); "
            "s = p.open()[0]; print(s.launch_shape(2**20, None, 132).grid_blocks); p.close(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton', 'numba')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_S,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["256", "[]"], out.stderr[-2000:]


@pytest.mark.slow
def test_a_grid_rule_that_raises_is_one_line(tmp_path):
    path = tmp_path / "bad_grid.py"
    path.write_text((EXAMPLES / "softmax_triton.py").read_text(encoding="utf-8").replace(
        "grid=lambda n: max(1, n // COLS)", "grid=lambda n: n // (n - n)"), encoding="utf-8")
    process = DeclarationProcess(str(path))
    try:
        spec = process.open()[0]
        with pytest.raises(UserError, match="ZeroDivisionError"):
            spec.launch_shape(4096, None, 132)
        process.proc.kill()
        process.proc.wait()
        with pytest.raises(UserError, match=r"its process ended earlier \(killed by SIGKILL\): open the file again"):
            spec.launch_shape(4096, None, 132)
    finally:
        process.close()


@pytest.mark.slow
def test_a_file_that_does_not_open_is_one_line(tmp_path):
    path = tmp_path / "raises.py"
    path.write_text("raise RuntimeError('no data folder')\n", encoding="utf-8")
    process = DeclarationProcess(str(path))
    with pytest.raises(UserError, match="line 1: importing it raised RuntimeError: no data folder"):
        process.open()
    assert not process.alive()
