"""Loads a thread cannot keep in flight (sim.model.load_rounds) and the slot hold by warps
(sim.model.memory_cost.slot_hold)."""

from dataclasses import replace
from pathlib import Path

import pytest

from sim.model.launch_model import Launch, predict_launch
from sim.model.load_rounds import inputs_of_traffic, load_rounds, values_per_thread
from sim.model.memory_cost import TripCost, slot_hold, warp_lag
from sim.rules.devices import preset
from sim.rules.physics import physics_for

DATA = Path(__file__).parents[1] / "data"
H200 = physics_for("H200")

# (registers, loaded values a thread) -> dependent rounds, read off Triton 3.7.1's sm_90 SASS of
# the trace kernels (python3 benchmarks/load_rounds_sass.py)
SASS = {("add BLOCK 2048 w4", 32, 32): 3, ("add BLOCK 4096 w4", 53, 64): 4,
        ("add BLOCK 1024 w1", 70, 64): 2, ("add BLOCK 1024 w4", 30, 16): 1,
        ("add BLOCK 512 w1", 46, 32): 1, ("copy BLOCK 4096 w4", 45, 32): 1,
        ("square BLOCK 256 w4", 13, 2): 1, ("copy BLOCK 16384 w4", 231, 128): 1}


@pytest.mark.parametrize("case", sorted(SASS), ids=lambda c: c[0])
def test_the_rule_tells_one_round_from_several_as_the_sass_does(case):
    _, regs, values = case
    rounds = load_rounds(regs, values, H200)
    assert (rounds > 1) == (SASS[case] > 1)
    assert rounds in (1, 3)  # serialized: the compiled code's most common depth


def test_unknown_registers_keep_one_round():
    assert load_rounds(0, 10_000, H200) == 1


def test_values_and_inputs_of_a_launch():
    # add 2^21 at BLOCK_SIZE 2048, 4 warps: 16 elements a thread, x and y
    assert inputs_of_traffic(12.0) == 2 and inputs_of_traffic(8.0) == 1
    assert values_per_thread(2**21, 1024, 128, 1, 2) == 32


def test_rounds_split_the_trips_and_keep_the_bytes():
    gpu = preset("H200")
    la = Launch(1024, 128, 16, 2**21 * 12.0, 2**21, 1, regs_per_thread=32)
    cost = TripCost.for_gpu(gpu, la)
    assert cost.trips == 3
    assert cost.bytes_per_trip * cost.trips * la.grid_blocks == pytest.approx(la.bytes_moved)
    assert TripCost.for_gpu(gpu, replace(la, regs_per_thread=0)).trips == 1
    # more rounds, longer: each waits for the one before
    assert predict_launch(gpu, la).makespan_us > predict_launch(gpu, replace(la, regs_per_thread=0)).makespan_us


def test_the_one_wave_add_of_big_tiles_within_the_bar_with_its_rounds():
    """add 2^21, BLOCK_SIZE 2048, 4 warps on the H200 (tests/data/h200_big_tiles_fit): no block ends
    before 4.3 us; with one round the model is 20% short, with the compiled three within 10%."""
    from sim.traces.compare import compare_trace
    from sim.traces.trace_bundle import load_bundle

    trace = load_bundle(DATA / "h200_big_tiles_fit")["add_n21_b2048_w4"]
    assert trace.meta["regs_per_thread"] == 32
    c = compare_trace(trace)
    assert c.score.within()
    off = compare_trace(replace(trace, meta={**trace.meta, "regs_per_thread": 0}))
    assert off.makespan_error < -0.15 and not off.score.within()


def test_the_hold_grows_with_the_warps_and_goes_at_a_barrier():
    assert warp_lag(1) == 0 and warp_lag(4) == pytest.approx(1.0)
    assert warp_lag(2) < warp_lag(4) < warp_lag(8) < warp_lag(32) < 5 / 3
    four = Launch(4096, 128, 16, 2**22 * 12.0, 2**22)
    assert slot_hold(four, H200) == pytest.approx(H200.value("slot_hold_fraction"))  # as fitted
    reduced = replace(four, reductions=2)
    assert slot_hold(reduced, H200) == pytest.approx(
        H200.value("slot_hold_fraction") * H200.value("barrier_hold_share"))
    assert slot_hold(replace(four, threads_per_block=32), H200) == 0.0
