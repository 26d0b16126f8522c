"""The run diff: two launches, traces or bench results told as one story."""

from pathlib import Path

import pytest

from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy
from sim.model.next_step import NO_CLEAR_CHANGE
from sim.model.run_diff import diff_runs, read_run
from sim.model.what_if import WhatIf, predict_outcome

ROOT = Path(__file__).parents[2]
TRACES = ROOT / "tests" / "data" / "matmul_traces"
BENCH = ROOT / "tests" / "data" / "h200_size_sweep.json"


def test_two_launches_tell_registers_then_blocks_then_waves_then_time():
    d = diff_runs("gpu=H200,elements=2^24,block=1024,regs=40",
                  "gpu=H200,elements=2^24,block=1024,regs=32")
    story = d.story()
    assert story.index("32 registers per thread instead of 40") < story.index(
        "2 blocks fit per SM instead of 1") < story.index("waves") < story.index("It takes")
    # the times are the one prediction's (sim.model.what_if)
    h200 = preset("H200")
    assert d.a.time_us == predict_outcome(h200, WhatIf(1024, 40, 0, 2**24)).time_us
    assert d.b.blocks_per_sm == occupancy(h200, 1024, 32).blocks_per_sm == 2
    changed = {name for name, _, _, c in d.rows() if c}
    assert {"registers per thread", "blocks per SM", "waves", "time"} <= changed
    assert "threads per block" not in changed


def test_a_time_change_under_the_noise_band_says_so():
    """The next step's 2% band (sim.model.next_step.NO_CLEAR_CHANGE) in the story too: a ninth
    block per SM for +1.9% is too small to tell from noise; the register step above is not."""
    small = diff_runs("gpu=H200,elements=2^23,block=256,regs=18", "gpu=H200,elements=2^23,block=224,regs=18")
    big = diff_runs("gpu=H200,elements=2^24,block=1024,regs=40", "gpu=H200,elements=2^24,block=1024,regs=32")
    assert abs(small.b.time_us / small.a.time_us - 1) <= NO_CLEAR_CHANGE \
        < abs(big.b.time_us / big.a.time_us - 1)
    assert "too small to tell from a timing's run-to-run noise" in small.story()
    assert "too small" not in big.story()


def test_two_recorded_traces_show_the_nearly_empty_second_wave():
    d = diff_runs(str(TRACES / "matmul_persistent_132tiles.json"),
                  str(TRACES / "matmul_persistent_133tiles.json"))
    assert (d.a.blocks, d.b.blocks) == (132, 133)
    assert d.b.last_wave_fill == pytest.approx(1 / 132)
    assert "1% full instead of 100%" in d.story()
    assert d.b.time_us > d.a.time_us


def test_a_bench_measurement_is_picked_by_number():
    run = read_run(f"{BENCH}#1")
    assert run.time_how == "measured" and run.kernel and run.time_us > 0
    with pytest.raises(UserError, match="pick one"):
        read_run(str(BENCH))


@pytest.mark.parametrize("text, message", [
    ("gpu=H200,foo=1", "is not one of"),
    ("gpu=H200,block=2048", "block must be"),
    ("gpu=H200,regs=300,block=1024", "cannot run"),
    ("/nonexistent/file.json", "nonexistent"),
])
def test_bad_runs_are_one_line(text, message):
    with pytest.raises(UserError, match=message):
        read_run(text)
