"""The chain's tile and loads (sim/model/chain.py): a layernorm's sweeps step through its row
tile by tile, a stencil's extra loads lengthen its trip. Checked on held-out traces
(tests/data/h200_kernel_files_more_heldout) and on the helpers."""

from pathlib import Path

import pytest

from kernels.declare.kernel_file import with_declared_chain
from kernels.declare.spec import chain_of
from sim.inputs.errors import UserError
from sim.model.chain import declared_chain, resolved_chain, tile_steps
from sim.model.launch_model import Launch
from sim.model.memory_cost import chain_ns
from sim.rules.devices import preset
from sim.traces.compare import compare_trace
from sim.traces.trace_bundle import load_bundle

HELD_OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "h200_kernel_files_more_heldout"


def test_tile_steps_from_block_params():
    chain = {"passes": 3, "reductions": 2, "tile": "BLOCK_SIZE"}
    assert tile_steps(chain, {"BLOCK_SIZE": 1024}, 4096) == 4
    assert tile_steps(chain, {"BLOCK_SIZE": 4096}, 4096) == 1
    assert tile_steps(chain, None, 4096) == 1  # the launch does not say its tile
    assert tile_steps({"passes": 3}, {"BLOCK_SIZE": 1024}, 4096) == 1
    assert resolved_chain(chain, {"BLOCK_SIZE": 1024}, 4096)["trips"] == 4
    assert "trips" not in resolved_chain(chain, {"BLOCK_SIZE": 8192}, 4096)


def test_declared_chain_loads_only_where_said():
    assert declared_chain({"passes": 1, "loads": 5}) == {"passes": 1, "reductions": 0, "loads": 5}
    assert declared_chain({"passes": 3, "reductions": 2}) == {"passes": 3, "reductions": 2}
    assert chain_of({"passes": 3, "reductions": 2, "tile": "BLOCK_SIZE"}) == (3, 2)
    with pytest.raises(UserError):
        chain_of({"passes": 1, "tile": 1024})


def test_later_sweeps_pay_l2_latency_per_step():
    gpu = preset("H200")
    one = Launch(256, 128, 16, 8.4e6, 2**20, 1, passes=3, reductions=2)
    four = Launch(256, 128, 16, 8.4e6, 2**20, 4, passes=3, reductions=2)
    from sim.rules.physics import physics_for
    l2 = physics_for(gpu).value("l2_latency_ns")
    assert chain_ns(gpu, four) - chain_ns(gpu, one) == pytest.approx(2 * 3 * l2)


@pytest.fixture(scope="module")
def kernel_files():
    return load_bundle(HELD_OUT)


@pytest.mark.parametrize("name", ["layernorm_triton_n20", "stencil_numba_n24"])
def test_held_out_kernel_file_makespans_within_ten_percent(kernel_files, name):
    """Recorded after the chains' tiles were chosen on other traces; the bar is the traces' 10%."""
    c = compare_trace(with_declared_chain(kernel_files[name]))
    assert abs(c.makespan_error) <= 0.10
