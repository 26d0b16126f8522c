"""matmul_auto's choice: the fastest predicted of six variants x three tiles (each variant's stages:
candidate_tiles), and why."""

import json
from pathlib import Path

import pytest

from kernels.declare.registry import matmul_variants
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.model.matmul_choice import CANDIDATE_TILES, choose, leftover_fill, stream_k_slowdown

H200 = preset("H200")
RUN = Path(__file__).parents[2] / "resources" / "measured" / "H200_matmul_sawtooth.json"


def _choose(M, N, K, tiles=None, pointer_only=False):
    """pointer_only: the issue's three variants (the data measured before the TMA kernels)."""
    specs = {v: s for v, s in matmul_variants().items()
             if not (pointer_only and v.startswith("tma"))}
    return choose(specs, dict(M=M, N=N, K=K), H200, "bfloat16", tiles)


def test_every_candidate_is_weighed_and_the_fastest_is_chosen():
    c = _choose(1024, 4096, 8192)
    assert len(c.candidates) == 18
    times = [x.time_us for x in c.candidates]
    assert times == sorted(times) and c.chosen.time_us == min(times)
    assert c.chosen.label in c.why() and "tiles" in c.why()


def test_tma_candidates_take_their_fitted_efficiency_and_the_declared_loop_flags():
    """The TMA kernels are fitted (resources/fits/H200_matmul.json); they launch with their
    declared flags, so no label carries flags, and no candidate is assumed. At 4096^3
    TMA-persistent 128x256x64 is the pick (measured at 0.985-1.036 x cuBLAS)."""
    c = _choose(4096, 4096, 4096)
    assert not any(x.assumed for x in c.candidates)
    assert not any(" [" in x.label for x in c.candidates)  # no fitted flags in any label
    assert (c.chosen.variant, c.chosen.params["BLOCK_N"]) == ("tma_persistent", 256)


def test_a_kernel_without_a_fit_of_its_own_is_assumed_like_its_donor_and_loses_the_tie(monkeypatch):
    import sim.model.matmul_choice as mc

    fit = mc.tile_fit()
    eff = {k: v for k, v in fit["efficiency"].items() if not k.startswith("matmul_tma")}
    monkeypatch.setattr(mc, "tile_fit", lambda gpu=None: {**fit, "efficiency": eff, "assumed_from": {
        "matmul_tma": "matmul_tiled", "matmul_tma_persistent": "matmul_persistent"}})
    c = _choose(4096, 4096, 4096, tiles=CANDIDATE_TILES)  # the same tiles: each has a twin
    for tma, twin in (("tma", "tiled"), ("tma_persistent", "persistent")):
        for x in (x for x in c.candidates if x.variant == tma):
            other = next(o for o in c.candidates if o.variant == twin and o.params == x.params)
            assert x.assumed and not other.assumed and x.time_us == other.time_us
            assert c.candidates.index(other) < c.candidates.index(x)
    assert not c.chosen.variant.startswith("tma")
    assert any("(assumed)" in row[0] for row in c.rows())


def test_each_variant_weighs_the_candidate_tiles_and_the_declarations_agree():
    """Every variant weighs CANDIDATE_TILES as they are, and each declaration's default block is
    its first candidate tile."""
    import sim.model.matmul_choice as mc

    for v, spec in matmul_variants().items():
        assert mc.candidate_tiles(v) == CANDIDATE_TILES, v
        assert dict(spec.block) == mc.tile_params(CANDIDATE_TILES[0]), v


def test_tma_candidates_are_skipped_where_rows_are_not_16_byte_aligned():
    c = _choose(1024, 4100, 8192)  # N = 4100: 8200-byte rows of B and C
    assert {x.variant for x in c.candidates} == {"tiled", "persistent", "stream_k"}
    assert sum("16-byte rows" in s for s in c.skipped) == 3


