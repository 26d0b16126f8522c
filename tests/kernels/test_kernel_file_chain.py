"""A kernel file's whole declared chain (its `tile` and `loads` too) reaches every surface: the
spec, `explain`/`simulate` (sim/cli.py resolves the tile's steps as `compare` does) and the meta a
trace of it keeps (kernels/tracing/trace_file.py writes spec.chain)."""

from __future__ import annotations

import pytest

from kernels.declare.kernel_file import EXAMPLES, open_kernel_file
from sim.cli import _resolved, KernelLaunch
from sim.model.launch_model import predict_geometry
from sim.rules.devices import preset
from sim.rules.geometry import launch_geometry
from sim.rules.occupancy import occupancy


def _spec(name: str):
    return open_kernel_file(f"{EXAMPLES}/{name}", cpu_fallback=True)[0]


def test_the_examples_chains_keep_their_tile_and_loads():
    assert _spec("layernorm_triton.py").chain == {"passes": 3, "reductions": 2, "tile": "BLOCK_SIZE"}
    assert _spec("stencil_numba.py").chain == {"passes": 1, "reductions": 0, "loads": 5}


@pytest.mark.parametrize("block, steps", [(1024, 4), (4096, 1), (512, 8)])
def test_explain_walks_a_row_in_its_tiles_steps(block, steps):
    """Layernorm's 4,096-element rows in BLOCK_SIZE tiles: the resolved chain has that many trips,
    and the prediction takes them (a longer whole launch than one trip per sweep)."""
    gpu = preset("H200")
    occ = occupancy(gpu, 128, 40)
    geo = launch_geometry(gpu, 2**24, 128, occ, blocks=2**12, elements_per_block=4096)
    kernel = KernelLaunch(name="layernorm", blocks=2**12, threads_per_block=128,
                          elements_per_block=4096, bytes_moved=2**24 * 8, regs_per_thread=40,
                          smem_per_block=0, note="", block_params={"BLOCK_SIZE": block},
                          chain={"passes": 3, "reductions": 2, "tile": "BLOCK_SIZE"})
    chain = _resolved(kernel, geo)
    assert chain.get("trips", 1) == steps
    walked = predict_geometry(gpu, occ, geo, bytes_moved=2**24 * 8, chain=chain).whole_launch_us
    one = predict_geometry(gpu, occ, geo, bytes_moved=2**24 * 8,
                           chain={"passes": 3, "reductions": 2}).whole_launch_us
    assert (walked > one) if steps > 1 else walked == pytest.approx(one)
