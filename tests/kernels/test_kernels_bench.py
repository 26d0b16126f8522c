"""Sweeps on the CPU path: labelled as not GPU timings, progress, cancel, no GPU -> clear error."""

import pytest
from kernels_env import HAS_GPU

from kernels.measure.bench import sweep
from sim.inputs.errors import UserError

cpu_only = pytest.mark.skipif(HAS_GPU, reason="checks the CPU path's labels; a GPU is present")


@pytest.mark.slow
@cpu_only
def test_cpu_sweep_is_labelled_and_complete():
    seen = []
    result = sweep(["add_triton", "add_torch", "add_numba"], [300, 1000], [128, 256], reps=2,
                   allow_cpu=True, on_progress=lambda d, t, label: seen.append((d, t)))
    # triton and numba sweep both blocks, torch ignores them: (2 + 1 + 2) x 2 sizes
    assert len(result.measurements) == 10 and not result.cancelled
    assert seen[-1] == (10, 10) and seen[0] == (0, 10)
    for m in result.measurements:
        assert m.is_gpu_timing is False
        assert "NOT a GPU timing" in m.method
        assert m.bytes_moved == 12 * m.elements
        assert m.bandwidth_gbps == pytest.approx(m.bytes_moved / (m.median_ms * 1e-3) / 1e9)
        assert m.p20_ms <= m.median_ms <= m.p80_ms
        assert m.bandwidth_p20_gbps <= m.bandwidth_gbps <= m.bandwidth_p80_gbps
    assert result.copy_ceiling_gbps is None and result.peak_dram_gbps is None
    blocks = {(m.kernel, m.block_size) for m in result.measurements}
    assert ("add_triton", 128) in blocks and ("add_torch", None) in blocks


@cpu_only
def test_cancel_returns_what_was_measured():
    calls = iter(range(100))
    result = sweep(["add_torch"], [10, 20, 30], reps=1, allow_cpu=True,
                   should_cancel=lambda: next(calls) >= 1)
    assert result.cancelled and len(result.measurements) == 1


@cpu_only
def test_without_gpu_bench_says_why():
    with pytest.raises(UserError, match="no GPU to time on"):
        sweep(["add_triton"], [1024])


def test_bad_requests():
    with pytest.raises(UserError, match="not a kernel with a throughput"):
        sweep(["trace_triton"], [1024], allow_cpu=True)
    with pytest.raises(UserError, match="element count"):
        sweep(["add_torch"], [0], allow_cpu=True)
    with pytest.raises(UserError, match="BLOCK_SIZE must be a power of two"):
        sweep(["add_triton"], [1024], [1000], allow_cpu=True)
    with pytest.raises(UserError, match="threads per block"):
        sweep(["add_numba"], [1024], [2048], allow_cpu=True)


@pytest.mark.parametrize("kernel,blocks,warps,needle", [
    ("add_numba_naive", [2000], None, "1..1024"),
    ("add_triton", [33], None, "power of two"),
    ("add_triton", None, 3, "num_warps"),
])
def test_a_kernel_no_block_size_suits_is_refused_before_anything_is_measured(kernel, blocks, warps,
                                                                             needle):
    calls = []
    with pytest.raises(UserError, match=needle):
        sweep([kernel], [1000], blocks, num_warps=warps, allow_cpu=True,
              on_progress=lambda *a: calls.append(a))
    assert calls == []


def test_each_block_size_goes_to_the_kernels_it_suits_and_the_rest_is_named():
    """bench --block 32,64,96 over Numba and Triton kernels together: 96 is a thread count for
    Numba but no power of two for Triton's BLOCK_SIZE; the sweep measures what suits and says
    what it skipped (it used to fail whole on 96)."""
    from kernels.measure.bench import _points
    from kernels.declare.registry import get_kernel

    kernels = [get_kernel("add_numba_naive"), get_kernel("add_triton"), get_kernel("add_torch")]
    points, skipped = _points(kernels, [4096], [32, 64, 96])
    chosen = {(s.name, b) for s, _, b in points}
    assert chosen == {("add_numba_naive", 32), ("add_numba_naive", 64), ("add_numba_naive", 96),
                      ("add_triton", 32), ("add_triton", 64), ("add_torch", None)}
    assert skipped == ["add_triton block 96: Triton BLOCK_SIZE must be a power of two up to "
                       "131,072, got 96"]


def test_bench_prints_what_it_skipped():
    """The command line says it too, under the table, not only in the results file."""
    from types import SimpleNamespace

    from kernels.cli import format_measurements

    result = SimpleNamespace(measurements=[], copy_ceiling_gbps=None, peak_dram_gbps=None,
                             notes=["skipped add_triton block 96: Triton BLOCK_SIZE must be a "
                                    "power of two up to 131,072, got 96"])
    assert "note: skipped add_triton block 96" in format_measurements(result).splitlines()[-1]
