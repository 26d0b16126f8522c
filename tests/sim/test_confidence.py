"""A prediction's confidence (sim.model.confidence): the weakest provenance among the constants it used,
and the same label on every surface (`explain --json`, the Verdicts' model, Two GPUs)."""

import json
from dataclasses import replace

import pytest

from sim.model.confidence import Confidence, confidence_of, prediction_confidence
from sim.rules.devices import preset
from sim.rules.physics import Constant

MEMORY = ("launch_overhead_us", "dram_latency_ns", "copy_fraction", "trip_overhead_ns")


def test_the_weakest_constant_sets_the_level():
    m = Constant(1.0, "us", "measured", "a run", date="2026-12-01", command="bench")
    p = Constant(2.0, "ns", "published", "a paper (table 3): 2 ns")
    a = Constant(3.0, "ns", "assumed", "another card's", assumed_from="H200")
    assert Confidence("X", (("launch_overhead_us", m),)).level == "measured"
    both = Confidence("X", (("launch_overhead_us", m), ("dram_latency_ns", p)))
    assert both.level == "published" and both.short == "published"
    assert "DRAM latency (a paper)" in both.label  # the source, without its working
    three = Confidence("X", (("launch_overhead_us", m), ("dram_latency_ns", p), ("copy_fraction", a)))
    assert three.level == "assumed" and three.short == "assumed from H200"
    assert three.label.startswith("Confidence: assumed from H200 (assumed: copy bandwidth from H200;")


def test_presets_read_their_physics_files():
    assert confidence_of(preset("H200"), MEMORY).short == "measured on the H200"
    l40s = confidence_of(preset("L40S"), MEMORY)
    assert l40s.level == "assumed" and "published: DRAM latency (github.com/te42kyfo" in l40s.label
    assert {n: c["provenance"] for n, c in l40s.to_dict()["constants"].items()}["copy_fraction"] \
        == "published"


def test_a_detected_card_that_is_no_preset_is_assumed():
    spec = replace(preset("H200"), name="NVIDIA H200 NVL", sm_count=130, detected=True)
    assert confidence_of(spec, MEMORY).level == "assumed"


def _explain(gpu, elements, threads, capsys):
    import main

    assert main.main(["explain", "--gpu", gpu, "--elements", str(elements), "--block",
                     str(threads), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("gpu", ["H200", "V100"])
def test_explain_the_verdicts_and_two_gpus_say_the_same(gpu, capsys):
    from gui.models.compare_gpus import CompareGpusModel
    from gui.models.insight import InsightModel
    from gui.models.launch import LaunchInputs, LaunchModel

    cli = _explain(gpu, 2**24, 256, capsys)["confidence"]
    launch = LaunchModel(LaunchInputs(gpu=gpu, elements=2**24, threads_per_block=256))
    insight = InsightModel(launch)
    assert insight.confidence.to_dict() == cli
    assert cli["label"] in insight.time_lines()  # the Verdicts' header and the export's notes
    other = "H200" if gpu != "H200" else "V100"
    compare = CompareGpusModel(launch, insight, other)
    here = compare.sides[0]
    assert here.confidence.to_dict() == cli
    time = [d.text for d in compare.differences if d.key == "time"]
    assert time and cli["short"] in time[0]


def test_prediction_confidence_uses_the_prediction_s_constants():
    from sim.model.launch_model import Launch, predict_launch

    p = predict_launch(preset("B200"), Launch(1000, 256, 8, 1e8, 256000), "uniform")
    c = prediction_confidence(preset("B200"), p)
    assert [n for n, _ in c.constants] == ["launch_overhead_us"]
