"""`trace --kernel-file` on a hostile Numba (or Triton) file: the file runs in the kernel host,
so a file that hangs or crashes is one line and exit status 1, nothing on stdout and no trace
file. Without a GPU the command stops before the file runs (exit 2), so here the GPU check is
faked as passed: what is tested is the host boundary the file meets next. (A kernel that hangs
or crashes on the GPU meets the same host, under its launch limit; only the H200 can run one.)"""

from __future__ import annotations

import pytest

import main

NUMBA_HEAD = "from numba import cuda\n"
CASES = {  # what the file does at import -> the time it is given, what the one line says
    "loop": (NUMBA_HEAD + "while True:\n    pass\n", "1.5", "no answer while importing {path} within 1.5 s"),
    "crash": (NUMBA_HEAD + "import ctypes\nctypes.string_at(0)\n", "120", "SIGSEGV"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.slow
def test_a_numba_file_that_hangs_or_crashes_is_one_line(case, tmp_path, capsys, monkeypatch):
    import kernels.tracing.trace

    body, limit_s, says = CASES[case]
    monkeypatch.setenv("WARPSCOPE_USER_CODE_TIMEOUT_S", limit_s)
    monkeypatch.setattr(kernels.tracing.trace, "require_gpu", lambda backend=None: None)
    path = tmp_path / f"{case}.py"
    path.write_text(body + "print('printed at import')\n", encoding="utf-8")
    out_file = tmp_path / "t.json"
    code = main.main(["trace", "--kernel-file", str(path), "--elements", "2^20",
                      "--out", str(out_file)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "") and not out_file.exists()
    [line] = err.splitlines()
    assert line.startswith("warpscope: error: ") and str(path) in line, line
    assert says.format(path=path) in line and "printed at import" not in line, line
