"""Forcing occupancy with dynamic shared memory (kernels/measure/occupancy_probe.py) and the calibration
kernels (kernels/bodies/latency_kernels.py): the padding against sim.rules.occupancy for every target, the
refusals, and the launches in numba-cuda's simulator."""

import numpy as np
import pytest
import torch
from kernels_env import HAS_GPU

from kernels.measure.occupancy_probe import (
    dynamic_smem_for,
    loads_before_first_store,
    natural_occupancy,
    padded_launch,
    padding_plan,
)
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy

GPUS = [preset(n) for n in ("H200", "A100 80GB", "T4", "RTX 4090")]


@pytest.mark.parametrize("gpu", GPUS, ids=lambda g: g.name)
@pytest.mark.parametrize("threads", [128, 256, 512, 1024])
@pytest.mark.parametrize("regs", [16, 32, 64])
def test_every_reachable_target_gets_exactly_that_many_blocks(gpu, threads, regs):
    natural = natural_occupancy(gpu, threads, regs)
    if not natural.can_launch:
        with pytest.raises(UserError, match="cannot launch"):
            dynamic_smem_for(gpu, threads, 1, regs)
        return
    for target in range(1, natural.blocks_per_sm + 1):
        pad = dynamic_smem_for(gpu, threads, target, regs)
        occ = occupancy(gpu, threads, regs, pad)
        assert occ.blocks_per_sm == target, (target, pad)
        assert pad % gpu.smem_alloc_unit_bytes == 0 and 0 <= pad <= gpu.smem_per_block_optin_bytes
        if target < natural.blocks_per_sm:
            assert "shared memory" in occ.limited_by
            # the middle of the range: one allocation unit either way keeps the target
            unit = gpu.smem_alloc_unit_bytes
            assert occupancy(gpu, threads, regs, pad - unit).blocks_per_sm == target
            assert occupancy(gpu, threads, regs, pad + unit).blocks_per_sm == target
    with pytest.raises(UserError, match="cannot be forced"):
        dynamic_smem_for(gpu, threads, natural.blocks_per_sm + 1, regs)
    with pytest.raises(UserError, match="cannot be forced"):
        dynamic_smem_for(gpu, threads, 0, regs)


def test_h200_paddings_worked_by_hand():
    # 228 KiB carveout, 1 KiB reserve per block, 128 B units. Two blocks of 256 threads fit
    # while a block allocates more than 233,472 / 3 = 77,824 B and at most 233,472 / 2 =
    # 116,736 B: paddings 76,928 .. 115,712 B, whose middle (in 128 B units) is 96,256 B.
    h200 = preset("H200")
    assert dynamic_smem_for(h200, 256, 2, 16) == 96_256
    # one block: allocations above 116,736 up to 233,472: paddings 115,840 .. 232,448
    assert dynamic_smem_for(h200, 256, 1, 16) == (115_840 + 232_448) // 2 // 128 * 128
    # at the natural 8 (limited by warps) the padding is a control that keeps 8:
    # allocations up to 233,472 / 8 = 29,184 B, paddings 0 .. 28,160
    assert dynamic_smem_for(h200, 256, 8, 16) == 14_080


def test_a_block_size_with_one_block_per_sm_cannot_be_forced_higher():
    h200 = preset("H200")
    assert natural_occupancy(h200, 1024, 64).blocks_per_sm == 1  # registers: 64 x 1024 = 65,536
    with pytest.raises(UserError, match="unpadded 1 fit"):
        dynamic_smem_for(h200, 1024, 2, 64)
    with pytest.raises(UserError, match="threads per block"):
        dynamic_smem_for(h200, 2048, 1)


def test_padding_plan_leaves_out_what_cannot_be_forced():
    plan = padding_plan(preset("H200"), 512, (1, 2, 3, 4, 6, 8), 16)
    assert [t for t, _, _ in plan] == [1, 2, 3, 4]
    assert all(occ.blocks_per_sm == t for t, _, occ in plan)


