"""Per-GPU constants as data (sim/rules/physics.py) and the one rule from a device name to a preset."""

import dataclasses
import json

import pytest

from sim.rules.devices import match_device, preset, presets, spec_from_device
from sim.schedule.dispatch_profile import DispatchProfile, builtin_profile, load_profile, save_profile
from sim.inputs.errors import UserError
from sim.rules.physics import MODEL_CONSTANTS, PHYSICS_DIR, physics_for, read_physics, same_gpu

# what drivers really report -> (preset, exact?)
DRIVER_NAMES = {
    "NVIDIA H200": ("H200", True),
    "NVIDIA H200 NVL": ("H200", False),  # the NVL form: other clocks and power, data assumed
    "NVIDIA H100 80GB HBM3": ("H100 SXM", True),
    "NVIDIA H100 PCIe": ("H100 PCIe", True),
    "NVIDIA A100-SXM4-80GB": ("A100 80GB", True),
    "NVIDIA A100-SXM4-40GB": ("A100 40GB", True),
    "NVIDIA A100-PCIE-40GB": ("A100 40GB", False),
    "NVIDIA A100 80GB PCIe": ("A100 80GB", False),
    "Tesla V100-SXM2-16GB": ("V100", True),
    "Tesla V100-PCIE-32GB": ("V100", False),
    "Tesla T4": ("T4", True),
    "NVIDIA GeForce RTX 4090": ("RTX 4090", True),
    "NVIDIA GeForce RTX 3090": ("RTX 3090", True),
    "NVIDIA GeForce RTX 5090": ("RTX 5090", True),
    "NVIDIA L40S": ("L40S", True),
    "NVIDIA L40": ("L40S", False),  # a sibling, not the L40S
    "NVIDIA B200": ("B200", True),
}


@pytest.mark.parametrize("name", DRIVER_NAMES)
def test_the_one_rule_on_real_driver_names(name):
    m = match_device(name)
    assert (m.preset.name, m.exact) == DRIVER_NAMES[name], m.why
    assert bool(m.why) != m.exact  # an inexact match says what differs
    assert same_gpu(name, m.preset) == m.exact
    ph = physics_for(name)
    if not m.exact:  # a stand-in's constants are assumptions, labelled with the GPU they are from
        assert all(c.provenance == "assumed" and c.short_label == f"assumed from {m.preset.name}"
                   for c in ph.constants.values())
        assert ph.dispatch is None


def test_preset_names_match_themselves_and_a_different_sm_count_is_inexact():
    for name in presets():
        assert match_device(name).preset.name == name and match_device(name).exact
    assert not match_device("NVIDIA H200", sm_count=100).exact
    assert match_device("Radeon RX 7900").preset is None


def test_the_h200_file_gives_every_model_constant_its_provenance():
    ph = read_physics(PHYSICS_DIR / "H200.json")
    assert set(MODEL_CONSTANTS) <= set(ph.constants)
    for name, c in ph.constants.items():
        assert c.provenance in ("measured", "published", "assumed") and c.source, name
        if c.provenance == "measured":
            assert c.date and c.command, name
    assert ph.value("launch_overhead_us") == 4.1 and ph.value("dram_latency_ns") == 351
    assert ph.dispatch["gpu"] == "NVIDIA H200" and ph.dispatch["measured"]


def test_a_gpu_without_a_figure_takes_the_nearest_presets_labelled():
    detected = spec_from_device(name="NVIDIA Hopper X", compute_capability=(9, 0), sm_count=144,
                                l2_bytes=1, memory_bytes=1, peak_dram_gbps=4000.0, clock_mhz=1800)
    ph = physics_for(detected)
    assert all(c.provenance == "assumed" and c.assumed_from for c in ph.constants.values())
    h200 = physics_for(preset("H200"))
    assert physics_for(dataclasses.replace(preset("H200"), detected=True)).constants == h200.constants


def test_a_damaged_file_is_one_line(tmp_path):
    bad = tmp_path / "X.json"
    for doc, words in (({"format": "nope"}, "not a warpscope-physics/1 file"),
                       ({"format": "warpscope-physics/1", "constants": {"launch_overhead_us": 4}},
                        "must be an object"),
                       ({"format": "warpscope-physics/1", "constants": {"launch_overhead_us": {
                           "value": 4.4, "unit": "ms", "provenance": "measured", "source": "x"}}},
                        "must be in us"),
                       ({"format": "warpscope-physics/1", "constants": {"copy_fraction": {
                           "value": 0.9, "unit": "fraction", "provenance": "guessed"}}},
                        "provenance 'guessed'")):
        bad.write_text(json.dumps(doc))
        with pytest.raises(UserError, match=words):
            read_physics(bad)


def test_calibrate_writes_the_same_format_and_old_files_still_load(tmp_path):
    profile = DispatchProfile("NVIDIA L40S", True, "2026-12-02", "main.py calibrate",
                              builtin_profile().params)
    save_profile(tmp_path / "L40S.json", profile)
    data = json.loads((tmp_path / "L40S.json").read_text())
    assert data["format"] == "warpscope-physics/1" and data["dispatch"]["gpu"] == "NVIDIA L40S"
    read_physics(tmp_path / "L40S.json")  # a per-GPU file the loader reads
    old = {"format": "warpscope-dispatch/1", **profile.to_json()}
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_profile(tmp_path / "old.json") == load_profile(tmp_path / "L40S.json") == profile


def test_writing_a_profile_into_a_per_gpu_file_keeps_its_constants(tmp_path):
    """benchmarks/dispatch_fit.py rewrites resources/physics/H200.json: only its dispatch section."""
    path = tmp_path / "H200.json"
    path.write_text((PHYSICS_DIR / "H200.json").read_text())
    before = read_physics(path).constants
    save_profile(path, DispatchProfile("NVIDIA H200", True, "2026-12-24", "refit", builtin_profile().params))
    after = read_physics(path)
    assert after.constants == before and after.dispatch["date"] == "2026-12-24"
