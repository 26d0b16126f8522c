"""matmul_auto's per-candidate efficiency (kernels/fitting/tiles_fit.py) against recorded H200 runs
(tests/data/h200_matmul_tiles): pointer kernels fitted on one run and held out on another; TMA
kernels and TMA stream-K fitted on the even sawtooth sizes of their runs, held out on the odd ones;
every run replayed with the stored fit against the same bars:

- PICK: matmul_auto's pick at least 0.97 x the best measured candidate at PICK_SHARE of the sizes;
- CUBLAS: at the square sizes, the pick at least CUBLAS x cuBLAS measured in the same rounds;
- WITHIN: at least WITHIN_SHARE of the held-out candidate predictions within 10%."""

import json

import pytest

from kernels.fitting import tiles_fit, tiles_score  # noqa: E402

from kernels.declare.registry import matmul_variants  # noqa: E402
from sim.rules.devices import preset  # noqa: E402
from sim.model.matmul_choice import (TILE_FIT_PATH, choose, predict_candidate,  # noqa: E402
                                     tile_fit, tile_params)
from sim.model.throughput import predict_matmul  # noqa: E402

RUN = json.loads(tiles_fit.RUN.read_text())
STORED = json.loads(TILE_FIT_PATH.read_text())
PICK, PICK_SHARE = 0.97, 0.90
CUBLAS = 0.95
WITHIN_SHARE = 0.93


def test_the_stored_fit_is_its_rows_fit_and_the_rows_are_the_recorded_sawtooth():
    assert STORED["date"] == "2026-12-02" and STORED["command"] == tiles_fit.COMMAND
    assert STORED["source"] == "tests/data/h200_matmul_tiles/pointer_fit.json"
    rows = tiles_fit.stored_rows(STORED)
    pointer = {k: v for k, v in STORED["efficiency"].items() if not k.startswith("matmul_tma")}
    assert pointer == pytest.approx(tiles_fit.fit(rows), abs=2e-4) and len(pointer) == 9
    measured = {(p["M"], p["N"], p["K"], tiles_fit.key(c)): c["measured_ms"] * 1e3
                for p in RUN["sawtooth"] for c in p["candidates"]}
    assert len(STORED["rows"]) == len(measured) == 57 * 9
    for M, N, K, k, m, _ in STORED["rows"]:
        assert m == pytest.approx(measured[(M, N, K, k)], abs=1e-3)


@pytest.mark.parametrize("N", [2304, 4352, 12800])
def test_every_candidate_weighed_has_a_measured_efficiency(N):
    """At N=2304 an unfitted chooser took a 64x128 tile measured at 0.70 x the best."""
    got = choose(matmul_variants(), dict(M=1024, N=N, K=8192), preset("H200"), "bfloat16")
    assert all(not c.assumed and c.efficiency < 1.0 for c in got.candidates)
    assert (got.chosen.params["BLOCK_M"], got.chosen.params["BLOCK_N"]) != (64, 128)


def test_the_pointer_fit_on_its_held_out_run():
    """Every sixth size of the held-out run and its squares: without efficiencies about a third of
    the predictions are within 10%; with the fit at least WITHIN_SHARE - 0.05 (these are the
    untuned pointer kernels) and the pick at least PICK x best at PICK_SHARE of the sizes."""
    test_run = json.loads(tiles_fit.TEST_RUN.read_text())
    rows = tiles_fit.model_rows(test_run["sawtooth"][::6] + test_run["squares"])
    before, after = tiles_fit.replay(rows, {}), tiles_fit.replay(rows, tile_fit()["efficiency"])
    n = after["predictions"]
    assert n == before["predictions"] > 100 and before["within_10pct"] < 0.5 * n
    assert after["within_10pct"] >= (WITHIN_SHARE - 0.05) * n
    assert after["auto_ge_097"] >= PICK_SHARE * len(rows)


def test_stream_ks_leftover_term_is_only_for_the_tile_it_was_measured_with():
    """N=6656 at M=1024: 208 tiles of 128x256 (76 left over a wave, fill 0.58) or 416 of 128x128:
    the fitted leftover excess adds to the 128x256 candidate only."""
    spec, gpu, dims = matmul_variants()["stream_k"], preset("H200"), dict(M=1024, N=6656, K=8192)
    for tile, has_term in (((128, 256, 64, 8, 8, 3), True), ((128, 128, 64, 8, 8, 4), False)):
        params = tile_params(tile)
        p, time_us = predict_candidate(spec, dims, gpu, params, "bfloat16")
        eff = tile_fit()["efficiency"][f"matmul_stream_k {tile[0]}x{tile[1]}x{tile[2]} "
                                       f"w{tile[4]} s{tile[5]}"]
        bare = predict_matmul(spec, dims, gpu, params, dtype="bfloat16", fitted=False).time_us
        assert eff == pytest.approx(p.cost.efficiency)
        oh = p.launch.launch_overhead_us  # the efficiency scales the blocks, not the overhead
        assert (oh + (time_us - oh) * eff > bare * 1.01) is has_term


