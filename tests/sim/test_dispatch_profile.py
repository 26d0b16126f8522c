"""Dispatch profiles as data (sim/schedule/dispatch_profile.py): the checked-in H200 file, the user's
calibration found first, and damaged files refused with the field named."""

import json
from dataclasses import replace

import pytest

from sim.schedule.dispatch_profile import (BUILTIN_DIR, LEGACY_FORMAT, PROFILE_FORMAT, DispatchProfile,
                                  builtin_profile, gpu_key, load_profile, profile_for, save_profile,
                                  user_profile_path)
from sim.inputs.errors import UserError


@pytest.fixture(autouse=True)
def _own_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_the_checked_in_h200_profile_says_how_it_was_measured():
    p = builtin_profile()
    assert p.measured and p.gpu == "NVIDIA H200" and p.date == "2026-12-01"
    assert "benchmarks/dispatch_fit.py" in p.source and "tests/data/h200_spin_fit" in p.source
    assert p.label == "calibrated on NVIDIA H200, 2026-12-01"
    assert set(p.params.trickle) >= {1, 2, 4, 8, 16}
    # the SM interval is the memory-bound fit's: the bandwidth predictions use it
    assert p.params.sm_interval_us == 0.078


def test_other_gpus_are_labelled_assumed_until_calibrated(tmp_path):
    assert profile_for("H200").label == profile_for("NVIDIA H200").label == builtin_profile().label
    assumed = profile_for("L40S")
    assert not assumed.measured and assumed.params == builtin_profile().params
    assert assumed.label == "assumed from NVIDIA H200 (not measured on this GPU)"
    mine = DispatchProfile("NVIDIA L40S", True, "2026-12-02", "main.py calibrate",
                           replace(builtin_profile().params, burst_warps=40.0, trickle_cap_warps=44.0))
    path = user_profile_path("NVIDIA L40S")
    assert path == tmp_path / "config" / "warpscope" / "dispatch" / "L40S.json"
    path.parent.mkdir(parents=True)
    save_profile(path, mine)
    found = profile_for("L40S")
    assert found == mine and found.label == "calibrated on NVIDIA L40S, 2026-12-02"
    # a calibration of the H200 itself wins over the checked-in one
    save_profile(user_profile_path("H200"), DispatchProfile("NVIDIA H200", True, "2026-12-24", "x",
                                                                 builtin_profile().params))
    assert profile_for("NVIDIA H200").date == "2026-12-24"
    # a damaged user file is passed over
    user_profile_path("H200").write_text("{")
    assert profile_for("H200") == builtin_profile()


def test_round_trip_and_trickle_interpolation(tmp_path):
    params = replace(builtin_profile().params, trickle={1: (1.0, 1.0), 4: (0.5, 4.0)})
    p = DispatchProfile("X", False, "2026-01-01", "s", params)
    save_profile(tmp_path / "x.json", p)
    assert load_profile(tmp_path / "x.json") == p
    params = p.params
    assert params.trickle_for(1) == (1.0, 1.0) and params.trickle_for(32) == (0.5, 4.0)
    prob, median = params.trickle_for(2)  # halfway in log2 between 1 and 4
    assert prob == pytest.approx(0.75) and median == pytest.approx(2.0)


def _doc(**params):
    doc = {"format": LEGACY_FORMAT, **builtin_profile().to_json()}  # old files are still read
    doc["params"].update(params)
    return doc


@pytest.mark.parametrize("doc,words", [
    ({"format": "nope"}, f"not a {PROFILE_FORMAT} file"),
    ({**_doc(), "gpu": 5}, "field 'gpu'"),
    ({**_doc(), "measured": "yes"}, "field 'measured'"),
    (_doc(burst_warps=-1), "field 'params.burst_warps' must be a number in"),
    (_doc(tick_single_p=1.5), "field 'params.tick_single_p'"),
    (_doc(tick_us=True), "field 'params.tick_us'"),
    (_doc(trickle={"3000": [0.5, 1.0]}), "field 'params.trickle'"),
    (_doc(trickle=[1, 2]), "field 'params.trickle'"),
    (_doc(regfile_gap_warps=0), "field 'params.regfile_gap_warps' must be a number in"),
    (_doc(regfile_fraction="all"), "field 'params.regfile_fraction'"),
    (_doc(trickle_cap_warps=10.0), "'params.trickle_cap_warps' must be at least burst_warps"),
    ({**_doc(), "params": {k: v for k, v in _doc()["params"].items() if k != "tick_us"}},
     "field 'params.tick_us' is missing"),
])
def test_schema_errors_name_the_field(tmp_path, doc, words):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=words):
        load_profile(path)


def test_names_and_files():
    assert gpu_key("NVIDIA H200") == gpu_key("h200") == "H200"
    assert gpu_key("A100 80GB") == gpu_key("NVIDIA A100-SXM4-80GB") == "A100_80GB"
    assert gpu_key("NVIDIA H200 NVL") == "H200NVL"  # no preset is it exactly
    assert (BUILTIN_DIR / "H200.json").is_file()
    with pytest.raises(UserError, match="cannot read dispatch profile"):
        load_profile(BUILTIN_DIR / "missing.json")


def test_a_profile_rewritten_within_one_clock_tick_is_read_again(tmp_path):
    """The kernel stamps files with a coarse clock (a few ms), so a file rewritten at once can keep
    its st_mtime_ns; the fresh-root runs failed on that (a damaged file after a good one was
    served from the cache). Here the second write is given the first one's time exactly."""
    import os

    path = tmp_path / "H200.json"
    save_profile(path, DispatchProfile("NVIDIA H200", True, "2026-12-24", "x",
                                                                 builtin_profile().params))
    first = os.stat(path).st_mtime_ns
    assert load_profile(path).date == "2026-12-24"
    save_profile(path, DispatchProfile("NVIDIA H200", True, "2026-12-25", "a longer source",
                                             builtin_profile().params))
    os.utime(path, ns=(first, first))
    assert load_profile(path).date == "2026-12-25"
