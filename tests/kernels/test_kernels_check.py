"""Correctness runs on the CPU path, and that the comparison really catches wrong results."""

import numpy as np
import pytest
from kernels_env import HAS_GPU

from kernels.measure.check import format_table, run_checks
from kernels.declare.spec import DEFAULT_CHECK_SIZES as ARTICLE_SIZES
from kernels.measure.harness import compare
from kernels.declare.registry import KERNELS


def test_compare_catches_wrong_unwritten_and_nan():
    ref = np.linspace(-3, 3, 1001)
    out = ref.astype(np.float32)
    assert compare(out, ref).ok
    bad = out.copy()
    bad[500] += 1e-3  # one element off by a lot more than fp32 rounding
    assert not compare(bad, ref).ok
    unwritten = out.copy()
    unwritten[-1] = np.nan  # the poisoned value a kernel never overwrote
    acc = compare(unwritten, ref)
    assert not acc.ok and acc.unwritten == 1
    shifted = np.roll(out, 1)  # an indexing bug
    assert not compare(shifted, ref).ok
    assert not compare(out[:-1], ref).ok  # wrong length


def test_fp64_arithmetic_would_not_pass_as_fp32_rounding_error():
    """The tolerance is tight enough that fp16 arithmetic fails it (fp32 passes)."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(10_000), rng.standard_normal(10_000)
    ref = x + y
    assert compare((x.astype(np.float32) + y.astype(np.float32)), ref, rtol=1e-6, atol=1e-6).ok
    assert not compare((x.astype(np.float16) + y.astype(np.float16)), ref).ok


COMPILED = "add_relu_torch_compile"  # torch.compile: Inductor builds C++ on the CPU (g++), ~6 s
# matmul: test_matmul.py checks them through run_checks at a size the interpreter does in ~1 s
# (~15 s each at these sizes)
ELSEWHERE = {COMPILED} | {k.name for k in KERNELS if k.group == "matmul"}


def test_every_kernel_checks_ok_at_small_sizes():
    results = run_checks([k.name for k in KERNELS if k.name not in ELSEWHERE], sizes=[1, 1000])
    assert {r.kernel for r in results} == {k.name for k in KERNELS} - ELSEWHERE
    failed = [r for r in results if r.status not in ("OK", "SKIP")]
    assert not failed, format_table(failed)
    skipped = {r.kernel for r in results if r.status == "SKIP"}
    assert skipped == (set() if HAS_GPU else {"trace_triton"}), format_table(results)
    table = format_table(results)
    assert "add_numba_naive" in table and "lanes_numba" in table


@pytest.mark.slow
def test_torch_compile_checks_ok():
    # one size: each new size is another Inductor compile (dynamo specializes sizes 0 and 1)
    results = run_checks([COMPILED], sizes=[1000])
    assert [r.status for r in results] == ["OK"], format_table(results)


@pytest.mark.slow
def test_triton_at_the_article_sizes():
    """The article's sizes, including 1,048,583 (a partial last block), through the interpreter."""
    results = run_checks(["add_triton_tutorial", "add_triton", "add_relu_triton"], ARTICLE_SIZES)
    assert [r.elements for r in results[:4]] == list(ARTICLE_SIZES)
    assert all(r.status == "OK" for r in results), format_table(results)


@pytest.mark.slow
def test_simulator_sizes_are_capped_and_said():
    """On the simulator a big size is cut to the kernel's CPU cap, and the row says where it ran;
    a GPU runs the size asked for."""
    results = run_checks(["add_numba_naive"], [128, 1_048_583])
    sizes, where = ([128, 1_048_583], "gpu") if HAS_GPU else ([128, 4_099], "simulator")
    assert [r.elements for r in results] == sizes
    assert [r.where for r in results] == [where, where]
    assert all(r.status == "OK" for r in results), format_table(results)


def test_lanes_show_idle_lanes():
    from kernels.bodies.numba_kernels import warp_lanes
    from sim.rules.geometry import warp_lanes as sim_lanes

    lanes, _ = warp_lanes(250)
    assert lanes.shape == (8, 32)
    assert (lanes[:7] >= 0).all() and (lanes[7, :26] == np.arange(26)).all()
    assert (lanes[7, 26:] == -1).all()  # 6 idle lanes in the last warp, as the article says
    assert [int((w >= 0).sum()) for w in lanes] == sim_lanes(250)
