"""benchmarks/dispatch_bisect.py and dispatch_validate.py without a GPU: the PTX edits each bisect
variant makes, that the Triton variants build with the ptxas in the triton wheel, and that the
validation set's commands are ones `main.py trace` takes and its configurations are new."""

import argparse
import os
import pathlib
import subprocess
import sys

import pytest

from kernels import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import dispatch_bisect as bisect  # noqa: E402
import dispatch_validate as validate  # noqa: E402

PTX = """.version 8.7
.target sm_90a
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0
)
.reqntid 128
{
\t.loc\t1 84 0
\tret;
}
\t.file\t1 "x.py"
\t.section\t.debug_abbrev
\t{
.b8 1
\t}
"""


def test_ptx_edits():
    assert ".target sm_90\n" in bisect.retarget(PTX, "sm_90")
    assert ".reqntid" not in bisect.without_reqntid(PTX)
    added = bisect.with_reqntid(bisect.without_reqntid(PTX), 128)
    assert added.count(".reqntid 128") == 1
    assert added.index(".reqntid") > added.index(")") and added.index(".reqntid") < added.index("{")
    bare = bisect.without_debug(PTX)
    assert ".loc" not in bare and ".section" not in bare and ".file" not in bare
    assert "ret;" in bare and ".reqntid 128" in bare
    assert bisect.same_version(PTX.replace("8.7", "9.0"), PTX).startswith(".version 8.7")


@pytest.mark.slow  # compiles and assembles a dozen cubins: ~20 s on 2 cores
def test_the_triton_variants_build_here():
    """`--check` compiles Triton's kernel for sm_90 (outside the interpreter the kernel tests run
    in) and assembles every Triton PTX variant with the wheel's ptxas; CUDA C ones need nvcc."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dispatch_bisect.py"),
                           "--check"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    built = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("built")}
    assert {"triton-cubin", "triton-ptx-sm90a", "triton-ptx-sm90", "triton-ptx-sm90a-noreqntid",
            "triton-ptx-sm90-noreqntid", "triton-ptx-sm90a-nodebug"} <= built


def test_the_validation_set_is_new_and_recordable():
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    fitted_us, fitted_waves = {2, 5, 10, 20, 50, 100, 200}, {0.5, 1.0, 2.2, 4.5, 8.5}
    for wait, warps, us, waves in validate.PLAN:
        assert us not in fitted_us and waves not in fitted_waves
        args = parser.parse_args(["trace", "--wait", wait, "--warps", str(warps), "--spin-us",
                                  f"{us:g}", "--waves", f"{waves:g}", "--out", "t.json"])
        assert args.handler is cli.cmd_trace
    assert {w for _, w, _, _ in validate.PLAN} == {1, 2, 4, 8, 16}
    assert max(waves for *_, waves in validate.PLAN) == 6.0


@pytest.mark.parametrize("argv", [["record"], ["score"]])
def test_validate_needs_its_folder(argv):
    with pytest.raises(SystemExit):
        validate.main(argv)
