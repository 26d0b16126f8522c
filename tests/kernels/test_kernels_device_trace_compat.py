"""Device spec arithmetic, trace files, and the numpy >= 2.5 shim for numba-cuda."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
from kernels_env import HAS_GPU

from kernels.launching.device import detect_device, peak_dram_gbps
from kernels.tracing.trace import check_trace, summarize_trace
from sim.traces.trace import Trace, load_trace
from tests.patience import HANG_S

ROOT = pathlib.Path(__file__).resolve().parents[2]
H200_TRACE = ROOT / "tests" / "data" / "trace_h200.json"


def test_peak_bandwidth_from_clock_and_bus():
    # H200: 2 x 3.201 GHz x 6016 bit / 8 = 4,814.3 GB/s (datasheet: 4.8 TB/s)
    assert peak_dram_gbps(3_201_000, 6016) == pytest.approx(4814.304)
    # A100 80GB: 2 x 1.593 GHz x 5120 / 8 = 2,039 GB/s
    assert peak_dram_gbps(1_593_000, 5120) == pytest.approx(2039.04)


@pytest.mark.skipif(HAS_GPU, reason="no-GPU path")
def test_detect_device_without_gpu_says_why():
    spec, why = detect_device()
    assert spec is None and "no CUDA GPU" in why


@pytest.mark.gpu
def test_detect_device_on_gpu():
    spec, why = detect_device()
    assert spec is not None and spec.detected and why == ""
    assert spec.peak_dram_gbps > 100 and spec.sm_count > 0


def _trace(blocks_sm_start_end, spin=10.0, predicted=2, sm_count=2):
    a = np.array(blocks_sm_start_end, dtype=float)
    return Trace(source="recorded", gpu="test", block=a[:, 0].astype(int), sm=a[:, 1].astype(int),
                 slot=np.full(len(a), -1), start_us=a[:, 2], end_us=a[:, 3],
                 meta={"spin_us": spin, "sm_count": sm_count,
                       "predicted": {"blocks_per_sm": predicted}})


def test_trace_checks_and_summary():
    good = _trace([[0, 0, 0, 10], [1, 1, 0, 10], [2, 0, 1, 11], [3, 1, 10, 20]])
    assert check_trace(good) == []
    s = summarize_trace(good)
    assert s["blocks"] == 4 and s["sms_used"] == 2 and s["makespan_us"] == 20.0
    assert s["max_resident_per_sm"] == 2 and s["first_blocks_sm"] == [0, 1, 0, 1]
    crowded = _trace([[0, 0, 0, 10], [1, 0, 0, 10], [2, 0, 1, 11]])
    assert any("more blocks" in p for p in check_trace(crowded))
    short = _trace([[0, 0, 0, 2], [1, 1, 0, 10]])
    assert any("ended before" in p for p in check_trace(short))
    missing = _trace([[0, 0, 0, 10], [2, 1, 0, 10]])
    assert any("block ids" in p for p in check_trace(missing))
    outside = _trace([[0, 5, 0, 10]])
    assert any("SM ids" in p for p in check_trace(outside))


def test_recorded_h200_trace_is_consistent():
    if not H200_TRACE.exists():
        pytest.skip("tests/data/trace_h200.json not recorded yet (`main.py trace` makes it)")
    trace = load_trace(H200_TRACE)
    assert trace.source == "recorded" and "H200" in trace.gpu
    assert check_trace(trace) == []
    assert trace.meta.get("command")
    s = summarize_trace(trace)
    assert s["sms_used"] == trace.meta["sm_count"] == 132


SHIM_PROBE = """
import sys, numpy as np
sys.path.insert(0, {root!r})
np.__dict__.pop("row_stack", None)   # what numpy >= 2.5 looks like
if {shim}:
    from kernels.launching.compat import numba_cuda
    numba_cuda()
from numba import cuda, float32
def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]
try:
    cuda.compile_ptx(add, (float32[::1], float32[::1], float32[::1]), cc=(9, 0))
    print("COMPILED")
except Exception as exc:
    print(type(exc).__name__, exc)
"""


@pytest.mark.parametrize("shim", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_numpy_shim_lets_numba_cuda_compile_on_numpy_without_row_stack(shim):
    """Compiling to PTX needs no GPU: without the shim it dies on np.row_stack (as on the H200
    image's numpy 2.5.2); with it, it gets past that (here it may then lack NVRTC, which a
    machine with CUDA has)."""
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", SHIM_PROBE.format(root=str(ROOT), shim=shim)],
                         capture_output=True, text=True, env=env, timeout=HANG_S).stdout
    if shim:
        assert "row_stack" not in out and out.strip()
    else:
        assert "row_stack" in out
