"""`trace --kernel-file` without a GPU: the stamped copy's source (kernels/tracing/instrument.py), that
the copies of the example kernels and of built-ins compile for sm_90 with their stamps intact, and
the one-line refusals (no GPU: exit 2, before the user's file runs)."""

import argparse
import ast
import os
import pathlib
import subprocess
import sys

import pytest
from kernels_env import HAS_GPU

from kernels import cli
from kernels.tracing.instrument import PREFIX, STAMPS, instrumented_source
from sim.inputs.errors import UserError

ROOT = pathlib.Path(__file__).resolve().parents[2]

EARLY_RETURN = '''
@triton.jit(do_not_specialize=["n"])
def k(x_ptr, n, BLOCK: tl.constexpr = 64):
    """Doc."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    tl.store(x_ptr + pid, 1.0)
'''
NESTED = "def k(x):\n    def helper():\n        return 1\n    x += 1\n"


def _stamp_calls(node) -> int:
    return sum(isinstance(n, ast.Call) and getattr(n.func, "id", "") == PREFIX + "store_stamp"
               for n in ast.walk(node))


def test_the_copy_stamps_entry_every_return_and_the_end():
    src, name = instrumented_source(EARLY_RETURN)
    fn = ast.parse(src).body[0]
    assert name == fn.name == "k" + PREFIX + "traced" and not fn.decorator_list
    assert [a.arg for a in fn.args.args] == [STAMPS, "x_ptr", "n", "BLOCK"]
    assert len(fn.args.defaults) == 1  # BLOCK keeps its default
    assert isinstance(fn.body[0].value, ast.Constant)  # the docstring stays first
    assert ast.unparse(fn.body[2]).startswith(PREFIX + "start = ")  # then the entry stamp
    early = next(n for n in fn.body if isinstance(n, ast.If))
    assert _stamp_calls(early) == 1 and isinstance(early.body[-1], ast.Return)
    assert _stamp_calls(fn.body[-1]) == 1  # and the kernel's end
    assert _stamp_calls(fn) == 2


def test_a_function_inside_the_kernel_keeps_its_own_returns():
    fn = ast.parse(instrumented_source(NESTED)[0]).body[0]
    helper = next(n for n in fn.body if isinstance(n, ast.FunctionDef))
    assert _stamp_calls(helper) == 0 and _stamp_calls(fn) == 1


def test_a_kernel_ending_in_return_is_stamped_once_there():
    src, _ = instrumented_source("def k(x):\n    x += 1\n    return\n")
    fn = ast.parse(src).body[0]
    assert _stamp_calls(fn) == 1 and isinstance(fn.body[-1], ast.Return)


@pytest.mark.parametrize("src,message", [
    (f"def k(x):\n    {PREFIX}pid = 1\n", "uses the name"),
    ("def k(*xs):\n    pass\n", "cannot be traced"),
    ("x = 1\n", "not one function"),
    ("def k(:\n", "cannot read"),
])
def test_what_cannot_take_the_stamps_is_one_line(src, message):
    with pytest.raises(UserError, match=message) as err:
        instrumented_source(src)
    assert "\n" not in str(err.value)


COMPILE = """
import sys
sys.path.insert(0, {root!r})
from kernels.tracing.instrument import compile_instrumented, instrument
from kernels.declare.kernel_file import open_kernel_file
from kernels.declare.registry import get_kernel
from kernels.offline_compile.toolchain import compile_triton
specs = [s for f in ("softmax_triton.py", "layernorm_triton.py")
         for s in open_kernel_file({root!r} + "/resources/examples/" + f, cpu_fallback=False)
         if s.backend == "triton"]
for s in specs + [get_kernel("add_triton"), get_kernel("copy_triton")]:
    r = compile_instrumented(s, 1 << 16)
    print(s.name, r["regs_per_thread"], r["untraced"]["regs_per_thread"])
sys.path.insert(0, {tmp!r})
from early_kernel import k
ck = compile_triton(instrument(k), ("*i64:16", "*fp32:16", "i32"), {{}}, 4, 3, (9, 0))
print("early", ck["regs_per_thread"], 0)
"""


