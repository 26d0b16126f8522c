"""The launch model's memory-bound constants fitted on run F (benchmarks/fit_launch.py,
benchmarks/NOTES-fit.md): held-out scores pinned at what they measured (2026-12-01, -02), so a change
that loses them fails. Only TEST data (never fitted on) is scored here, on the fast part of it."""

from pathlib import Path

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.model.launch_model import Launch, TripCost, predict_launch
from sim.rules.physics import physics_for
from tests.bench_scripts import bench_script

BENCH = Path(__file__).parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def fit():
    return bench_script("fit_launch")


def test_fitted_constants_are_measured_with_their_command():
    ph = physics_for("H200")
    for name in ("launch_overhead_us", "block_time_spread", "slot_hold_fraction", "launch_gap_us",
                 "reduction_step_ns"):
        c = ph.constant(name)
        assert c.provenance == "measured" and "benchmarks/fit_launch.py --fit" in c.command
        assert "TEST (held out)" in c.source


def test_fit_and_test_sets_do_not_overlap(fit):
    assert not set(fit.FIT_KERNELS) & set(fit.TEST_KERNELS)
    # the reduction step's one FIT point is a TEST kernel's one size, scored with FIT only
    assert fit.STEP_FIT[0] in fit.TEST_KERNELS and fit.is_fit_kernel(
        {"kernel": fit.STEP_FIT[0], "elements": fit.STEP_FIT[1]})
    assert not fit.is_fit_kernel({"kernel": fit.STEP_FIT[0], "elements": 2 * fit.STEP_FIT[1]})
    assert all(not n.startswith(fit.FIT_TRACE) for n in fit.traces(fit=False) if "/" not in n)


FAST_TEST_TRACES = {"real_h200": ("copy_n20_b1024", "copy_n24_b1024", "square_n20_b1024",
                                  "softmax_n20_c1024", "softmax_n24_c4096"),
                    "kernel_files_h200": ("add_triton_tutorial_n20", "layernorm_triton_n20",
                                          "softmax_triton_n24", "square_triton_n24",
                                          "stencil_numba_n20")}


def test_held_out_real_kernel_traces_within_the_bars(fit):
    from sim.traces.trace_bundle import load_bundle

    named = {}
    for bundle, names in FAST_TEST_TRACES.items():
        traces = load_bundle(fit.DATA / bundle)
        named.update({n: fit.with_declared_chain(traces[n]) for n in names})  # as the tools read them
    rows = fit.trace_scores(named)
    # measured 2026-12-01: 6 of 10 within all three bars (2 of 10 before the fit); 2026-12-02
    # (the SM's slowest block bounded by its bytes): 6 and 7, read without their declared chains.
    # With them (as fit_launch.py and dispatch_score.py read them), 2026-12-02 sixth pass: 7 of 10
    # within, 8 on residency, both before and after the warps' and the barrier's hold. Misses:
    # copy 2^20 (-10.3%), the one-wave softmax (+8.4%, residency 0.151), the stencil (0.187)
    assert sum(r["within"] for r in rows) >= 7
    assert sum(r["residency_ok"] for r in rows) >= 8


def test_held_out_kernel_times(fit):
    points = [p for p in fit.kernel_points()
              if p["kernel"] in ("square_triton", "add_relu_triton", "add_numba_naive", "softmax_kernel")]
    rows = fit.kernel_scores(points, preset("H200"))
    within = sum(abs(p["error"]) <= fit.BAR for p in rows)
    # measured 2026-12-01: 60 of 68; 2026-12-02: 64; with the per-load trip overhead (the example
    # softmax loads one array: 99 ns a trip, not 180) 60, every miss the softmax (8 of 17: its
    # row's reduction is a chain of passes, not one trip; benchmarks/NOTES-bandwidth.md); with its
    # declared chain (two reductions, NOTES-fit.md third pass) 66: misses 2^22 +26%, 2^23 +15%
    assert len(rows) == 68 and within >= 66
    assert all(p["kernel"] == "softmax_kernel" for p in rows if abs(p["error"]) > fit.BAR)


@pytest.mark.slow  # 193 launches predicted
def test_run_f_s_sweep_on_another_h200_meets_the_bar(fit):
    """Run V (2026-12-03, benchmarks/device_run_v.sh): run F's whole sweep measured again on a
    freshly lent H200, nothing fitted on it. 178 of 193 within 10% (92%; the bar is 90%): the
    misses are launches of 2^12-2^14 elements (that machine's launches were ~0.3 us quicker,
    4.22 against 4.51 us, predicted ~11% long) and the example softmax at 2^21-2^23 (+10..+21%).
    177 since the faster SMs' DRAM share (eighth session): eager add+ReLU at 2^22 +9.4 -> +11.4%."""
    rows = fit.kernel_scores(fit.kernel_points(BENCH / "run_v"), preset("H200"))
    missed = [p for p in rows if abs(p["error"]) > fit.BAR]
    assert len(rows) == 193 and len(missed) <= 16  # 90% of 193 is 174
    assert all(p["elements"] <= 2**14 or p["kernel"] in ("softmax_kernel", "add_relu_torch_eager")
               for p in missed), [(p["kernel"], p["elements"]) for p in missed]


