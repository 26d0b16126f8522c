"""Cost models and placements by id: one registry each, old spellings still understood, and the
command line and the window schedule the same launch the same way."""

import json

import numpy as np
import pytest

import main
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy
from sim.rules.geometry import launch_geometry
from sim.model.launch_model import Launch, launch_of, predict_launch
from sim.schedule.policies import (COST_MODELS, PLACEMENTS, cost_model_id, make_placement, placement_id,
                          plan_blocks)
from sim.schedule.scheduler import SmOrderPlacement, TpcSpreadPlacement


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


def test_the_launch_model_leaves_out_identical_waves():
    gpu = preset("T4")
    occ = occupancy(gpu, 256)  # 160 slots
    launch = Launch(5_000, 256, occ.blocks_per_sm, 12.0 * 5_000 * 256, 5_000 * 256)
    whole = predict_launch(gpu, launch, "uniform", placement="sm", max_waves=None).simulation
    part = predict_launch(gpu, launch, "uniform", placement="sm", max_waves=6).simulation
    assert part.n_blocks <= 1_000 and part.first_block == part.skipped_waves * 160
    assert part.waves == whole.waves and part.summary()["blocks"] == 5_000
    assert part.timeline.tail_us == pytest.approx(whole.timeline.tail_us)


def test_the_launch_model_is_what_simulate_prints(capsys):
    """The window and `simulate` both call the launch model: same launch, same numbers."""
    gpu = preset("H200")
    p = predict_launch(gpu, Launch(3_907, 256, 8, 12e6, 1_000_000), placement="tpc")
    assert main.main(["simulate", "--gpu", "H200", "--elements", "1e6", "--block", "256",
                      "--placement", "tpc", "--cost", "memory-bound", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tail_fraction"] == round(p.tail_fraction, 4) > 0
    assert out["makespan_us"] == round(p.makespan_us, 4)
    assert out["whole_launch_us"] == round(p.whole_launch_us, 4)
    assert (out["placement"], out["cost"]) == ("tpc-spread", "memory")


def test_a_kernels_tile_sets_the_blocks_it_simulates():
    """The fast Numba add: 977 blocks of 256 threads, 1,024 elements each (not 3,907 of 256)."""
    gpu = preset("H200")
    tiled = predict_launch(gpu, Launch(977, 256, 8, 12e6, 1_000_000), placement="sm").simulation
    naive = predict_launch(gpu, Launch(3_907, 256, 8, 12e6, 1_000_000), placement="sm").simulation
    assert tiled.n_blocks == 977 and naive.n_blocks == 3_907
    durations = tiled.block_end_us - tiled.block_start_us
    assert np.median(durations) > np.median(naive.block_end_us - naive.block_start_us)


def test_bad_parameters_are_one_line():
    gpu = preset("T4")
    with pytest.raises(UserError, match="some bytes"):
        predict_launch(gpu, Launch(10, 256, 6, 0.0, 2560))
    with pytest.raises(UserError, match="no prediction"):
        bad = occupancy(gpu, 256, 300)
        launch_of(bad, launch_geometry(gpu, 2560, 256, bad))