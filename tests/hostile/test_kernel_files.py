"""A kernel file is the user's code: whatever it does at import or in any function WarpScope calls
(loop, allocate 10 GB, raise, return NaN, 0 or a string, print, crash, os._exit), the command
line gives one line naming the file, the key and the error, exit status 1, and its prints never
reach stdout. Short limits (WARPSCOPE_USER_CODE_TIMEOUT_S) keep the loops fast."""

from __future__ import annotations

import json

import pytest

import main
from kernels.declare.declarations import DeclarationProcess, Limits
from kernels.declare.user_code import UserCodeError

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


GOOD = dict(kernel=k, inputs=1, block=dict(BLOCK_SIZE=256))
'''

# name -> (what the declaration adds to GOOD, what the one line says after "KEY")
BAD_FUNCTIONS = {
    "grid_raises": ("grid=lambda n: 1 // 0", "'grid' raised ZeroDivisionError"),
    "grid_nan": ("grid=lambda n: float('nan')", "'grid' returned nan, not a whole number"),
    "grid_zero": ("grid=lambda n: 0", "'grid' returned 0: a whole number of blocks must be 1"),
    "grid_string": ("grid=lambda n: 'many'", "'grid' returned 'many' (a str)"),
    "grid_huge": ("grid=lambda n: 10**30", "'grid' returned 1,000,000,000,000,000,000,000,000,000,000"),
    "grid_fraction": ("grid=lambda n: n / 7", "'grid' returned 142857.14"),
    "grid_four_dims": ("grid=lambda n: (1, 1, 1, 1)", "'grid' returned (1, 1, 1, 1): a grid is 1 to 3"),
    "tile_zero": ("tile=lambda n: 0", "'tile' returned 0"),
    "tile_string": ("tile=lambda BLOCK_SIZE: str(BLOCK_SIZE)", "'tile' returned '256' (a str)"),
    "tile_none": ("tile=lambda n: None", "'tile' returned None (a NoneType)"),
    "bytes_inf": ("bytes=lambda n: float('inf')", "'bytes' returned inf"),
    "bytes_negative": ("bytes=lambda n: -n", "'bytes' returned -1,000,000"),
    "bytes_raises": ("bytes=lambda n: [][0]", "'bytes' raised IndexError"),
    "dims_not_a_dict": ("dims=lambda n: [n]", "'dims' returned [1000000], not a dict"),
    "dims_nan": ("dims=lambda n: dict(n=float('nan'))", "'dims' returned nan, not a whole size for n"),
}


def _file_with_bad_functions(tmp_path):
    decls = ", ".join(f"dict(GOOD, name={name!r}, {extra})" for name, (extra, _) in BAD_FUNCTIONS.items())
    path = tmp_path / "bad_functions.py"
    path.write_text(KERNEL + f"WARPSCOPE = [GOOD, {decls}]\n", encoding="utf-8")
    return path


def test_every_bad_function_is_one_line_naming_the_file_the_kernel_and_the_key(tmp_path):
    path = _file_with_bad_functions(tmp_path)
    with DeclarationProcess(str(path)) as process:
        process.describe()
        good = process.launch("k", 1_000_000, None, None, 132, None)
        assert good["blocks"] == 3907 and good["bytes_moved"] == 8_000_000
        for name, (_, says) in BAD_FUNCTIONS.items():
            with pytest.raises(UserCodeError) as caught:
                process.launch(name, 1_000_000, None, None, 132, None)
            line = str(caught.value)
            assert "\n" not in line and line.startswith(f"{path}: {name}'s {says}"), line
            assert caught.value.exit_status == 1
        assert process.alive()  # a bad answer is a line, not the end of the file's process


def _explain(capsys, *args):
    code = main.main(["explain", "--gpu", "H200", "--regs", "32", "--smem", "0", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bad_grid_from_the_command_line_is_one_line_and_status_1(tmp_path, capsys):
    path = _file_with_bad_functions(tmp_path)
    code, out, err = _explain(capsys, "--kernel-file", f"{path}:grid_nan", "--json")
    assert (code, out) == (1, "")
    assert err == f"warpscope: error: {path}: grid_nan's 'grid' returned nan, not a whole number of blocks\n"


IMPORTS = {  # what the file does at import -> what the one line says
    "loop": ("while True:\n    pass\n", "no answer while importing it within 1.5 s"),
    "huge": ("import numpy\n_big = numpy.ones(10 * 2**30, numpy.uint8)\n",
             "line 2: importing it raised MemoryError: Unable to allocate 10.0 GiB"),
    "os_exit": ("import os\nos._exit(0)\n", "its process ended while importing it (exit status 0)"),
    "crash": ("import ctypes\nctypes.string_at(0)\n",
              "its process ended while importing it (killed by SIGSEGV"),
    "exits": ("raise SystemExit(3)\n", "line 1: importing it raised SystemExit: 3"),
    "raises": ("raise RuntimeError('no data')\n", "line 1: importing it raised RuntimeError: no data"),
}


# the loop waits out its time limit: the slow tier's
@pytest.mark.parametrize("case", [c if c != "loop" else pytest.param(c, marks=pytest.mark.slow)
                                  for c in sorted(IMPORTS)])
def test_an_import_that_fails_in_any_way_is_one_line_and_status_1(case, tmp_path, capsys,
                                                                    monkeypatch):
    if case == "loop":  # only here: a busy machine may take longer to start the others
        monkeypatch.setenv("WARPSCOPE_USER_CODE_TIMEOUT_S", "1.5")
    body, says = IMPORTS[case]
    path = tmp_path / f"{case}.py"
    path.write_text(body + "print('printed at import')\n", encoding="utf-8")
    code, out, err = _explain(capsys, "--kernel-file", str(path), "--json")
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith(f"warpscope: error: {path}") and says in line, line


@pytest.mark.slow
def test_prints_at_import_never_reach_the_json(tmp_path, capsys):
    path = tmp_path / "chatty.py"
    path.write_text("import sys\nprint('hello')\nprint('to stderr', file=sys.stderr)\n" + KERNEL
                    + "print('more', flush=True)\nWARPSCOPE = GOOD\n", encoding="utf-8")
    code, out, err = _explain(capsys, "--kernel-file", str(path), "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["kernel"]["blocks"] == 3907


def test_a_missing_file_is_a_usage_error_with_no_process(tmp_path, capsys):
    code, _, err = _explain(capsys, "--kernel-file", str(tmp_path / "nope.py"))
    assert code == 2 and "does not exist" in err


def test_the_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("WARPSCOPE_USER_CODE_TIMEOUT_S", "2")
    monkeypatch.setenv("WARPSCOPE_USER_CODE_MEMORY_MB", "512")
    limits = Limits.from_env()
    assert (limits.open_s, limits.launch_s, limits.call_s, limits.memory_bytes) == (2, 2, 1, 512 << 20)
    monkeypatch.setenv("WARPSCOPE_USER_CODE_MEMORY_MB", "lots")
    with pytest.raises(UserCodeError.__mro__[1], match="WARPSCOPE_USER_CODE_MEMORY_MB must be a number"):
        Limits.from_env()


@pytest.mark.slow
def test_bench_runs_the_file_in_a_kernel_host_under_the_memory_limit(tmp_path, capsys):
    """One kernel host (check takes the same path: kernels/host/in_host.py, test_kernel_file_cli)."""
    huge = tmp_path / "huge.py"
    huge.write_text("print('chatter')\nimport numpy\n_big = numpy.ones(10 * 2**30, numpy.uint8)\n",
                    encoding="utf-8")
    assert main.main(["bench", "--kernel-file", str(huge), "--cpu", "--sizes", "300",
                      "--out", str(tmp_path / "b.json")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and not (tmp_path / "b.json").exists()
    [line] = err.splitlines()
    assert f"{huge}, line 3: importing it raised MemoryError" in line, line
    assert "WARPSCOPE_USER_CODE_MEMORY_MB" in line


def test_the_same_file_and_launch_answer_from_the_cache_and_an_edit_runs_it_again(
        tmp_path, capsys, monkeypatch):
    import kernels.declare.declarations

    path = tmp_path / "cached.py"
    path.write_text(KERNEL + "WARPSCOPE = GOOD\n", encoding="utf-8")
    code, first, _ = _explain(capsys, "--kernel-file", str(path), "--json")
    assert code == 0

    class NoProcess:
        def __init__(self, *a, **k):
            raise AssertionError("a process was started")

    monkeypatch.setattr(kernels.declare.declarations, "DeclarationProcess", NoProcess)
    code, again, _ = _explain(capsys, "--kernel-file", str(path), "--json")
    assert code == 0 and again == first
    path.write_text(KERNEL + "WARPSCOPE = dict(GOOD, block=dict(BLOCK_SIZE=512))\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="a process was started"):
        main.main(["explain", "--kernel-file", str(path), "--regs", "32", "--smem", "0"])