def test_held_out_eager_stream_and_fit_pairs(fit):
    """Eager add+ReLU (TEST) is two launches on one stream: the second pays the gap fitted on run
    K's copy pairs (FIT), not a whole launch overhead. Measured 2026-12-02: 15 of 17 within 10%
    (0 of 17 when each launch paid the whole overhead); the pairs themselves 13 of 17."""
    gpu = preset("H200")
    eager = fit.kernel_scores([p for p in fit.kernel_points() if p["kernel"] == "add_relu_torch_eager"], gpu)
    assert len(eager) == 17 and sum(abs(p["error"]) <= fit.BAR for p in eager) >= 15
    pairs = fit.kernel_scores(fit.pair_points(), gpu)
    assert len(pairs) == 17 and sum(abs(p["error"]) <= fit.BAR for p in pairs) >= 13


def test_timings_shown_wrong_are_left_out_with_their_reason(fit):
    """run F's torch.compile add+ReLU at 2^16..2^20 timed the host path (run K: 4.8-7.9 us with a
    500 us spin ahead, 17-23 us with bench's 50 us spin): out of the population, and only they."""
    kept = {(p["kernel"], p["elements"]) for p in fit.kernel_points()}
    assert fit.EXCLUDED and not fit.EXCLUDED & kept
    compile_rows = [r for r in fit.json.loads((fit.RUN_K).read_text())["compile"]
                    if ("add_relu_torch_compile", r["n"]) in fit.EXCLUDED]
    assert len(compile_rows) == 3 and all(r["ev_spin500"] < 8.0 for r in compile_rows)
    assert ("add_relu_torch_compile", 2**12) in kept and ("add_relu_torch_compile", 2**22) in kept


def test_blocks_straggle_and_slots_are_not_all_stamped():
    """A full GPU of memory-bound blocks: stamped times spread (the H200's CV is 0.28-0.42) and the
    stamped intervals fill about 1/(1 + hold) of the slots (the H200 kept 69-81%)."""
    gpu = preset("H200")
    grid = 132 * 16 * 8
    p = predict_launch(gpu, Launch(grid, 128, 16, 12.0 * grid * 1024, grid * 1024), "memory",
                       max_waves=None)
    sim = p.simulation
    times = sim.block_end_us - sim.block_start_us
    # 2026-12-02: 0.25, where the H200's b1024 adds show 0.30-0.33: the bound on an SM's slowest
    # block (its bytes through the port) narrows the spread of these 12 KB blocks (NOTES-fit.md)
    assert 0.2 < times.std() / times.mean() < 0.45
    hold = physics_for(gpu).value("slot_hold_fraction")
    mid = np.linspace(0.3, 0.7, 9) * sim.makespan_us
    full = np.mean([np.count_nonzero((sim.block_start_us <= t) & (sim.block_end_us > t)) for t in mid])
    assert abs(full / (132 * 16) - 1 / (1 + hold)) < 0.08
    assert isinstance(p.sources, dict) and TripCost.for_gpu(gpu, Launch(1, 128, 16, 1e6)).hold == hold


def test_held_out_torch_softmax_with_its_declared_chain(fit):
    """torch's softmax declares one sweep and two block-wide reductions (resources/examples/
    softmax_triton.py `peer_chain`); the reduction step was fitted on its one-row launch only
    (fit.STEP_FIT). Its 16 other sizes are held out: measured 2026-12-02 16 of 16 within 10%
    (-0.1..-9.3%); 0 of 17 (-20..-37%) before the chain."""
    points = [p for p in fit.kernel_points()
              if p["kernel"] == "softmax_kernel_torch" and not fit.is_fit_kernel(p)]
    rows = fit.kernel_scores(points, preset("H200"))
    assert len(rows) == 16 and sum(abs(p["error"]) <= fit.BAR for p in rows) >= 16
    assert all(p["launches"][0].reductions == 2 for p in rows)


def test_held_out_kernel_file_traces_with_their_chain(fit):
    """The example layernorm (3 sweeps, 2 reductions) and softmax (1 sweep, 2 reductions) traced
    on the H200, one wave of 2^20 elements: makespan -61% / -23% before the chain; measured
    2026-12-02 -28% / +9%; +5.7% for the layernorm since its chain's tile makes each sweep 4 loop
    steps (sim/model/chain.py). Sixth pass (the slot hold by warps and barrier,
    sim.model.memory_cost.slot_hold): the softmax's warps leave together after its last
    reduction, so thread 0's stamp moves later in the slot: +9.1% -> +12.2% (residency 0.234 ->
    0.115), a miss on makespan; the layernorm stays +6.2%."""
    from sim.traces.trace_bundle import load_bundle

    traces = load_bundle(fit.DATA / "kernel_files_h200")
    named = {n: fit.with_declared_chain(traces[n])
             for n in ("layernorm_triton_n20", "softmax_triton_n20")}
    assert named["layernorm_triton_n20"].meta["chain"] == {"passes": 3, "reductions": 2,
                                                           "tile": "BLOCK_SIZE"}
    rows = {r["name"]: r for r in fit.trace_scores(named)}
    assert rows["layernorm_triton_n20"]["makespan_ok"]
    assert 0.0 < rows["softmax_triton_n20"]["makespan_error"] < 0.13
    assert rows["softmax_triton_n20"]["residency_ok"]
