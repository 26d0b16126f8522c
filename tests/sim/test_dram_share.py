"""Some SMs of an H200 move their blocks' bytes faster (resources/physics/H200.json "dram_share",
benchmarks/sm_share.py): the launch model runs more blocks on them where the DRAM bounds the
launch, as the recorded traces do, and the same on every SM where it does not. Traces of
another chip, recorded after the rule was made (tests/data/h200_memory_kernels_heldout), are held out."""

import json
from pathlib import Path

import numpy as np
import pytest

from sim.inputs.errors import UserError
from sim.model import memory_cost
from sim.rules.physics import physics_for, read_physics
from importlib import import_module


DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def share():
    return import_module("kernels.fitting.sm_share")


def test_the_h200_s_faster_sms_are_measured_and_the_shares_average_one():
    ph = physics_for("H200")
    d = ph.dram_share
    assert d.provenance == "measured" and "benchmarks/sm_share.py" in d.command and d.date
    w = np.array(d.weights(132))
    assert w.mean() == pytest.approx(1.0)
    assert sorted(np.flatnonzero(w > 1)) == sorted(d.faster_sms) and len(d.faster_sms) == 24
    assert w.max() / w.min() == pytest.approx(d.share)
    assert d.weights(16) == ()  # a file for more SMs than this chip has: even
    assert physics_for("H100 SXM").dram_share is None  # not measured there: even


def test_the_stored_sms_are_what_its_command_reads_off_the_fit_traces(share):
    rows = share.relative_counts(str(DATA / "h200_memory_kernels_fit"), "add_")
    assert len(rows) >= 4
    assert share.faster_sms(rows) == sorted(physics_for("H200").dram_share.faster_sms)


@pytest.mark.parametrize("section, says", [
    ({"faster_sms": "32-43", "share": 1.5, "provenance": "measured"}, "faster_sms"),
    ({"faster_sms": [1], "share": 1.5, "provenance": "measured"}, "above_bytes_in_flight"),
    ({"faster_sms": [1, 1], "share": 1.5, "provenance": "measured", "above_bytes_in_flight": 0}, "distinct"),
    ({"faster_sms": [1, True], "share": 1.5, "provenance": "measured", "above_bytes_in_flight": 0}, "faster_sms"),
    ({"faster_sms": [1], "share": 0, "provenance": "measured", "above_bytes_in_flight": 0}, "share"),
    ({"faster_sms": [1], "share": 1.5, "provenance": "fitted", "above_bytes_in_flight": 0}, "provenance"),
    ([1, 2], "faster_sms"),
])
def test_a_damaged_section_is_one_line(tmp_path, section, says):
    path = tmp_path / "H200.json"
    path.write_text(json.dumps({"format": "warpscope-physics/1", "gpu": "H200", "constants": {},
                                "dram_share": section}))
    with pytest.raises(UserError) as e:
        read_physics(path)
    assert says in str(e.value) and "\n" not in str(e.value) and "dram_share" in str(e.value)


def test_a_launch_the_port_does_not_bound_runs_alike_on_every_sm(share):
    from sim.traces.trace_bundle import load_bundle

    trace = load_bundle(DATA / "h200_memory_kernels_fit")["add_n24_b256"]  # recorded: CV 0.012
    counts = np.bincount(trace.sm.astype(int), minlength=132)
    got = share.predicted_counts(trace)
    assert counts.std() / counts.mean() < 0.02 and got.std() / got.mean() < 0.05


@pytest.mark.slow
def test_blocks_per_sm_follow_the_recorded_and_even_shares_do_not(share, monkeypatch):
    rows = share.agreement(str(DATA / "h200_memory_kernels_heldout"))
    # held out, another chip (20 of its 24 faster SMs are the stored ones): on every long
    # bandwidth-bound trace the counts correlate and their spread is the recorded one
    assert len(rows) >= 5
    assert all(r >= 0.6 for _, _, r in rows.values())
    assert all(abs(rec - got) < 0.08 for rec, got, _ in rows.values())
    from sim.traces.trace_bundle import load_bundle

    monkeypatch.setattr(memory_cost, "dram_share_for", lambda gpu: None)  # every SM alike
    trace = load_bundle(DATA / "h200_memory_kernels_heldout")["add_n24_b512_w2"]
    recorded = np.bincount(trace.sm.astype(int), minlength=132)
    even = share.predicted_counts(trace)
    assert even.std() / even.mean() < 0.05 and np.corrcoef(recorded, even)[0, 1] < 0.3


