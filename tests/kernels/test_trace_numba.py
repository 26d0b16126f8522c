"""`trace --kernel-file` on a Numba kernel, without a GPU: the stamped copy's source, that the
example stencil's copy compiles for sm_90 with the stamps as inline PTX (no calls, nothing to
link), the refusals (a torch kernel, --warps, numba-cuda's simulator: NeedsGpu, exit 2), and the
trace file it writes (from made-up stamps)."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

from kernels.tracing.instrument import PREFIX, STAMPS, instrumented_source
from sim.inputs.errors import NeedsGpu, UserError

ROOT = pathlib.Path(__file__).resolve().parents[2]
STENCIL = str(ROOT / "resources" / "examples" / "stencil_numba.py")

EARLY = """
@cuda.jit
def k(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    out[i] = x[i]
"""


def _calls(node, name: str) -> int:
    return sum(isinstance(n, ast.Call) and getattr(n.func, "id", "") == PREFIX + name
               for n in ast.walk(node))


def test_the_numba_copy_takes_the_stamps_first_and_stores_a_row_at_every_exit():
    src, name = instrumented_source(EARLY, probe="numba")
    fn = ast.parse(src).body[0]
    assert name == fn.name == "k" + PREFIX + "traced" and not fn.decorator_list
    assert [a.arg for a in fn.args.args] == [STAMPS, "x", "out"]
    assert ast.unparse(fn.body[0]) == f"{PREFIX}start = {PREFIX}globaltimer()"  # entry: the timer
    early = next(n for n in fn.body if isinstance(n, ast.If))
    assert _calls(early, "stamp_exit") == 1 and isinstance(early.body[-1], ast.Return)
    assert _calls(fn, "stamp_exit") == 2  # and the end
    assert ast.unparse(fn.body[-1]) == (f"{PREFIX}stamp_exit({STAMPS}, {PREFIX}start, "
                                        f"{PREFIX}grid_dims, {PREFIX}block_dims)")


TRAILING_IF = EARLY.replace("    out[i] = x[i]\n", """    if i == 0:
        out[i] = 0
    elif i == 1:
        out[i] = 1
    else:
        for j in range(2):
            out[i] = x[i]
""")


def test_the_default_pushes_the_end_stamp_into_each_branch_of_a_trailing_if():
    """Each path keeps its own exit (the stencil's interior path: 69 SASS instructions, 79 with
    one exit after the merge, 67 plain); "numba-exit-dims" keeps one exit after the if."""
    fn = ast.parse(instrumented_source(TRAILING_IF, probe="numba")[0]).body[0]
    last = fn.body[-1]
    assert isinstance(last, ast.If) and _calls(last.body[-1], "stamp_exit") == 1
    inner = last.orelse[0]
    assert _calls(inner.body[-1], "stamp_exit") == 1 and _calls(inner.orelse[-1], "stamp_exit") == 1
    assert isinstance(inner.orelse[0], ast.For) and _calls(fn, "stamp_exit") == 4
    merged = ast.parse(instrumented_source(TRAILING_IF, probe="numba-exit-dims")[0]).body[0]
    assert _calls(merged, "stamp_exit") == 2 and _calls(merged.body[-1], "stamp_exit") == 1


def test_run_js_copy_stays_selectable_to_measure_against():
    """probe "numba-row-at-exit": thread (0, 0, 0) finds its row and the SM at each exit."""
    src, _ = instrumented_source(EARLY, probe="numba-row-at-exit")
    fn = ast.parse(src).body[0]
    assert ast.unparse(fn.body[0]) == f"{PREFIX}start = {PREFIX}globaltimer()"
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Subscript)
              and getattr(n.value, "id", "") == STAMPS and isinstance(n.ctx, ast.Store)]
    assert len(stores) == 6 and "threadIdx.x == 0" in ast.unparse(fn.body[-1].test)


PTX = """
import sys
sys.path.insert(0, {root!r})
from kernels.launching.compat import numba_cuda
from kernels.tracing.numba_stamps import instrument_numba
from kernels.declare.kernel_file import open_kernel_file
from numba import types
cuda = numba_cuda()
spec = open_kernel_file({stencil!r}, cpu_fallback=False)[0]
sig = (types.int64[:, ::1], types.float32[:, ::1], types.float32[:, ::1])
for probe, dims in (("numba", (2, 2)), ("numba-exit", (2, 2)), ("numba-row-at-exit", (3, 3))):
    ptx, _ = cuda.compile(instrument_numba(spec.kernel, probe, dims).py_func, sig, cc=(9, 0),
                          output="ptx")
    print(ptx.count("%globaltimer"), ptx.count("%smid"), ptx.count("call"),
          ptx.count("st.global.u64") + ptx.count("st.u64"), ptx.count("%ctaid.z"))
"""


@pytest.mark.slow
def test_the_stencils_copy_compiles_for_sm90_with_inline_reads():
    """Through NVVM (not the simulator): the timer read at entry and at each exit, the SM at each
    exit, no call (linked readers were calls), three 64-bit stores at each exit. The
    default: exits at the early return and in both branches of the trailing if, no %ctaid.z for a
    2D grid; "numba-exit" (all axes) and the row-at-exit design: the early return and the end."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", PTX.format(root=str(ROOT), stencil=STENCIL)],
                          capture_output=True, text=True, env=env, timeout=300)
    if "DynamicLibNotFoundError" in done.stderr:
        pytest.skip("numba-cuda finds no NVVM here")
    assert done.returncode == 0, done.stderr[-3000:]
    assert [[int(v) for v in line.split()] for line in done.stdout.splitlines()] == [
        [4, 3, 0, 9, 0], [3, 2, 0, 6, 2], [3, 2, 0, 6, 2]]