@pytest.mark.slow
def test_the_stamped_copies_compile_for_sm90(tmp_path):
    """Two example kernel files and two built-ins, and a kernel with an early return, through
    the real compiler (not the interpreter) for sm_90, no GPU."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    (tmp_path / "early_kernel.py").write_text("import triton\nimport triton.language as tl\n"
                                              + EARLY_RETURN)  # triton.jit reads it from a file
    script = tmp_path / "compile.py"
    script.write_text(COMPILE.format(root=str(ROOT), tmp=str(tmp_path)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {ln.split()[0]: [int(v) for v in ln.split()[1:]] for ln in done.stdout.splitlines()}
    assert set(rows) == {"softmax_kernel", "layer_norm_fwd_kernel", "add_triton", "copy_triton",
                         "early"}
    for name, (traced, plain) in rows.items():
        assert traced > 0 and (name == "early" or abs(traced - plain) <= 16), (name, rows)


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


MARKER_FILES = {"triton": """
import pathlib, triton, triton.language as tl
pathlib.Path({marker!r}).write_text("ran")
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK_SIZE), tl.load(x_ptr + tl.arange(0, BLOCK_SIZE)))
WARPSCOPE = dict(kernel=k, inputs=1, block=dict(BLOCK_SIZE=64))
""", "numba": """
import pathlib
from numba import cuda
pathlib.Path({marker!r}).write_text("ran")
@cuda.jit
def k(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]
WARPSCOPE = dict(kernel=k, inputs=1, block=dict(threads=64))
"""}


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path")
@pytest.mark.parametrize("backend", sorted(MARKER_FILES))
def test_without_a_gpu_it_says_so_in_one_line_before_the_file_runs(tmp_path, capsys, backend):
    """Exit 2: a precondition the user can see, like a usage error (docs/SETUP.md)."""
    import main

    marker = tmp_path / "ran.txt"
    kfile = tmp_path / "mine.py"
    kfile.write_text(MARKER_FILES[backend].format(marker=str(marker)))
    code = main.main(["trace", "--kernel-file", str(kfile), "--elements", "2^20",
                      "--out", str(tmp_path / "t.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "needs a GPU" in err and "\n" not in err
    assert not marker.exists() and not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("argv,message", [
    (["--kernel", "add"], "--kernel: not with --kernel-file"),
    (["--spin-us", "20", "--elements", "2^20"], "--spin-us: not with --kernel-file"),
    ([], "needs --elements"),
    (["--elements", "lots"], "is not a number"),
])
def test_bad_values_with_a_kernel_file_are_one_line(tmp_path, argv, message):
    kfile = tmp_path / "mine.py"
    kfile.write_text("raise SystemExit('must not run')\n")
    args = _parse("trace", "--kernel-file", str(kfile), *argv, "--out", str(tmp_path / "t.json"))
    with pytest.raises(UserError, match=message) as err:
        args.handler(args)
    assert "\n" not in str(err.value)


def test_the_proton_probe_wraps_the_program_in_one_scope_and_adds_no_argument():
    src, _ = instrumented_source(EARLY_RETURN, probe="proton")
    fn = ast.parse(src).body[0]
    assert [a.arg for a in fn.args.args] == ["x_ptr", "n", "BLOCK"]
    calls = [ast.unparse(n) for n in ast.walk(fn) if isinstance(n, ast.Call)
             and ast.unparse(n.func).startswith(PREFIX + "pl.")]
    assert sorted(calls) == [f"{PREFIX}pl.enter_scope('program')",
                             f"{PREFIX}pl.exit_scope('program')",
                             f"{PREFIX}pl.exit_scope('program')"]  # the early return and the end


TWO_KERNELS = """
import triton, triton.language as tl
@triton.jit
def first(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK_SIZE), tl.load(x_ptr + tl.arange(0, BLOCK_SIZE)))
@triton.jit
def second(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK_SIZE), tl.load(x_ptr + tl.arange(0, BLOCK_SIZE)))
WARPSCOPE = [dict(kernel=first, inputs=1, block=dict(BLOCK_SIZE=64)),
             dict(kernel=second, inputs=1, block=dict(BLOCK_SIZE=64))]
"""


@pytest.mark.slow
def test_the_file_is_opened_in_a_kernel_host_and_its_kernel_picked_there(tmp_path):
    """The choice among a file's kernels is made in the child process that runs the file (two
    kernels and no name: one line). One host start, about 15 s here: the real child process."""
    from kernels.tracing.trace_file import trace_kernel_file

    kfile = tmp_path / "two.py"
    kfile.write_text(TWO_KERNELS)
    with pytest.raises(UserError, match=r"declares 2 kernels to launch \(first, second\)") as err:
        trace_kernel_file(str(kfile), 1 << 10)
    assert "\n" not in str(err.value)


def test_a_kernel_file_trace_says_what_compare_needs_and_what_the_stamps_cost(tmp_path):
    """The file `trace --kernel-file` writes (from made-up stamps: recording needs a GPU) loads
    as a trace, names its launch for `compare`, and carries the command and the overhead."""
    import torch

    from kernels.launching.launch import Resources
    from kernels.declare.registry import get_kernel
    from kernels.tracing.trace_file import _trace
    from sim.traces.compare import launch_of_trace
    from sim.rules.devices import preset
    from sim.traces.trace import load_trace, write_trace

    h200, spec = preset("H200"), get_kernel("add_triton")
    shape = spec.launch_shape(1 << 12, None, h200.sm_count)
    rows = [[b % 132, 1000 + 10 * b, 1800 + 10 * b] for b in range(shape.grid_blocks)]
    timing = {"untraced_median_us": 8.0, "traced_median_us": 8.2, "overhead_percent": 2.5}
    trace = _trace(spec, h200, shape, Resources(30, 0, 0), Resources(26, 0, 0),
                   torch.tensor(rows, dtype=torch.int64), 1 << 12, 3 * 4 * (1 << 12),
                   "warpscope trace --kernel-file f.py --elements 2^12 --out t.json", timing)
    write_trace(tmp_path / "t.json", trace)
    back = load_trace(tmp_path / "t.json")
    meta = back.meta
    assert meta["command"].startswith("warpscope trace --kernel-file")
    assert (meta["regs_per_thread"], meta["untraced_regs_per_thread"]) == (30, 26)
    assert meta["overhead_percent"] == 2.5 and meta["wait"] is None
    launch = launch_of_trace(back, h200)
    assert (launch.blocks, launch.threads_per_block, launch.wait) == (4, 128, "memory")
    assert back.end_us.max() == pytest.approx(0.83)  # 1800 + 30 ns after the first start
    # the declared chain travels in the trace, so compare runs no kernel file to find it
    assert meta["chain"] == {"passes": 1, "reductions": 0}
    from dataclasses import replace
    chained = _trace(replace(spec, passes=3, reductions=2), h200, shape, Resources(30, 0, 0),
                     Resources(26, 0, 0), torch.tensor(rows, dtype=torch.int64), 1 << 12,
                     3 * 4 * (1 << 12), "warpscope trace --kernel-file f.py", timing)
    assert chained.meta["chain"] == {"passes": 3, "reductions": 2}