@pytest.mark.slow
def test_long_launches_are_even_below_the_gate_and_uneven_above(share):
    """Another chip, recorded after the rule was made (held out): long launches on both sides of
    the 64 KiB-in-flight gate. Below it the H200 ran the same count on every SM, above it not; the
    model's counts correlate with the recorded ones there."""
    from sim.traces.trace_bundle import load_bundle

    uneven = share.agreement(str(DATA / "h200_uneven_sms_heldout"))
    assert sorted(uneven) == ["add_n26_b2048_w16", "add_n27_b4096_w16", "square_n27_b4096_w8"]
    assert all(got > 0.08 and r >= 0.6 for _, got, r in uneven.values())
    traces = load_bundle(DATA / "h200_uneven_sms_heldout")
    for name in ("add_n26_b1024_w16", "copy_n26_b1024_w8", "square_n26_b2048_w16"):
        recorded = np.bincount(traces[name].sm.astype(int), minlength=132)
        got = share.predicted_counts(traces[name])
        assert recorded.std() / recorded.mean() < 0.06 and got.std() / got.mean() < 0.03, name


@pytest.mark.parametrize("gpu, block, listed", [("H200", 1024, True), ("H200", 256, False),
                                                ("H100 SXM", 1024, False)])
def test_the_confidence_names_the_share_where_it_shaped_the_launch(capsys, gpu, block, listed):
    """BLOCK_SIZE 1024 x 4 warps: 16 blocks of 12 KiB in flight per SM, over the gate; 256: under
    it; the H100 SXM has no measured share."""
    import main

    assert main.main(["explain", "--gpu", gpu, "--kernel", "add_triton", "--elements", "2^24",
                      "--block", str(block), "--json"]) == 0
    confidence = json.loads(capsys.readouterr().out)["confidence"]
    assert ("dram_share" in confidence["constants"]) == listed
    assert ("faster SMs' DRAM share (2026-12-03)" in confidence["label"]) == listed


def test_the_waves_are_told_as_the_grid_s_where_some_slots_ran_more_blocks():
    from sim.model.launch_model import Launch, predict_launch
    from sim.rules.devices import preset

    gpu = preset("H200")
    uneven = predict_launch(gpu, Launch(4096, 128, 16, 12.0 * 2**22, 2**22), max_waves=None)
    tl = uneven.simulation.timeline  # 1.94 waves; a faster SM's slot ran 4 blocks
    assert tl.waves == 4 and tl.waves_told == "1.9 waves, 4 on the busiest slot"
    textbook = predict_launch(gpu, Launch(16384, 128, 16, 12.0 * 2**22, 2**22), "uniform",
                              max_waves=None)  # equal blocks: every slot runs its share
    assert textbook.simulation.timeline.waves_told == "8 waves"


def test_a_fifo_or_a_huge_list_in_the_users_file_is_one_line_and_the_preset_s_is_used(
        tmp_path, monkeypatch, capsys):
    import os

    from sim.rules.devices import preset
    from sim.schedule.dispatch_profile import dram_share_for, user_profile_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = user_profile_path("H200")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # read as a file, it would block
    assert dram_share_for(preset("H200")) == physics_for("H200").dram_share
    path.unlink()
    path.write_text(json.dumps({"format": "warpscope-physics/1", "dram_share": {
        "faster_sms": list(range(5000)), "share": 1.2, "above_bytes_in_flight": 0,
        "provenance": "measured"}}))
    assert dram_share_for(preset("H200")) == physics_for("H200").dram_share
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("warpscope: ignored: ") for line in err)
    assert "pipe" in err[0] and "faster_sms" in err[1]
