"""The window's block x · y · z: the launch model and the controls, checked against the
brute-force warp enumeration of tests/sim/test_block_shape.py."""

from __future__ import annotations

from gui.models.launch import LaunchInputs, LaunchModel
from tests.sim.test_block_shape import brute_warps


def test_model_takes_a_2d_block_and_a_thread_count_makes_it_1d_again():
    model = LaunchModel(LaunchInputs(gpu="H200"))
    assert model.update(threads_per_block=400, block_y=20)
    geo = model.state.geometry
    assert geo.block_dims == (20, 20, 1)
    warps = brute_warps((20, 20, 1))
    assert geo.warps_per_block == len(warps) and geo.idle_lanes_per_block == 32 - len(warps[-1])
    assert model.update(threads_per_block=256)
    assert model.state.geometry.block_dims == (256, 1, 1)


def test_model_refuses_a_shape_that_does_not_divide_in_one_line():
    model = LaunchModel(LaunchInputs(gpu="H200"))
    seen = []
    model.rejected.connect(seen.append)
    assert not model.update(threads_per_block=250, block_y=16)
    assert len(seen) == 1 and "multiple of y" in seen[0] and "\n" not in seen[0]
    assert model.state.geometry.block_dims == (256, 1, 1)


def test_model_takes_a_cluster_on_hopper_and_refuses_it_before():
    """On the H200 at one block per SM, clusters of 8 hold 15 x 8 = 120 blocks a wave (the
    measured GPCs: 2 x 2 + 5 x 2 + 1 + 4 x 0 clusters), not 132."""
    model = LaunchModel(LaunchInputs(gpu="H200", smem_per_block=120 * 1024))
    assert model.update(cluster_size=8)
    geo = model.state.geometry
    assert geo.cluster_size == 8 and geo.blocks % 8 == 0 and geo.blocks_per_wave == 120
    seen = []
    model.rejected.connect(seen.append)
    assert not model.update(gpu="A100 80GB")
    assert len(seen) == 1 and "9.0 or later" in seen[0]


def test_the_command_lines_cluster_and_register_cap_reach_the_window_and_the_export():
    from gui.app import build_inputs
    from gui.models.launch import LaunchInputs

    inputs = build_inputs(LaunchInputs(), "H200", 2**22, 256, None, None, None, 8, 40)
    assert (inputs.cluster_size, inputs.max_registers) == (8, 40)
