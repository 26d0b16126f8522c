"""The command line's conventions (docs/SETUP.md "Command-line conventions"): usage errors and
"needs a GPU" (trace, calibrate) exit 2, runtime failures exit 1, both with one line on stderr; progress goes to stderr, results to
stdout; a check that checked nothing fails; `--version`."""

import sys
from pathlib import Path

import pytest

import main
import sim
from kernels.measure.check import CheckResult
from sim.inputs.errors import NeedsGpu, RunFailure, UserError

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    try:
        code = main.main(list(argv))
    except SystemExit as exc:  # argparse's --help, --version and bad options
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_is_the_packages(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"warpscope {sim.__version__}\n"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'version = {attr = "sim.__version__"}' in pyproject  # one place for the number


def test_usage_errors_exit_2_and_runtime_failures_exit_1(capsys, monkeypatch):
    import sim.cli

    assert RunFailure("x").exit_status == 1 and UserError("x").exit_status == 2
    for raised, status in ((UserError("bad value"), 2), (RunFailure("out of GPU memory"), 1),
                           (NeedsGpu("recording a trace needs a GPU"), 2), (MemoryError(), 1)):
        def handler(args, raised=raised):
            raise raised

        monkeypatch.setattr(sim.cli, "cmd_explain", handler)
        code, _, err = run(capsys, "explain")
        assert code == status and err.count("\n") == 1 and err.startswith("warpscope: error:"), err


@pytest.mark.parametrize("argv", [["trace", "--grid", "8", "--out", "t.json"], ["calibrate"]])
def test_a_command_without_triton_says_so_in_one_line(capsys, monkeypatch, tmp_path, argv):
    """Was a ModuleNotFoundError traceback."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` raises ModuleNotFoundError
    import kernels

    for full in ("kernels.tracing.trace", "kernels.bodies.trace_kernels"):  # they import triton:
        if full in sys.modules:                                               # afresh, without it
            parent, leaf = full.rsplit(".", 1)
            monkeypatch.setattr(sys.modules[parent], leaf, sys.modules[full])  # put back after
            monkeypatch.delitem(sys.modules, full)
    code, out, err = run(capsys, *argv)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "needs triton, which is not installed" in err and "pip install" in err and not out
    from kernels import cli  # `python -m kernels.cli`, for GPU servers without the GUI's packages

    assert cli.main(argv) == 1 and "needs triton" in capsys.readouterr().err


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the no-GPU path")
@pytest.mark.parametrize("argv", [["trace", "--grid", "8", "--out", "t.json"],
                                  ["trace", "--kernel", "add", "--elements", "2^20", "--out", "t.json"]])
def test_trace_without_a_gpu_is_one_line_and_exit_2(capsys, monkeypatch, tmp_path, argv):
    """A precondition, like a usage error (was exit 1); `--kernel-file`: tests/kernels/test_instrument.py."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "needs a GPU" in err and not out, err
    assert not (tmp_path / "t.json").exists()


def test_a_missing_module_that_is_not_a_live_kernel_package_stays_a_bug():
    from kernels.launching.backends import missing_module_error

    assert missing_module_error(ModuleNotFoundError("x", name="gui.nothing")) is None
    found = missing_module_error(ModuleNotFoundError("x", name="numba.cuda"))
    assert isinstance(found, RunFailure) and "needs numba," in str(found)


def _fake_checks(statuses):
    def run_checks(names=None, sizes=None, on_result=None):
        results = [CheckResult(f"k{i}", "triton", 4, s, "unavailable") for i, s in
                   enumerate(statuses)]
        for r in results:
            on_result(r)
        return results

    return run_checks


@pytest.mark.parametrize("statuses, code", [(["SKIP", "SKIP"], 1), (["OK", "SKIP"], 0),
                                            (["OK", "FAIL"], 1)])
def test_check_that_checked_nothing_fails(capsys, monkeypatch, statuses, code):
    import kernels.measure.check

    monkeypatch.setattr(kernels.measure.check, "run_checks", _fake_checks(statuses))
    got, out, err = run(capsys, "check")
    assert got == code
    assert ("nothing was checked" in err) == (statuses == ["SKIP", "SKIP"])
    line = f"{statuses[1]:4} k1 n=4"  # per-kernel progress on stderr, the table on stdout
    assert line in err and line not in out


def test_calibrate_progress_goes_to_stderr(capsys, monkeypatch, tmp_path):
    import kernels.measure.calibrate

    class Profile:
        label = "fitted"

    class Result:
        profile, scores, failed, path = Profile(), [], [], tmp_path / "p.json"
        share_note = "24 faster SMs (1.44x the blocks of the rest): [32, 33]"
        constants, check = {}, []

    def calibrate(out, say, **kw):
        say("recording trace 1 of 12 ...")
        return Result()

    monkeypatch.setattr(kernels.measure.calibrate, "calibrate", calibrate)
    code, out, err = run(capsys, "calibrate")
    assert code == 0 and "recording trace 1 of 12" in err and "recording" not in out, err
    assert f"wrote {tmp_path / 'p.json'}" in out and "faster SMs: 24 faster SMs" in out
