"""One answer per question, checked by fact: every surface that shows a GPU, a wave count, a DRAM
latency or a dispatch number gets it from the one rule or the one data file, whatever it is
asked through. Each test puts one question to every public path and compares the answers."""

import dataclasses
import json

import pytest

from sim.inputs.places import resource
from sim.model.run_diff import read_run
from sim.model.what_if import WhatIf, predict_outcome
from sim.rules.devices import preset, presets
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD, launch_geometry, waves_of
from sim.rules.occupancy import occupancy

# The driver's own names (what torch.cuda.get_device_name and ncu print) and the preset each is.
DRIVER_NAMES = {"NVIDIA H100 80GB HBM3": "H100 SXM", "NVIDIA A100-SXM4-80GB": "A100 80GB",
                "NVIDIA GeForce RTX 4090": "RTX 4090", "NVIDIA H200": "H200",
                "Tesla V100-SXM2-16GB": "V100", "Tesla T4": "T4"}


def _bench_file(tmp_path, device: str):
    row = {"kernel": "add_triton", "elements": 2**24, "threads_per_block": 256,
           "regs_per_thread": 32, "smem_per_block_bytes": 0, "grid_blocks": 2**24 // 256,
           "median_ms": 0.02, "device": device}
    path = tmp_path / f"{device.replace(' ', '_')}.json"
    path.write_text(json.dumps({"format": "warpscope-bench/1", "measurements": [row]}))
    return str(path)


@pytest.mark.parametrize("device, name", DRIVER_NAMES.items())
def test_a_driver_name_is_its_preset_everywhere(tmp_path, device, name):
    """--gpu, `diff` of a bench file and the calibration's file name all take the driver's name."""
    from sim.schedule.dispatch_profile import user_profile_path

    assert preset(device).name == name
    gpu = preset(name)
    run = read_run(_bench_file(tmp_path, device))
    occ = occupancy(gpu, 256, 32, 0)
    assert run.blocks_per_sm == occ.blocks_per_sm
    assert run.waves == pytest.approx(waves_of(2**24 // 256, occ.blocks_per_sm * gpu.sm_count))
    assert user_profile_path(device) == user_profile_path(name)


def test_a_variant_is_refused_with_its_stand_in():
    with pytest.raises(Exception, match="'H200' stands in"):
        preset("NVIDIA H200 NVL")


def test_a_calibration_saved_under_the_driver_name_is_read_for_the_preset(tmp_path, monkeypatch):
    from sim.schedule import dispatch_profile as dp

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    dp.user_dir().mkdir(parents=True)
    mine = dp.DispatchProfile("NVIDIA H100 80GB HBM3", True, "2026-12-07", "calibrate",
                              dp.builtin_profile().params)
    dp.save_profile(dp.user_profile_path("NVIDIA H100 80GB HBM3"), mine)
    assert dp.profile_for("H100 SXM").label == "calibrated on NVIDIA H100 80GB HBM3, 2026-12-07"


@pytest.mark.parametrize("gpu_name", ["H200", "L40S", "T4"])
def test_waves_are_one_number_on_every_path(tmp_path, gpu_name):
    """The geometry, the what-if, the run diff and the live-kernel harness give one wave count."""
    from kernels.launching.launch import LiveLaunch, Resources
    from kernels.measure.harness import model_view

    gpu, elements, block, regs = preset(gpu_name), 2**24, 256, 40
    occ = occupancy(gpu, block, regs, 0)
    geo = launch_geometry(gpu, elements, block, occ)
    outcome = predict_outcome(gpu, WhatIf(block, regs, 0, elements))
    diffed = read_run(f"gpu={gpu_name},elements={elements},block={block},regs={regs}")
    harness = model_view(gpu, LiveLaunch(lambda: None, geo.blocks, block, None, block // 32),
                         Resources(regs, 0))
    assert {geo.waves_at_occupancy, outcome.waves, diffed.waves, harness["waves"]} == \
        {geo.blocks / (occ.blocks_per_sm * gpu.sm_count)}


def test_the_default_traffic_is_one_number():
    gpu = preset("H200")
    assert WhatIf(256, 32, 0, 2**20).bytes_per_element == BYTES_PER_ELEMENT_ADD
    spelled = read_run(f"gpu=H200,elements={2**20},block=256,regs=32,bytes={int(12 * 2**20)}")
    implied = read_run("gpu=H200,elements=1048576,block=256,regs=32")
    assert spelled.time_us == implied.time_us == predict_outcome(gpu, WhatIf(256, 32, 0, 2**20)).time_us


def test_dram_latency_has_one_home():
    """resources/physics is where a GPU's DRAM latency lives; the GPU table holds none, and the
    model reads the physics file's figure for every preset that has one."""
    from sim.model.latency import dram_latency_ns
    from sim.rules.physics import PHYSICS_DIR, physics_key

    table = json.loads(resource("gpus.json").read_text())
    assert not [p["name"] for p in table["presets"] if any("latency" in k for k in p)]
    for name in presets():
        path = PHYSICS_DIR / f"{physics_key(name)}.json"
        stored = json.loads(path.read_text())["constants"].get("dram_latency_ns", {})
        if "value" in stored:
            assert dram_latency_ns(preset(name)) == pytest.approx(float(stored["value"])), name


def test_dispatch_numbers_come_from_data_only():
    """No dispatch number has a default in code: the shipped profile is the H200 file's numbers,
    and a profile that lacks the register rule's takes them from that data."""
    from sim.schedule.dispatch_profile import BUILTIN_DIR, DispatchParams, builtin_profile

    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(DispatchParams))
    stored = json.loads((BUILTIN_DIR / "H200.json").read_text())["dispatch"]["params"]
    params = builtin_profile().params.to_json()
    assert {k: params[k] for k in stored if k != "trickle"} == \
        {k: v for k, v in stored.items() if k != "trickle"}


def test_the_matmul_fit_is_per_gpu_data():
    """The compute model's terms and stream-K's curve are read from the GPU's fit file; a GPU
    without one takes the fitted GPU's, labelled assumed in the confidence."""
    from sim.model.matmul_choice import fit_path, tile_fit
    from sim.model.throughput import compute_model

    fit = json.loads(fit_path(preset("H200")).read_text())
    assert compute_model(preset("H200")).tensor_efficiency == fit["compute"]["tensor_efficiency"]
    assert tile_fit(preset("L40S"))["gpu"] == fit["gpu"]  # assumed from the fitted GPU


def test_the_models_code_names_no_gpu():
    """A second GPU is a data change: the model's and the scheduler's code hold no GPU's name
    outside their docstrings and comments (a name in a string or an identifier is a rule or a
    number about one GPU living in code)."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    named = re.compile(r"\b(V100|T4|A100|RTX|L40S?|H100|H200|B200)")
    found = []
    for path in sorted([*root.glob("sim/model/*.py"), *root.glob("sim/schedule/*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            text = (node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs else node.id if isinstance(node, ast.Name) else "")
            if named.search(text) and "gpu=" not in text:  # a usage line's example launch
                found.append(f"{path.name}:{node.lineno}: {text[:60]}")
    assert found == []
