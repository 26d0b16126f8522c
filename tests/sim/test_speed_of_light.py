"""The speed-of-light card: its floors from the GPU's own data files read here independently, the
bound the largest of them, and the gap's parts adding up with the bound to the predicted
whole-launch time (an invariant) over every preset and a spread of launches."""

import json
import math

import pytest

import main
from sim.inputs.places import resource
from sim.model.launch_model import predict_geometry
from sim.rules.devices import preset
from sim.rules.geometry import launch_geometry
from sim.rules.occupancy import occupancy
from tests.tiers import every_preset

LAUNCHES = [(1000, 256), (10**6, 256), (3907 * 256, 256), (2**20, 64), (2**24, 128), (10**8, 1024)]


def _raw_constant(gpu_name: str, name: str) -> float:
    """A physics constant straight from resources/physics/<GPU>.json, following an
    "assumed_from" reference by hand (falls back to the H200, the files' reference GPU)."""
    path = resource("physics") / f"{gpu_name.replace(' ', '_')}.json"
    entry = json.loads(path.read_text())["constants"].get(name) if path.exists() else None
    if entry is None or entry.get("value") is None:
        source = (entry or {}).get("assumed_from", "H200")
        return _raw_constant(source, name)
    return float(entry["value"])


def _predict(gpu_name, n, threads):
    gpu = preset(gpu_name)
    occ = occupancy(gpu, threads, 0, 0)
    return gpu, predict_geometry(gpu, occ, launch_geometry(gpu, n, threads, occ))


@pytest.mark.parametrize("gpu_name", every_preset())
def test_parts_and_bound_add_up_to_the_whole_launch(gpu_name):
    for n, threads in LAUNCHES:
        _, p = _predict(gpu_name, n, threads)
        card = p.speed_of_light()
        assert card.time_us == p.whole_launch_us
        total = card.bound_us + sum(card.parts.values())
        assert math.isclose(total, card.time_us, rel_tol=1e-9), (gpu_name, n, threads)
        # a memory-bound schedule never beats its own floors: every part is time lost
        assert all(v >= -1e-12 for v in card.parts.values()), (gpu_name, n, card.parts)
        assert 0 < card.percent <= 100 + 1e-9


@pytest.mark.parametrize("gpu_name", ["H200", "L40S", "T4", "B200"])
def test_floors_come_from_the_gpu_data(gpu_name):
    """DRAM: bytes at peak x copy fraction (gpus.json x physics JSON); overhead: the physics JSON."""
    peak = next(e for e in json.loads(resource("gpus.json").read_text())["presets"]
                if e["name"] == gpu_name)["peak_dram_gbps"]
    for n, threads in LAUNCHES:
        _, p = _predict(gpu_name, n, threads)
        card = p.speed_of_light()
        dram = 12.0 * n / (peak * _raw_constant(gpu_name, "copy_fraction") * 1e3)  # vector add: 12 B
        overhead = _raw_constant(gpu_name, "launch_overhead_us")
        assert math.isclose(card.floors["DRAM bandwidth"], dram, rel_tol=1e-9)
        assert math.isclose(card.floors["launch overhead"], overhead, rel_tol=1e-12)
        assert card.bound_us == max(dram, overhead)
        assert card.bound == ("DRAM bandwidth" if dram > overhead else "launch overhead")
        # the part the bound does not cover is named: the overhead, or the work under it
        named = "launch_overhead" if card.bound == "DRAM bandwidth" else "work"
        assert math.isclose(card.parts[named], min(dram, overhead), rel_tol=1e-12)


def test_a_tiny_launch_is_bound_by_its_overhead_and_a_huge_one_by_dram():
    _, small = _predict("H200", 1000, 256)
    _, large = _predict("H200", 10**8, 1024)
    assert small.speed_of_light().bound == "launch overhead"
    assert large.speed_of_light().bound == "DRAM bandwidth"


@pytest.mark.slow
def test_a_matmul_is_bound_by_its_flops_at_the_datasheet_rate(capsys):
    """2 M N K FLOPs at gpus.json's dense FP16 tensor rate; its parts still add up."""
    assert main.main(["explain", "--gpu", "H200", "--kernel", "matmul_tiled", "--elements", "4096",
                      "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    card = data["speed_of_light"]
    rate = next(e for e in json.loads(resource("gpus.json").read_text())["presets"]
                if e["name"] == "H200")["tensor_tflops_fp16"]
    assert card["bound"] == "tensor FLOPs"
    assert math.isclose(card["bound_us"], 2 * 4096**3 / (rate * 1e6), rel_tol=1e-9)
    assert math.isclose(card["bound_us"] + sum(card["parts"].values()), card["time_us"], rel_tol=1e-9)
    assert math.isclose(card["time_us"], data["whole_launch_us"], abs_tol=1e-4)


def test_explain_shows_the_card(capsys):
    assert main.main(["explain", "--gpu", "H200", "--elements", "1e6", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    card = data["speed_of_light"]
    assert set(card) >= {"bound", "bound_us", "time_us", "percent", "parts"}
    assert math.isclose(card["time_us"], data["whole_launch_us"], abs_tol=1e-4)
    assert main.main(["explain", "--gpu", "H200", "--elements", "1e6"]) == 0
    out = capsys.readouterr().out
    assert "Speed of light" in out and f"{card['percent']:.0f}%" in out


def test_a_measured_time_is_held_beside_the_prediction():
    _, p = _predict("H200", 10**6, 256)
    card = p.speed_of_light().with_measured(10.0)
    assert card.to_dict()["measured_us"] == 10.0
    assert math.isclose(card.measured_percent, 100 * card.bound_us / 10.0)