RUN_M = json.loads(tiles_fit.TMA_RUN.read_text())


def test_the_tma_fit_is_its_rows_fit_on_the_even_sizes_in_the_pointer_run_s_units():
    tma = STORED["tma"]
    assert tma["source"] == "tests/data/h200_matmul_tiles/tma_fit.json"
    assert tma["scale"]["value"] == pytest.approx(tiles_fit.run_scale(RUN_M, RUN)["value"])
    rows = tiles_fit.stored_rows(STORED, "tma_rows")
    fitted = tiles_fit.fit(rows, tma["scale"]["value"], "matmul_tma")
    assert fitted == pytest.approx({k: v for k, v in STORED["efficiency"].items()
                                    if k.startswith("matmul_tma")
                                    and not k.startswith(tiles_fit.STREAM_K_TMA)}, abs=2e-4)
    fit_n, test_n = ({(p["M"], p["N"], p["K"]) for p in part} for part in tiles_fit.split_tma(RUN_M))
    assert {(M, N, K) for M, N, K, *_ in STORED["tma_rows"]} == fit_n and len(fit_n) == 29
    assert not fit_n & test_n and len(test_n) == 28 + 2
    assert "loop" not in STORED and " [" not in "".join(STORED["efficiency"])  # declared flags
    assert STORED["assumed_from"] == {}  # TMA stream-K measured too


def test_the_tma_stream_k_fit_is_its_rows_fit_on_its_even_sizes():
    sk = STORED["tma_stream_k"]
    run_o = json.loads(tiles_fit.RUN_O.read_text())
    assert sk["source"] == "tests/data/h200_matmul_tiles/stream_k_fit.json"
    assert sk["scale"]["value"] == pytest.approx(tiles_fit.run_scale(run_o, RUN)["value"])
    rows = tiles_fit.stored_rows(STORED, "tma_stream_k_rows")
    fitted = tiles_fit.fit(rows, sk["scale"]["value"], tiles_fit.STREAM_K_TMA)
    assert len(fitted) == 3 and fitted == pytest.approx(
        {k: v for k, v in STORED["efficiency"].items() if k.startswith(tiles_fit.STREAM_K_TMA)},
        abs=2e-4)
    fit_n = {(p["M"], p["N"], p["K"]) for p in tiles_fit.split_tma(run_o)[0]}
    assert {(M, N, K) for M, N, K, *_ in STORED["tma_stream_k_rows"]} == fit_n


def test_the_fit_holds_one_efficiency_per_candidate_as_declared_now():
    """Every candidate the chooser weighs has a stored efficiency of its own and none is left
    over (a refit for other loop flags was taken back with the declarations it was fitted for)."""
    from kernels.declare.matmul_problem import TMA_LOOP
    from sim.model.matmul_choice import candidate_key, candidate_tiles

    specs = matmul_variants()
    weighed = {candidate_key(specs[v], tile_params(t)) for v in specs for t in candidate_tiles(v)}
    assert set(STORED["efficiency"]) == weighed and len(weighed) == 18
    assert TMA_LOOP["tma_stream_k"] == TMA_LOOP["tma_persistent"]  # the flags measured
    assert all(0.5 < e <= 1.05 for e in STORED["efficiency"].values())


# Most runs measured every candidate as declared now; the run with the old flags measured TMA
# stream-K and TMA tiled 128x256x64 s3 as declared now only as extras at its 11 targets: elsewhere
# those picks are timed by the run's candidates with the old flags (stand-ins), and their
# predictions left out.
def _replay(run, scale, fit_n=None):
    rows = tiles_score.score_run(run, scale, fit_n=fit_n)
    saw = [r for r in rows if not r["square"]]
    within = [c for r in rows for c in r["candidates"] if not c["stand_in"]]
    ok = sum(abs(c["predicted_ms"] / c["measured_ms"] - 1) <= 0.10 for c in within)
    return rows, saw, ok / len(within)


def _meets_the_bars(rows, saw, within):
    assert len(saw) == 57
    assert sum(r["pick_vs_best"] >= PICK for r in saw) >= PICK_SHARE * len(saw)
    assert all(r["pick_vs_cublas"] >= CUBLAS for r in rows if r["square"])
    assert within >= WITHIN_SHARE