def test_half_a_wave_of_big_tiles_takes_a_smaller_tile():
    """N=2048: 64 tiles of 128x256 fill half the H200; the issue measured 0.64x cuBLAS there."""
    c = _choose(1024, 2048, 8192)
    assert (c.chosen.params["BLOCK_M"], c.chosen.params["BLOCK_N"]) != (128, 256)
    assert c.chosen.waves > 0.9


@pytest.mark.parametrize("M, N, variant", [(896, 4864, "stream_k"), (1024, 4352, "stream_k"),
                                            (896, 4608, "tiled"), (1024, 4096, "tiled")])
def test_the_issues_table_at_the_default_tile(M, N, variant):
    """Just past a wave stream-K wins; just under one it loses (the issue's H200 table)."""
    c = _choose(M, N, 8192, tiles=CANDIDATE_TILES[:1], pointer_only=True)
    assert c.chosen.variant == variant or (variant == "tiled" and c.chosen.variant == "persistent")


def test_at_the_default_tile_the_choice_is_within_3_percent_of_the_measured_best():
    """Every other size of the H200 sawtooth (the stream-K term was fitted on N <= 4096 of it)."""
    saw = json.loads(RUN.read_text())["steps"]["sawtooth"]
    for p in saw["points"][::2]:
        c = _choose(p["M"], p["N"], p["K"], tiles=CANDIDATE_TILES[:1], pointer_only=True)
        best = max(p[k]["tflops"] for k in ("tiled", "persistent", "stream_k"))
        assert p[c.chosen.variant]["tflops"] >= 0.97 * best, p["N"]


def test_the_stream_k_term_is_zero_for_full_waves_and_largest_near_a_full_one():
    assert leftover_fill(264, 132) == 0 and stream_k_slowdown(0.0) < 0.05
    assert stream_k_slowdown(0.85) > 3 * stream_k_slowdown(0.3)


def test_a_product_too_big_to_weigh_is_one_line():
    with pytest.raises(UserError, match="no matmul candidate"):
        _choose(10**6, 10**6, 10**6)


def test_explain_prints_the_candidates_and_launches_the_chosen_one(capsys):
    from main import main

    rc = main(["explain", "--kernel", "matmul_auto", "--dims", "M=1024,N=4352,K=8192",
               "--regs", "232", "--smem", "147456"])
    out = capsys.readouterr().out
    assert rc == 0
    c = _choose(1024, 4352, 8192)
    assert f"=> chose {c.why()}" in out
    assert out.count("stream-K") >= 3 and "matmul_auto chose" in out
    launched = f"matmul_{c.chosen.variant}"
    assert f"Launch: {launched}: " in out


def test_dims_are_for_a_matrix_product_only(capsys):
    from main import main

    assert main(["explain", "--kernel", "add_triton", "--dims", "M=1,N=2,K=3"]) != 0
    assert "--dims is for a matrix product" in capsys.readouterr().err


def test_a_matmul_without_a_size_starts_at_the_windows_side(capsys):
    """`explain --kernel matmul_...` with no --elements takes the side the window starts a matmul
    at (sim/inputs/defaults.py), not a vector add's 1,000,000 (a 30-million-tile product), and a
    stream kernel keeps the element count the window starts with."""
    import json

    from gui.models.launch import LaunchInputs
    from main import main
    from sim.inputs.defaults import DEFAULT_SIDE

    assert main(["explain", "--kernel", "matmul_tiled", "--regs", "128", "--smem", "98304",
                 "--json"]) == 0
    sizes = json.loads(capsys.readouterr().out)["geometry"]["sizes"]
    assert sizes == [["M", DEFAULT_SIDE], ["N", DEFAULT_SIDE], ["K", DEFAULT_SIDE]]
    assert main(["explain", "--kernel", "add_triton", "--regs", "16", "--json"]) == 0
    geometry = json.loads(capsys.readouterr().out)["geometry"]
    assert geometry["elements"] == LaunchInputs().elements and geometry["sizes"] == []
