"""Launch geometry against the article's hand-worked table (1,000,000 elements, 256 threads, L40S)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.rules.devices import preset, presets
from sim.rules.geometry import launch_geometry, warp_lanes
from sim.rules.occupancy import occupancy


def test_article_table():
    gpu = preset("L40S")
    geo = launch_geometry(gpu, 1_000_000, 256, occupancy(gpu, 256))
    assert geo.blocks == 3_907
    assert geo.warps_per_block == 8
    assert geo.warps_in_grid == 31_256
    assert geo.threads_in_grid == 1_000_192
    assert geo.idle_threads_last_block == 192
    assert geo.warp_slots_per_sm == 48
    assert geo.warp_slots_on_gpu == 6_816
    assert round(geo.waves_at_best, 1) == 4.6
    assert geo.blocks_per_wave == 852 and round(geo.waves_at_occupancy, 2) == 4.59
    assert geo.full_waves == 4 and geo.blocks_in_last_wave == 3_907 - 4 * 852


def test_article_250_thread_block_has_six_idle_lanes():
    assert launch_geometry(preset("L40S"), 1_000_000, 250).idle_lanes_per_block == 6
    assert warp_lanes(250) == [32] * 7 + [26]
    assert warp_lanes(8) == [8]  # the hello kernel: 8 of 32 lanes active
    assert warp_lanes(256) == [32] * 8


@pytest.mark.parametrize("elements,threads", [(0, 256), (-1, 256), (10, 0), (10, -5), (1.5, 32)])
def test_bad_input(elements, threads):
    with pytest.raises(ValueError):
        launch_geometry(preset("H200"), elements, threads)


def test_grid_limit():
    with pytest.raises(ValueError, match="grid limit"):
        launch_geometry(preset("H200"), 2**40, 1)


@given(gpu=st.sampled_from(presets()), elements=st.integers(1, 2**31 - 1), threads=st.integers(1, 1024))
def test_grid_covers_every_element_exactly(gpu, elements, threads):
    spec = preset(gpu)
    geo = launch_geometry(spec, elements, threads)
    assert (geo.blocks - 1) * threads < elements <= geo.blocks * threads
    assert 0 <= geo.idle_threads_last_block < threads
    assert 0 <= geo.idle_lanes_per_block < spec.warp_size
    assert sum(warp_lanes(threads)) == threads and len(warp_lanes(threads)) == geo.warps_per_block


def test_a_declared_grid_is_not_called_grid_stride_and_a_matmul_is_named_by_its_sizes():
    """A kernel that declares its grid (a matmul's tiles, a grid-stride add) has no fixed share of
    elements per block; the table said "a grid-stride loop" for both, and "Elements" for M, N, K."""
    from sim.rules.geometry import geometry_facts, launch_text

    gpu = preset("H200")
    sizes = {"M": 1024, "N": 4352, "K": 8192}
    geo = launch_geometry(gpu, 1_000_000, 256, occupancy(gpu, 256), blocks=136, sizes=sizes)
    facts = {f.key: f for f in geometry_facts(gpu, geo)}
    assert (facts["elements"].label, facts["elements"].value) == ("M × N × K", "1,024×4,352×8,192")
    assert "grid-stride" not in facts["idle_last"].how and "declares its grid" in facts["idle_last"].how
    assert "declares" in facts["blocks"].how
    assert launch_text(geo) == "M × N × K = 1,024×4,352×8,192 · 256 threads per block"
    # one length is still "Elements": a kernel whose only size is n, or a custom launch
    plain = launch_geometry(gpu, 1_000_000, 256, sizes={"n": 1_000_000})
    assert geometry_facts(gpu, plain)[0].label == "Elements" and not plain.sizes
    assert launch_text(plain) == "1,000,000 elements × 256 threads per block"
