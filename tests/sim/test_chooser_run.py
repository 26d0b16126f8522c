"""benchmarks/chooser_summary.py's summary (chooser_run.py prints it) and throughput scale, on run I as recorded."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import chooser_summary  # noqa: E402

RUN_I = json.loads((ROOT / "benchmarks" / "run_i" / "chooser_h200.json").read_text())


RUN_M = json.loads((ROOT / "benchmarks" / "run_m" / "matmul" / "chooser" / "chooser_h200.json")
                   .read_text())


def test_the_scale_is_the_median_over_sizes_against_the_run_the_tile_fit_was_made_on():
    """Run H carries the efficiencies' machine. One size is fragile: run M's cuBLAS at 8192^3 was
    0.864 x run H's, its median over the 59 sizes 0.992 (and its candidates' 0.986)."""
    from tiles_fit import this_run_scale

    scale = this_run_scale(RUN_M)
    assert scale["value"] == pytest.approx(0.9923, abs=1e-3) and scale["sizes"] == 59
    assert scale["cublas_8192_only"] == pytest.approx(0.864, abs=1e-3)
    assert "run_h" in scale["how"]
    assert this_run_scale(RUN_I)["value"] == pytest.approx(1.0029, abs=1e-3)


def test_run_ms_summary_with_the_median_scale(capsys):
    from tiles_fit import this_run_scale

    chooser_summary.print_summary({**RUN_M, "scale": this_run_scale(RUN_M)})
    line = next(x for x in capsys.readouterr().out.splitlines() if "fitted candidates'" in x)
    assert "scale 0.992" in line and ": 513/531; raw 508/531" in line and "say 0.864" in line


def test_the_summary_tells_the_pick_from_the_repeat_noise(capsys):
    from tiles_fit import this_run_scale

    chooser_summary.print_summary({**RUN_I, "scale": this_run_scale(RUN_I)})
    out = capsys.readouterr().out
    assert "auto / best of its candidates, min and median" in out and "54/57" in out
    line = next(x for x in out.splitlines() if "the pick / best candidate, same rounds" in x)
    assert line.rstrip().endswith("0.64; >= 0.97 at 58/59")
    line = next(x for x in out.splitlines() if "auto vs the same launch" in x)
    assert line.rstrip().endswith("2.1%, 45.8%")  # N=2304: 70 vs 129 us


def test_median_of_rounds():
    assert chooser_summary.median([3.0, 1.0, 2.0]) == 2.0 and chooser_summary.median([1.0, 2.0]) == 1.5
    assert chooser_summary.spread([1.0, 1.1, 1.0]) == pytest.approx(0.1)


def test_run_rs_extras_are_the_old_declarations_and_no_candidates_twin():
    """`--extras before-q` (run R): TMA stream-K at its three tiles with the flags declared until
    run Q and TMA tiled 128x256x64 at s3; each label is its own and none reads as a candidate
    (the summary sets each beside the candidate of its kernel, tile and warps)."""
    import chooser_run
    from tile_explore import OLD_SK_LOOP, TMA_SK, tma_label

    from sim.model.matmul_choice import (CANDIDATE_TILES, VARIANT_TITLES, candidate_tiles,
                                         tile_label, tile_params)

    extras = chooser_run.EXTRA_SETS["before-q"]
    assert {t for v, t, loop in extras if v == "tma_stream_k" and loop == OLD_SK_LOOP} == set(
        CANDIDATE_TILES)
    assert ("tma", (128, 256, 64, 8, 8, 3), {}) in extras
    candidates = {f"{VARIANT_TITLES[v]} {tile_label(tile_params(t))}"
                  for v in VARIANT_TITLES for t in candidate_tiles(v)}
    for entries in (extras, chooser_run.TMA_SK_EXTRAS, TMA_SK):  # run Q's set: candidates too
        labels = [tma_label(v, tile_params(t), loop) for v, t, loop in entries]
        assert len(set(labels)) == len(labels), labels
        assert entries is TMA_SK or not set(labels) & candidates, labels
    # the declared stream-K loop reads as the candidate itself; the old one with its flags
    assert tma_label("tma_stream_k", tile_params(CANDIDATE_TILES[0]), dict(
        flatten=False, warp_specialize=True)) == "TMA-stream-K 128x256x64 w8 s3"
    assert tma_label("tma_stream_k", tile_params(CANDIDATE_TILES[2]), OLD_SK_LOOP) == \
        "TMA-stream-K 64x128x64 w4 s4 [flatten=True]"