PTX = """
    ld.param.u64 %rd1, [p0];
    ld.global.f32 %f1, [%rd4];
    ld.global.nc.f32 %f2, [%rd5];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd6], %f3;
    ld.global.f32 %f4, [%rd7];
"""


def test_loads_before_first_store_counts_in_program_order():
    assert loads_before_first_store(PTX) == 2  # ld.param is not a global load
    assert loads_before_first_store("st.global.f32 [%rd1], %f1;") == 0
    assert loads_before_first_store("ld.global.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];") == 1


@pytest.mark.skipif(HAS_GPU, reason="the simulator path (a GPU runs benchmarks/latency_run.py)")
def test_padded_launch_runs_in_the_simulator():
    import kernels.bodies.numba_kernels as nk

    gpu = preset("H200")
    n = 1024
    x, y = torch.randn(n), torch.randn(n)
    out = torch.full((n,), float("nan"))
    launch = padded_launch(nk.add_naive_kernel, nk.device_arrays((x, y, out)), 4, 256, gpu, 2)
    launch.run()
    assert torch.equal(out, x + y)
    assert launch.dynamic_smem_bytes == dynamic_smem_for(gpu, 256, 2)
    assert launch.predicted.blocks_per_sm == 2 and launch.target_blocks_per_sm == 2
    assert launch.regs_per_thread is None and launch.driver_blocks_per_sm is None
    assert "simulator" in launch.driver_note
    unpadded = padded_launch(nk.add_naive_kernel, nk.device_arrays((x, y, out)), 4, 256, gpu)
    assert unpadded.dynamic_smem_bytes == 0 and unpadded.predicted.blocks_per_sm == 8
    with pytest.raises(UserError):
        padded_launch(nk.add_naive_kernel, nk.device_arrays((x, y, out)), 4, 256, gpu, 9)


@pytest.mark.gpu
def test_on_a_gpu_the_driver_agrees_with_the_padding():
    import kernels.bodies.numba_kernels as nk
    from kernels.launching.device import detect_device

    gpu, _ = detect_device()
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    arrays = nk.device_arrays((x, y, out))
    for target in (1, 2, 3, 4, 8):
        launch = padded_launch(nk.add_naive_kernel, arrays, n // 256, 256, gpu, target)
        launch.run()
        assert torch.equal(out, x + y)
        assert launch.predicted.blocks_per_sm == target
        assert launch.driver_blocks_per_sm in (None, target), launch.driver_note


def test_chase_order_visits_distinct_lines_from_element_zero():
    from kernels.bodies.latency_kernels import LINE_BYTES, chase_order

    order = chase_order(1 << 20, 500, seed=3)
    assert order[0] == 0 and len(set(order.tolist())) == 500
    assert np.all(order % (LINE_BYTES // 8) == 0) and order.max() < (1 << 20) // 8
    with pytest.raises(ValueError):
        chase_order(1 << 10, 9)  # 8 lines cannot hold 9 hops


@pytest.mark.skipif(HAS_GPU, reason="the simulator path")
def test_chase_and_idle_kernels_in_the_simulator():
    from kernels.bodies.latency_kernels import chase_array, chase_kernel, idle_block_kernel

    nxt, out = chase_array(1 << 16, 64, seed=1, on_gpu=False)
    chase_kernel[1, 1](nxt, 64, out)
    assert int(out[0]) == 0  # the cycle closes after exactly `hops` hops
    chase_kernel[1, 1](nxt, 63, out)
    assert int(out[0]) != 0
    dst = np.zeros(64, dtype=np.float32)
    idle_block_kernel[2, 32](dst, 0)
    assert not dst.any()  # blocks that do nothing touch no memory
    idle_block_kernel[2, 32](dst, 1)
    assert dst.all()  # (and the flag is real: the store is not compiled away)
