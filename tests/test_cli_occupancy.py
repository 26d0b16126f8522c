"""`explain`, `simulate` and `compare` give the occupancy working, the block limits in Nsight
Compute's terms, and achieved beside theoretical occupancy."""

import json
from pathlib import Path

import pytest

import main
from sim.rules.devices import preset
from sim.rules.occupancy import occupancy

DATA = Path(__file__).parent / "data"


def run(capsys, *argv):
    code = main.main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_explain_shows_the_working_and_ncus_block_limits(capsys):
    out = run(capsys, "explain", "--gpu", "H200", "--elements", "2^20", "--block", "256", "--regs", "214",
              "--smem", "147456")
    # by hand: 214 x 32 = 6,848 -> 6,912 per warp; 147,456 + 1,024 = 148,480 B in a 228 KiB carveout
    for needle in ("6,848", "6,912 per warp", "148,480 B per block", "floor(233,472 / 148,480) = 1 block",
                   "Block Limit Registers", "Block Limit Shared Mem", "Theoretical Occupancy", "12.5%",
                   "Achieved Occupancy", "Waves Per SM"):
        assert needle in out, needle


def test_explain_json_working_ends_at_the_answer(capsys):
    data = json.loads(run(capsys, "explain", "--gpu", "T4", "--elements", "1e6", "--block", "96",
                          "--regs", "40", "--json"))
    want = occupancy(preset("T4"), 96, 40)
    work = data["occupancy_working"]
    assert work["blocks_per_sm"] == want.blocks_per_sm == data["occupancy"]["blocks_per_sm"]
    assert {lw["limiter"]: lw["blocks"] for lw in work["limiters"]} == want.limits
    assert 0 < data["achieved"]["achieved_occupancy"] <= data["achieved"]["theoretical_occupancy"] + 1e-9


def test_simulate_whole_waves_achieve_the_theoretical(capsys):
    # 132 SMs x 8 blocks of 256 threads x 3 waves, each block 10 us: every slot always busy
    data = json.loads(run(capsys, "simulate", "--gpu", "H200", "--elements", str(132 * 8 * 256 * 3),
                          "--block", "256", "--cost", "uniform", "--schedule", "ideal", "--json"))
    assert data["achieved_occupancy"] == pytest.approx(data["theoretical_occupancy"]) == pytest.approx(1.0)
    assert data["waves_per_sm"] == pytest.approx(3.0)
    out = run(capsys, "simulate", "--gpu", "H200", "--elements", "1e6", "--block", "256")
    assert "of theoretical 100%" in out and "waves per SM" in out


def test_compare_gives_recorded_and_simulated_achieved(capsys):
    out = run(capsys, "compare", str(DATA / "trace_h200.json"))
    assert "achieved occupancy: recorded" in out and "of theoretical 100%; 2.00 waves per SM" in out
    data = json.loads(run(capsys, "compare", str(DATA / "trace_h200.json"), "--json"))
    pair = data["occupancy"]
    assert 0 < pair["recorded_achieved_occupancy"] <= 1 and 0 < pair["simulated_achieved_occupancy"] <= 1
