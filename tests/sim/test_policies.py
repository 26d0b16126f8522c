"""Cost models and placements by id: one registry each, old spellings still understood, and the
command line and the window schedule the same launch the same way."""

import json

import numpy as np
import pytest

import main
from sim.devices import preset
from sim.errors import UserError
from sim.occupancy import occupancy
from sim.policies import (COST_MODELS, PLACEMENTS, CostParams, cost_model_id, make_placement,
                          placement_id, plan_blocks, schedule_launch)
from sim.scheduler import SmOrderPlacement, TpcSpreadPlacement


@pytest.mark.parametrize("text,pid", [
    ("sm", "sm-order"), ("SM order", "sm-order"), ("sm-order", "sm-order"), ("tpc", "tpc-spread"),
    ("TPC/GPC spread", "tpc-spread"), (" tpc-spread ", "tpc-spread"), ("recorded", "recorded"),
])
def test_placement_spellings(text, pid):
    assert placement_id(text) == pid


def test_cost_spellings_and_unknown_names():
    assert cost_model_id("memory-bound") == "memory" == cost_model_id("memory")
    assert cost_model_id("uniform") == "uniform"
    with pytest.raises(UserError, match="known: uniform, memory"):
        cost_model_id("quantum")
    with pytest.raises(UserError, match="unknown placement"):
        placement_id("recorded", allowed=("sm-order", "tpc-spread"))


def test_every_policy_is_built_and_titled():
    assert isinstance(make_placement("sm"), SmOrderPlacement)
    assert isinstance(make_placement("tpc-spread"), TpcSpreadPlacement)
    with pytest.raises(UserError):
        make_placement("recorded")
    for registry in (COST_MODELS, PLACEMENTS):
        for pid, policy in registry.items():
            assert policy.id == pid and policy.title and policy.help


def test_plan_blocks_leaves_out_whole_waves_only():
    assert plan_blocks(1_000, 100, None) == (1_000, 0)
    assert plan_blocks(1_000, 100, 5_000) == (1_000, 0)
    n, skip = plan_blocks(10_050, 100, 1_000)
    assert n + 100 * skip == 10_050 and n <= 1_000 and skip == 91
    assert plan_blocks(150, 100, 10) == (150, 0)  # never leaves out the only full wave


def test_schedule_launch_leaves_out_identical_waves():
    gpu = preset("T4")
    occ = occupancy(gpu, 256)  # 160 slots
    whole = schedule_launch(gpu, occ, 5_000, cost="uniform", placement="sm")
    part = schedule_launch(gpu, occ, 5_000, cost="uniform", placement="sm", max_blocks=1_000)
    assert part.n_blocks <= 1_000 and part.first_block == part.skipped_waves * 160
    assert part.waves == whole.waves and part.summary()["blocks"] == 5_000
    tail = whole.timeline
    assert part.timeline.tail_us == pytest.approx(tail.tail_us)


def test_schedule_launch_is_what_simulate_prints(capsys):
    """The window and `simulate` both call schedule_launch: same launch, same numbers."""
    gpu = preset("H200")
    occ = occupancy(gpu, 256)
    sim = schedule_launch(gpu, occ, 3_907, elements=1_000_000, cost="memory", placement="tpc")
    assert main.main(["simulate", "--gpu", "H200", "--elements", "1e6", "--block", "256",
                      "--placement", "tpc", "--cost", "memory-bound", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tail_fraction"] == round(sim.timeline.tail_fraction, 4) > 0
    assert out["makespan_us"] == round(sim.makespan_us, 4)
    assert (out["placement"], out["cost"]) == ("tpc-spread", "memory")


def test_a_tile_per_block_moves_more_bytes_per_block():
    """The fast Numba add: 977 blocks of 256 threads, 1,024 elements each (not 3,907 of 256)."""
    gpu = preset("H200")
    occ = occupancy(gpu, 256)
    tiled = schedule_launch(gpu, occ, 977, elements=1_000_000, elements_per_block=1_024,
                            cost="memory", placement="sm")
    naive = schedule_launch(gpu, occ, 3_907, elements=1_000_000, cost="memory", placement="sm")
    assert tiled.n_blocks == 977 and naive.n_blocks == 3_907
    durations = tiled.block_end_us - tiled.block_start_us
    assert np.median(durations) > np.median(naive.block_end_us - naive.block_start_us)


def test_bad_parameters_are_one_line():
    gpu = preset("T4")
    with pytest.raises(UserError, match="cannot be negative"):
        schedule_launch(gpu, occupancy(gpu, 256), 10, params=CostParams(latency_us=-1))
    with pytest.raises(UserError, match="nothing to schedule"):
        schedule_launch(gpu, occupancy(gpu, 256, 300), 10)
