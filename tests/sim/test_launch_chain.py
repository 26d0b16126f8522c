"""A block's dependent chain (sim.model.memory_cost.chain_ns): later sweeps over its data from
the L2 and block-wide reductions, declared by a kernel (`chain`, kernels/declare/spec.py)."""

import pytest

from kernels.declare.spec import chain_of, declare
from sim.inputs.errors import UserError
from sim.model.launch_model import Launch, predict_launch
from sim.model.memory_cost import chain_ns
from sim.rules.devices import preset
from sim.rules.physics import physics_for

H200 = preset("H200")


def row_launch(rows=1, threads=1024, per_sm=2, passes=1, reductions=0):
    return Launch(rows, threads, per_sm, 8.0 * 4096 * rows, 4096 * rows, passes=passes,
                  reductions=reductions)


def test_one_sweep_without_reductions_adds_nothing():
    assert chain_ns(H200, row_launch()) == 0.0
    plain = predict_launch(H200, Launch(1, 1024, 2, 8.0 * 4096, 4096), "memory")
    assert predict_launch(H200, row_launch(), "memory").whole_launch_us == plain.whole_launch_us


def test_a_reduction_is_log2_threads_steps_and_a_sweep_an_l2_read():
    ph = physics_for(H200)
    step = ph.value("reduction_step_ns")
    assert chain_ns(H200, row_launch(reductions=2)) == pytest.approx(2 * 10 * step)
    assert chain_ns(H200, row_launch(threads=256, reductions=1)) == pytest.approx(8 * step)
    sweep = ph.value("l2_latency_ns") + 8.0 * 4096 / (ph.value("l2_gbps") / H200.sm_count)
    assert chain_ns(H200, row_launch(passes=3)) == pytest.approx(2 * sweep)


def test_rows_that_outgrow_the_l2_are_swept_from_dram():
    """132 x 16 resident blocks of 1 MB each (2 GB) cannot stay in a 60 MB L2."""
    big = Launch(132 * 16 * 4, 128, 16, 132 * 16 * 4 * 2**20, 132 * 16 * 4 * 2**18, passes=2)
    small = Launch(132 * 16 * 4, 128, 16, 132 * 16 * 4 * 4096, 132 * 16 * 4 * 1024, passes=2)
    ph = physics_for(H200)
    assert chain_ns(H200, small) < ph.value("dram_latency_ns") < chain_ns(H200, big)


def test_the_chain_is_think_time_the_port_overlaps():
    """A full GPU of chained blocks: the chain hides behind the other blocks' bytes, so a
    bandwidth-bound launch slows by far less than its blocks' chain."""
    grid = 132 * 16 * 4
    launch = Launch(grid, 128, 16, 32e3 * grid, 4096 * grid, passes=3, reductions=2)
    plain = predict_launch(H200, Launch(grid, 128, 16, 32e3 * grid, 4096 * grid), "memory")
    chained = predict_launch(H200, launch, "memory")
    per_block_us = chain_ns(H200, launch) / 1e3
    slower = chained.makespan_us - plain.makespan_us
    assert 0 < slower < 0.5 * per_block_us * grid / (132 * 16)
    assert "reduction_step_ns" in chained.sources and "reduction_step_ns" not in plain.sources


def test_a_declaration_says_its_chain_and_its_peers():
    spec = declare(dict(kernel=lambda *a, out=None: None, backend="torch", name="k",
                        chain=dict(passes=3, reductions=2), peer_chain=dict(reductions=1),
                        peer=lambda torch, x: x))
    assert (spec.passes, spec.reductions) == (3, 2)
    peer = spec.peer_spec()
    assert (peer.passes, peer.reductions) == (1, 1)
    assert chain_of(None) == (1, 0)
    for bad in (dict(passes=0), dict(reductions=-1), dict(sweeps=2), dict(passes=1.5), 3):
        with pytest.raises(UserError, match="chain"):
            chain_of(bad)


def test_the_surfaces_path_takes_a_declared_chain():
    """`explain` hands a kernel file's declared chain to predict_geometry (sim/cli.py)."""
    from sim.model.launch_model import predict_geometry
    from sim.rules.geometry import launch_geometry
    from sim.rules.occupancy import occupancy

    occ = occupancy(H200, 256, 40, 0)
    geo = launch_geometry(H200, 4096, 256, occ, blocks=1, elements_per_block=4096)
    plain = predict_geometry(H200, occ, geo, bytes_moved=8 * 4096)
    chained = predict_geometry(H200, occ, geo, bytes_moved=8 * 4096,
                               chain={"passes": 1, "reductions": 2})
    step_us = physics_for(H200).value("reduction_step_ns") / 1e3
    assert chained.whole_launch_us - plain.whole_launch_us == pytest.approx(2 * 8 * step_us, rel=0.35)
