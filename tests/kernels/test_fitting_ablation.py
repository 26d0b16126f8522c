"""kernels.fitting.ablation without a GPU: one number out at a time, and a prediction scored again
only where it read that number (the invariant that makes the shortcut exact)."""

import pytest

from kernels.fitting import ablation
from sim.model.launch_model import Launch, predict_launch
from sim.rules.devices import preset
from sim.rules.physics import GpuPhysics, physics_for
from sim.schedule.dispatch_profile import DispatchParams, profile_for

H200 = preset("H200")
ADD = Launch(3907, 256, 8, 12.0 * 1_000_000, 1_000_000)  # one sweep, no reduction
SOFTMAX = Launch(1024, 1024, 2, 8.0 * 4096 * 1024, 4096 * 1024, passes=3, reductions=2, loads=1)


@pytest.mark.parametrize("name", ["first_wave_block_ns", "dispatch.tick_us", "dram_share.share",
                                  "dispatch.trickle", "launch_gap_us"])
def test_one_number_out_and_every_other_as_shipped(name):
    ph = physics_for("H200")
    out = ablation.without(ph, name, ablation.neutral_value(name, ph))
    section, _, key = name.rpartition(".")
    if section == "dispatch":
        changed = {k for k, v in out.dispatch["params"].items() if v != ph.dispatch["params"][k]}
        assert changed == {key} and out.constants == ph.constants
    elif section == "dram_share":
        assert out.dram_share.share == 1.0 and out.dram_share.faster_sms == ph.dram_share.faster_sms
        assert out.constants == ph.constants
    else:
        changed = {k for k in ph.constants if out.value(k) != ph.value(k)}
        assert changed == {name} and out.dispatch == ph.dispatch


def test_the_neutral_gap_is_a_whole_launch_overhead():
    ph = physics_for("H200")
    assert ablation.neutral_value("launch_gap_us", ph) == ph.value("launch_overhead_us")


def test_the_reads_of_a_prediction_are_recorded_and_the_classes_restored():
    with ablation.Reads().recording() as add:
        predict_launch(H200, ADD)
    with ablation.Reads().recording() as softmax:
        predict_launch(H200, SOFTMAX)
    assert {"dram_latency_ns", "block_time_spread", "dispatch.sm_interval_us",
            "dram_share.share"} <= add.names
    assert "reduction_step_ns" not in add.names and "reduction_step_ns" in softmax.names
    assert "dispatch.tick_us" not in add.names  # the memory-bound schedule has no dispatch ticks
    assert "__getattribute__" not in DispatchParams.__dict__
    assert GpuPhysics.__dict__["dram_share"] is None  # the dataclass's default again
    assert profile_for("H200").params.tick_us > 0 and physics_for("H200").dram_share is not None


def test_a_number_out_changes_only_the_predictions_that_read_it():
    shipped = predict_launch(H200, ADD).makespan_us
    ph = physics_for("H200")
    for name, same in (("reduction_step_ns", True), ("dram_latency_ns", False)):
        out = ablation.without(ph, name, ablation.neutral_value(name, ph))
        with ablation.patched(lambda real, out=out: out):
            assert (predict_launch(H200, ADD).makespan_us == shipped) is same, name
    assert predict_launch(H200, ADD).makespan_us == shipped  # the shipped physics once done


def test_a_bad_name_or_no_set_is_one_line(capsys):
    assert ablation.main(["--subset", "--only", "warp_magic"]) == 2
    assert ablation.main(["--only", "trip_load_ns"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "warp_magic" in err[0] and "--bundles" in err[1]


def test_a_run_on_a_small_bundle(tmp_path):
    """End to end on two recorded spin traces: a number no prediction reads leaves every count as
    shipped; the baseline is written once and read back by the next run."""
    import json

    from sim.traces.trace_bundle import load_bundle, write_bundle

    traces = load_bundle(ablation.DATA / "h200_spin_fit")
    for name, folder in (("G-spin-w4-20us-2.2w", "held"), ("B-sleep-w8-20us-3.3w", "fit")):
        (tmp_path / folder).mkdir()
        write_bundle(tmp_path / folder, [(name, "V", traces[name], {})])
    args = ["--bundles", str(tmp_path), "--held-out", "held", "--fitting", "fit", "--no-times",
            "--only", "reduction_step_ns,dispatch.tick_us", "--baseline", str(tmp_path / "b.json")]
    assert ablation.main(args + ["--json", str(tmp_path / "one.json")]) == 0
    assert ablation.main(args + ["--json", str(tmp_path / "two.json")]) == 0
    one, two = (json.loads((tmp_path / f).read_text())["rows"] for f in ("one.json", "two.json"))
    assert one == two
    shipped, step, tick = one
    assert step["traces_read_it"] == 0
    assert {k: step[k] for k in shipped if k != "name"} == {k: v for k, v in shipped.items() if k != "name"}
    assert tick["traces_read_it"] == 1  # the busy spin's visits; the sleep has none
    assert shipped["traces_held_out"][1] == shipped["traces_fitting"][1] == 1