@pytest.fixture(scope="module")
def stencil():
    from kernels.declare.kernel_file import open_kernel_file

    return open_kernel_file(STENCIL)[0]  # our own example file, opened here


def test_numba_cudas_simulator_needs_a_gpu_exit_2(monkeypatch):
    """A GPU, but Numba only in its simulator (no PTX, so no %smid): one line, exit 2."""
    from kernels.launching import backends, device
    from kernels.tracing.trace import require_gpu

    sim = backends.Availability("numba", True, False, "NUMBA_ENABLE_CUDASIM=1: the simulator")
    monkeypatch.setattr(backends, "gpu_status", lambda: (True, ""))
    monkeypatch.setattr(backends, "available", lambda: {"numba": sim})
    monkeypatch.setattr(device, "detect_device", lambda: pytest.fail("looked for a device"))
    with pytest.raises(NeedsGpu, match="needs numba-cuda on the GPU: NUMBA_ENABLE_CUDASIM") as err:
        require_gpu("numba")
    assert err.value.exit_status == 2 and "\n" not in str(err.value)


def test_what_trace_kernel_file_refuses_before_the_gpu(stencil):
    from kernels.declare.registry import get_kernel
    from kernels.tracing.trace_file import record_file_trace

    with pytest.raises(UserError, match="--warps: stencil_kernel is a Numba kernel"):
        record_file_trace(stencil, 1 << 12, num_warps=4)
    torch_kernels = [n for n in ("add_torch", "copy_torch") if get_kernel(n).backend == "torch"]
    with pytest.raises(UserError, match="stamps Triton and Numba kernels"):
        record_file_trace(get_kernel(torch_kernels[0]), 1 << 12)


@pytest.mark.skipif(__import__("kernels_env").HAS_GPU, reason="checks the no-GPU path")
def test_without_a_gpu_the_numba_recorder_is_needs_gpu(stencil):
    from kernels.tracing.trace_file import record_file_trace

    with pytest.raises(NeedsGpu, match="needs a GPU") as err:
        record_file_trace(stencil, 1 << 12)
    assert err.value.exit_status == 2


def test_instrument_numba_refuses_what_it_cannot_recompile():
    from kernels.tracing.numba_stamps import instrument_numba

    with pytest.raises(UserError, match="only a @cuda.jit kernel can be traced, got int"):
        instrument_numba(3)
    y = 1

    def closure(x):
        x[0] = y

    class Dispatcher:
        py_func = closure

    with pytest.raises(UserError, match="variables of an enclosing function \\(y\\)"):
        instrument_numba(Dispatcher())


def test_a_numba_trace_file_says_what_compare_needs(stencil, tmp_path):
    import torch

    from kernels.launching.launch import Resources
    from kernels.tracing.trace_file import _trace
    from sim.rules.devices import preset
    from sim.traces.compare import launch_of_trace
    from sim.traces.trace import load_trace, write_trace

    h200 = preset("H200")
    shape = stencil.launch_shape(1 << 12, None, h200.sm_count)  # 64 x 64: 2 x 8 blocks of 32 x 8
    rows = [[b % 132, 1000 + 10 * b, 1500 + 10 * b] for b in range(shape.grid_blocks)]
    trace = _trace(stencil, h200, shape, Resources(29, 0, None), Resources(28, 0, None),
                   torch.tensor(rows, dtype=torch.int64), 1 << 12, 8 << 12, "warpscope trace",
                   {"untraced_median_us": 8.8, "traced_median_us": 9.3, "overhead_percent": 5.7})
    write_trace(tmp_path / "t.json", trace)
    back = load_trace(tmp_path / "t.json")
    meta = back.meta
    assert meta["launched_by"] == "numba-cuda" and "numba_stamps.py" in meta["instrument"]
    assert meta["num_warps"] == 8 and meta["threads_per_block"] == 256
    assert meta["block_params"] == {"threads": [32, 8]} and meta["grid_shape"] == [2, 8]
    launch = launch_of_trace(back, h200)
    assert (launch.blocks, launch.threads_per_block) == (16, 256)
