"""The launch form's block x · y · z boxes drive the launch and the Geometry panel (warps checked
against the brute-force enumeration of tests/sim/test_block_shape.py)."""

from __future__ import annotations

from tests.sim.test_block_shape import brute_warps


def test_controls_boxes_set_the_block(mount):
    w = mount("H200", 1_000_000, 256)
    x, y, z = w.controls.block_xyz
    y.setValue(8)  # 256 x 8 x 1 would be 2,048 threads: refused, the boxes go back
    assert w.model.state.geometry.block_dims == (256, 1, 1)
    x.setValue(32)
    y.setValue(8)
    z.setValue(2)
    assert w.model.state.geometry.block_dims == (32, 8, 2)
    assert w.model.inputs.threads_per_block == 512
    assert w.geometry_view.value("shape") == "32×8×2"
    assert w.geometry_view.value("wpb") == str(len(brute_warps((32, 8, 2))))
