"""The launch form's block x · y · z boxes drive the launch and the Geometry panel (warps checked
against the brute-force enumeration of tests/sim/test_block_shape.py)."""

from __future__ import annotations

import numpy as np

from tests.sim.test_block_shape import brute_warps


def test_controls_boxes_set_the_block(mount):
    w = mount("H200", 1_000_000, 256)
    x, y, z = w.controls.shape.xyz
    y.setValue(8)  # 256 x 8 x 1 would be 2,048 threads: refused, the boxes go back
    assert w.model.state.geometry.block_dims == (256, 1, 1)
    x.setValue(32)
    y.setValue(8)
    z.setValue(2)
    assert w.model.state.geometry.block_dims == (32, 8, 2)
    assert w.model.inputs.threads_per_block == 512
    assert w.geometry_view.value("shape") == "32×8×2"
    assert w.geometry_view.value("wpb") == str(len(brute_warps((32, 8, 2))))


def test_cluster_box_groups_the_sm_view_by_gpc(qtbot, mount):
    """With clusters the SM view lays its tiles GPC by GPC (the H200's measured GPCs) and a
    cluster's blocks, placed in one GPC, are named with it."""
    from sim.rules.clusters import gpc_layout
    from tests.gui.conftest import wait_sim

    w = mount("H200", 1_000_000, 256)
    w.controls.shape.cluster.setValue(8)
    assert w.model.inputs.cluster_size == 8
    run = wait_sim(qtbot, w)
    assert run.simulation.cluster_size == 8
    w.playback.set_time(run.makespan_us * 0.3)
    lay = w.sm_view._layout
    groups = gpc_layout(w.model.state.spec)[0]
    assert list(lay.order[:len(groups[0])]) == list(groups[0])
    gpc_of = {sm: g for g, sms in enumerate(groups) for sm in sms}
    res = w.sm_view.frame.resident
    sms_of_cluster = {}
    for sm, slot in zip(*np.nonzero(res >= 0)):
        cluster = (int(res[sm, slot]) + run.timeline.first_block) // 8
        sms_of_cluster.setdefault(cluster, set()).add(gpc_of[int(sm)])
    assert sms_of_cluster and all(len(g) == 1 for g in sms_of_cluster.values())


def test_sm_view_names_the_threads_of_a_hovered_warp(qtbot, mount):
    """A 24 × 20 block: warp 1 holds threads 32..63, (8, 1, 0) to (15, 2, 0) by the enumeration."""
    from PySide6.QtCore import QPoint

    from tests.gui.conftest import wait_sim

    w = mount("H200", 1_000_000, 256)
    assert w.model.update(threads_per_block=480, block_y=20)
    run = wait_sim(qtbot, w)
    w.playback.set_time(run.makespan_us * 0.3)
    view, lay = w.sm_view, w.sm_view._layout
    area = view._grid_rect()
    expected = brute_warps((24, 20, 1))[1]
    found = None
    for y in range(0, lay.height, 2):
        for x in range(0, lay.width, 2):
            sm, warp = lay.hit(x, y)
            if sm >= 0 and warp % 15 == 1 and view.frame.resident[sm, warp // 15] >= 0:
                found = view.describe_at(QPoint(area.left() + round(x / lay.dpr),
                                                area.top() + round(y / lay.dpr)))
                break
        if found:
            break
    assert found and "24×20 block, warp 1: threads " in found
    assert f"({expected[0][0]}, {expected[0][1]}, 0) … ({expected[-1][0]}, {expected[-1][1]}, 0)" in found
