"""benchmarks/dispatch_bisect.py and dispatch_score.py without a GPU: the PTX edits each bisect
variant makes, that the Triton variants build with the ptxas in the triton wheel, and scoring a
recorded set."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest


ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import dispatch_bisect as bisect  # noqa: E402
import dispatch_score as score  # noqa: E402

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


TOOLKIT = ("nvcc is not on PATH", "No such file or directory: 'ptxas'")  # variants needing CUDA


@pytest.fixture(scope="module")
def bisect_check():
    """`--check` compiles Triton's kernel for sm_90 (outside the interpreter the kernel tests run
    in) and assembles every PTX variant: Triton's with the wheel's ptxas, the CUDA C ones with
    the CUDA toolkit's nvcc and ptxas where they are installed."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dispatch_bisect.py"),
                           "--check"], capture_output=True, text=True, env=env, timeout=600)
    built = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("built")}
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    return done, built, failed


@pytest.mark.slow  # compiles and assembles a dozen cubins: ~20 s on 2 cores
def test_the_triton_variants_build_here(bisect_check):
    done, built, failed = bisect_check
    assert {"triton-cubin", "triton-ptx-sm90a", "triton-ptx-sm90", "triton-ptx-sm90a-noreqntid",
            "triton-ptx-sm90-noreqntid", "triton-ptx-sm90a-nodebug"} <= built, done.stdout[-2000:]
    others = [line for line in failed if not any(why in line for why in TOOLKIT)]
    assert not others, "\n".join(others) + done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="needs the CUDA toolkit's nvcc on PATH (a system CUDA install; no "
                    "pip wheel puts nvcc's driver program there)")
def test_the_cuda_variants_build_with_the_toolkit(bisect_check):
    done, _, failed = bisect_check
    assert done.returncode == 0 and not failed, done.stdout[-2000:] + done.stderr[-2000:]


def test_score_a_recorded_set(tmp_path, capsys):
    """benchmarks/dispatch_score.py on a bundle of recorded traces: the bar, both schedules."""
    from sim.traces.trace_bundle import load_bundle, write_bundle

    traces = load_bundle(ROOT / "tests" / "data" / "dispatch_h200")
    names = ["G-spin-w4-20us-2.2w", "B-sleep-w8-20us-3.3w"]
    write_bundle(tmp_path, [(n, "V", traces[n], {}) for n in names])
    assert score.main([str(tmp_path), "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "calibrated: 2 of 2 traces within the bar" in out
    assert "ideal: 1 of 2 traces within the bar" in out  # busy warps: the textbook is 41% off
    assert score.main([str(tmp_path / "missing")]) == 2