@pytest.mark.slow
def test_the_tma_fit_run_replayed():
    """A kernel newer than the run is left out of each size's candidates; the held-out odd sizes'
    predictions are scored."""
    rows, saw, _ = _replay(RUN_M, STORED["tma"]["scale"]["value"])
    test = [c for r in rows if r["set"] == "test" for c in r["candidates"] if not c["stand_in"]]
    within = sum(abs(c["predicted_ms"] / c["measured_ms"] - 1) <= 0.10 for c in test) / len(test)
    _meets_the_bars(rows, saw, within)


@pytest.mark.slow
def test_the_held_out_tma_run_replayed_with_the_declared_flags():
    run_n = json.loads(tiles_fit.RUN_N.read_text())
    rows, saw, within = _replay(run_n, tiles_fit.run_scale(run_n, RUN)["value"], set())
    _meets_the_bars(rows, saw, within)
    assert not any(r["pick_stand_in"] for r in rows)


@pytest.mark.slow
def test_the_stream_k_run_replayed_with_tma_stream_k_fitted_on_its_even_sizes():
    run_o = json.loads(tiles_fit.RUN_O.read_text())
    fit_o = {p["N"] for p in tiles_fit.split_tma(run_o)[0]}
    rows, saw, within = _replay(run_o, STORED["tma_stream_k"]["scale"]["value"], fit_o)
    _meets_the_bars(rows, saw, within)
    dips = tiles_fit.cublas_dips(saw)  # where cuBLAS dips below its neighbours, the pick reaches it
    assert sum(saw[i]["pick_vs_cublas"] >= 1.0 for i in dips) >= len(dips) / 2
    assert not any(r["unmeasured_ahead"] for r in rows)


@pytest.mark.slow
def test_the_held_out_stream_k_run_replayed():
    run_p = json.loads(tiles_fit.RUN_P.read_text())
    rows, saw, within = _replay(run_p, tiles_fit.run_scale(run_p, RUN)["value"], set())
    _meets_the_bars(rows, saw, within)
    dips = tiles_fit.cublas_dips(saw)
    assert sum(saw[i]["pick_vs_cublas"] >= 1.0 for i in dips) >= len(dips) / 2


@pytest.mark.slow
def test_the_old_flags_run_replayed_with_its_extras_as_the_declarations():
    """At its 11 targets every pick is timed as itself (an extra there); elsewhere the TMA
    stream-K picks are timed by the old flags' stand-ins (slower in the same rounds)."""
    run_r = json.loads(tiles_fit.RUN_R.read_text())
    rows, saw, within = _replay(run_r, tiles_fit.run_scale(run_r, RUN)["value"], set())
    targets = {(p["M"], p["N"], p["K"]) for p in run_r["sawtooth"] + run_r["squares"]
               if p["extras"]}
    at = [r for r in rows if (r["M"], r["N"], r["K"]) in targets]
    assert len(at) == 11 and not any(c["stand_in"] for r in at for c in r["candidates"])
    assert all(r["pick"].startswith("matmul_tma_stream_k") for r in rows if r["pick_stand_in"])
    _meets_the_bars(rows, saw, within)


def test_the_old_flags_run_s_candidates_read_against_the_flags_declared_now():
    """That run's candidates ran the old stream-K flags (declared_loop): read now, they carry those
    flags in their labels, and its extras with the flags declared now read as the candidates."""
    run_r = json.loads(tiles_fit.RUN_R.read_text())
    p = next(p for p in tiles_score.as_declared_now(run_r)["sawtooth"] if p["N"] == 8704)
    labels = {c["label"] for c in p["candidates"]} | {e["label"] for e in p["extras"]}
    assert {"TMA-stream-K 128x256x64 w8 s3 [flatten=False warp_specialize=True]",
            "TMA-stream-K 64x128x64 w4 s4 [flatten=False]", "TMA-stream-K 128x256x64 w8 s3",
            "TMA-stream-K 64x128x64 w4 s4", "TMA-tiled 128x256x64 w8 s3",
            "TMA-persistent 128x256x64 w8 s3 [warp_specialize=True]"} <= labels
    assert p["chosen"] == "TMA-stream-K 128x256x64 w8 s3 [flatten=False warp_specialize=True]"
    run_p = json.loads(tiles_fit.RUN_P.read_text())  # no declared_loop: read as it is
    assert tiles_score.as_declared_now(run_p)["sawtooth"][0]["candidates"] == \
        run_p["sawtooth"][0]["candidates"]
