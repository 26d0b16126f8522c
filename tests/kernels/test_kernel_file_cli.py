"""`explain --kernel-file` / `--kernel` print the compiled registers (not 0, not a guess) for any
preset without its GPU; `check` and `bench` take `--kernel-file`; a broken kernel file is one
line and exit status 1, whatever is wrong with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import main
from kernels.declare.kernel_file import open_kernel_file
from kernels.declare.registry import get_kernel
from kernels.offline_compile.resources import launch_request
from kernels.declare.user_code import declared_launch
from sim.inputs.errors import UserError
from sim.rules.devices import preset, presets
from tests.broken_kernel_files import BROKEN, write_broken
from shared_compile import resources_once

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
FILES = ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py")
N = 1_000_000  # explain's default --elements


@pytest.fixture(scope="module")
def expected():
    """(file, cc) -> compiled resources, in one batch into the run's cache (test_examples.py asks
    for the same), which the CLI calls below then read instead of compiling 36 times."""
    ccs = sorted({preset(p).compute_capability for p in presets()})
    keys, requests = [], []
    for file in FILES:
        spec = open_kernel_file(EXAMPLES / file)[0]
        for cc in ccs:
            keys.append((file, cc))
            requests.append(launch_request(spec, N, None, cc)[0])
    return dict(zip(keys, resources_once(requests)))


def _explain(capsys, *args) -> tuple[int, str, str]:
    code = main.main(["explain", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _two_targets() -> list[str]:
    """A preset of the oldest and of the newest compute capability: each `explain --kernel-file`
    starts the file's own process (~0.6 CPU-s with the compiles cached), and two targets as far
    apart as they come show the CLI hands the host the target it was asked for; the registers
    of every preset are checked in process below (`declared_launch`)."""
    first = {}
    for gpu in presets():
        first.setdefault(preset(gpu).compute_capability, gpu)
    ccs = sorted(first)
    return [first[ccs[0]], first[ccs[-1]]]


@pytest.mark.slow  # a process of the file's per target asked
@pytest.mark.parametrize("file", FILES)
def test_explain_kernel_file_prints_compiled_registers_for_every_preset(file, expected, capsys):
    for gpu in _two_targets():
        spec = preset(gpu)
        want = expected[(file, spec.compute_capability)]
        code, out, err = _explain(capsys, "--kernel-file", str(EXAMPLES / file), "--gpu", gpu,
                                  "--json")
        assert code == 0, err
        kernel = json.loads(out)["kernel"]
        c = kernel["compiled"]
        assert c["regs_per_thread"] == want.regs_per_thread > 0, gpu
        assert c["target"] == f"sm_{spec.compute_capability[0]}{spec.compute_capability[1]}"
        assert c["compiler"] == want.compiler and c["stack_bytes"] == want.stack_bytes
        assert json.loads(out)["occupancy"]["regs_per_thread"] == want.regs_per_thread
        assert f"registers from {want.compiler} for {c['target']}" in kernel["note"]
    # every preset, the others too: the facts the file's process computes for explain
    declared = open_kernel_file(EXAMPLES / file)[0]
    for gpu in presets():
        spec = preset(gpu)
        want = expected[(file, spec.compute_capability)]
        c = declared_launch(declared, N, None, None, spec.sm_count, spec.compute_capability)[
            "compiled"]
        assert (c["regs_per_thread"], c["stack_bytes"]) == (want.regs_per_thread,
                                                            want.stack_bytes), gpu
        assert c["target"] == f"sm_{spec.compute_capability[0]}{spec.compute_capability[1]}"


@pytest.mark.slow
def test_explain_prints_the_compiled_resources_table(expected, capsys):
    want = expected[("softmax_triton.py", (8, 0))]
    code, out, _ = _explain(capsys, "--kernel-file", str(EXAMPLES / "softmax_triton.py"),
                            "--gpu", "A100 80GB")
    assert code == 0
    assert "Compiled for A100 80GB (sm_80), without the GPU" in out
    assert re.search(rf"Registers per thread\s+{want.regs_per_thread}\s+used below", out)
    assert re.search(r"Spills \(stack\)\s+none", out)
    assert f"; registers from {want.compiler} for sm_80)" in out  # the launch's note
    assert f"{want.regs_per_thread} registers/thread" in out


@pytest.mark.slow
def test_explain_builtin_kernel_uses_its_compiled_registers(capsys):
    import triton

    code, out, _ = _explain(capsys, "--kernel", "add_triton", "--gpu", "T4", "--block", "4096",
                            "--json")
    assert code == 0
    kernel = json.loads(out)["kernel"]
    assert kernel["regs_per_thread"] > 0 and kernel["compiled"]["target"] == "sm_75"
    assert kernel["note"].endswith(f"registers from triton {triton.__version__} for sm_75")
    # --regs and --smem given: nothing is compiled, the user's numbers count
    code, out, _ = _explain(capsys, "--kernel", "add_triton", "--regs", "40", "--smem", "0",
                            "--json")
    assert json.loads(out)["kernel"]["compiled"] is None
    assert json.loads(out)["occupancy"]["regs_per_thread"] == 40


@pytest.mark.slow
def test_one_of_several_kernels_is_named(tmp_path, capsys):
    two = tmp_path / "two.py"
    two.write_text((EXAMPLES / "softmax_triton.py").read_text(encoding="utf-8").replace(
        "WARPSCOPE = dict(", "_ONE = dict(") + "\nWARPSCOPE = [_ONE, dict(_ONE, name='other')]\n",
        encoding="utf-8")
    code, _, err = _explain(capsys, "--kernel-file", str(two))
    assert code == 2 and "declares 2 kernels (softmax_kernel, other)" in err
    code, out, _ = _explain(capsys, "--kernel-file", f"{two}:other", "--gpu", "H200")
    assert code == 0 and "Launch: other:" in out


@pytest.mark.slow
def test_a_broken_kernel_file_is_one_line_and_status_1(tmp_path, capsys):
    for name, path in write_broken(tmp_path).items():
        code, out, err = _explain(capsys, "--kernel-file", str(path), "--gpu", "T4")
        assert code == 1, name  # the file failed; 2 is for a mistyped option
        [line] = err.strip().splitlines()
        assert line.startswith("warpscope: error: ") and BROKEN[name][1] in line, line
        assert not out


@pytest.mark.slow
def test_check_and_bench_take_a_kernel_file(tmp_path, capsys):
    path = tmp_path / "scale.py"
    path.write_text('''import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


WARPSCOPE = dict(kernel=scale_kernel, inputs=1, block=dict(BLOCK_SIZE=256, num_warps=4),
                 reference=lambda x: 2.0 * np.asarray(x, np.float64),
                 peer=lambda torch, x: 2.0 * x, check_sizes=[1, 300])
''', encoding="utf-8")
    assert main.main(["check", "--kernel-file", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"scale_kernel\s+triton\s+300\s+OK", out)
    assert re.search(r"scale_kernel_torch\s+torch\s+300\s+OK", out)
    with pytest.raises(UserError):  # run in a kernel host: nothing of the file came here
        get_kernel("scale_kernel")
    code = main.main(["bench", "--kernel-file", str(path), "--sizes", "300", "--reps", "1",
                      "--cpu", "--out", str(tmp_path / "b.json")])
    assert code == 0
    kernels = {m["kernel"] for m in json.loads((tmp_path / "b.json").read_text())["measurements"]}
    assert kernels == {"scale_kernel", "scale_kernel_torch"}
    capsys.readouterr()
    assert main.main(["bench", "--out", str(tmp_path / "c.json")]) == 2
    assert "give --kernel NAME[,NAME] or --kernel-file FILE.py" in capsys.readouterr().err


TWO_DECLARATIONS = '''import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


SCALE = dict(kernel=scale_kernel, inputs=1, block=dict(BLOCK_SIZE=256, num_warps=4),
             reference=lambda x: 2.0 * np.asarray(x, np.float64), check_sizes=[300])
WARPSCOPE = [SCALE, dict(kernel=scale_kernel, name="gridless", inputs=1, block=dict(num_warps=4))]
'''


@pytest.mark.slow
def test_check_and_trace_take_the_kernel_a_file_name_names(tmp_path, capsys, monkeypatch):
    """FILE.py:NAME opens that declaration only: another in the file that declares no grid
    (refused on its own) does not stop the one named."""
    import kernels.declare.registry
    from kernels.declare.declarations import Limits
    from kernels.tracing import trace_file

    path = tmp_path / "two.py"
    path.write_text(TWO_DECLARATIONS, encoding="utf-8")
    assert main.main(["check", "--kernel-file", str(path)]) == 1  # the whole file: refused
    assert "gridless: give 'grid'" in capsys.readouterr().err
    assert main.main(["check", "--kernel-file", f"{path}:scale_kernel"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"scale_kernel\s+triton\s+300\s+OK", out) and "gridless" not in out

    class Ctx:
        def progress(self, *_):
            pass

    traced = []  # trace_job as the kernel host runs it, up to the GPU
    monkeypatch.setattr(trace_file, "record_file_trace", lambda spec, *a: traced.append(spec.name))
    monkeypatch.setattr(kernels.declare.registry, "add_kernels", lambda specs: None)
    trace_file.trace_job(str(path), "scale_kernel", 4096, None, None, "", Limits(), Ctx())
    assert traced == ["scale_kernel"]
