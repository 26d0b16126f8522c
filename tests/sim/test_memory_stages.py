"""The memory-bound model's stages (sim.model.launch_model.MEMORY_STAGES): listed once, in order,
each one's change to the makespan reported, and each one can be left out by name."""

import pytest

from sim.inputs.errors import UserError
from sim.model.launch_model import MEMORY_STAGES, Launch, predict_launch
from sim.rules.devices import preset

H200 = preset("H200")
LAUNCHES = [Launch(3907, 256, 8, 12.0 * 1_000_000, 1_000_000),  # the article's add
            Launch(2**22 // 128, 128, 16, 8.0 * 2**22, 2**22),  # a dispatcher-bound copy
            Launch(2**24 // 1024, 1024, 2, 12.0 * 2**24, 2**24)]  # skipped leading waves


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_stages_shares_add_up_to_the_simulated_makespan(launch):
    p = predict_launch(H200, launch)
    names = [name for name, _ in p.stages]
    assert names == ["queueing model"] + [name for name, _ in MEMORY_STAGES]
    assert sum(p.stage_shares().values()) == pytest.approx(p.simulation.makespan_us, rel=1e-9)
    assert p.summary()["stages_us"].keys() == p.stage_shares().keys()


def test_leaving_every_stage_out_is_the_queueing_models_own_schedule():
    launch = LAUNCHES[0]
    bare = predict_launch(H200, launch, skip_stages=tuple(n for n, _ in MEMORY_STAGES))
    full = predict_launch(H200, launch)
    assert bare.stages[-1][1] == bare.stages[0][1] == full.stages[0][1]
    assert bare.simulation.makespan_us == pytest.approx(full.stages[0][1])


def test_an_unknown_stage_is_one_line():
    with pytest.raises(UserError, match="no memory-bound stage 'warp pacing'"):
        predict_launch(H200, LAUNCHES[0], skip_stages=("warp pacing",))


def test_explain_json_reports_each_stage(capsys):
    import json

    import main

    assert main.main(["explain", "--gpu", "H200", "--elements", "1000000", "--block", "256",
                      "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    stages = out["stages_us"]
    assert list(stages)[0] == "queueing model" and len(stages) == len(MEMORY_STAGES) + 1
