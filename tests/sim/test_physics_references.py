"""An assumed constant is a reference to another GPU's figure ({"assumed_from": "H200"}), resolved
at load time (sim/rules/physics.py, docs/GPU_DATA.md): a refit of the H200 reaches every preset
that assumes its figure, and a bad reference is one line, never a traceback."""

import json
import shutil

import pytest

from sim.inputs.errors import UserError
from sim.rules import physics
from sim.rules.physics import PHYSICS_DIR, physics_for, read_physics, resolve_references
from tests.hostile.helpers import assert_contract, run_cli


def _fresh_caches():
    physics._files.cache_clear()
    physics._physics_of_preset.cache_clear()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A copy of resources/physics/ the loader reads instead of the real one."""
    dest = tmp_path / "physics"
    shutil.copytree(PHYSICS_DIR, dest)
    monkeypatch.setattr(physics, "PHYSICS_DIR", dest)
    _fresh_caches()
    yield dest
    monkeypatch.undo()
    _fresh_caches()


def _edit(path, name, entry):
    doc = json.loads(path.read_text())
    doc["constants"][name] = entry
    path.write_text(json.dumps(doc))


def test_a_refit_of_the_h200_reaches_the_presets_that_assume_its_figure(folder):
    h200 = folder / "H200.json"
    doc = json.loads(h200.read_text())
    doc["constants"]["launch_overhead_us"].update(value=7.25, date="2031-01-02", command="refit")
    doc["constants"]["dram_latency_ns"]["value"] = 777
    h200.write_text(json.dumps(doc))
    for gpu in ("L40S", "B200", "V100", "RTX 5090"):
        c = physics_for(gpu).constant("launch_overhead_us")
        assert c.value == 7.25 and c.provenance == "assumed", gpu
        assert c.label == "assumed from H200 (measured 2031-01-02: refit there)", gpu
    # a chain: the T4's latency taken from the B200, whose figure is the H200's
    _edit(folder / "T4.json", "dram_latency_ns", {"assumed_from": "B200", "source": "a chain"})
    _fresh_caches()
    chained = physics_for("T4").constant("dram_latency_ns")
    assert chained.value == 777 and chained.assumed_from == "H200"
    assert chained.label.startswith("assumed from H200 (measured ")
    assert physics_for("L40S").value("dram_latency_ns") != 777  # its own, published


def test_the_real_files_resolve_with_their_provenance():
    l40s = physics_for("L40S").constant("launch_overhead_us")
    h200 = physics_for("H200").constant("launch_overhead_us")
    assert l40s.value == h200.value and l40s.assumed_from == "H200"
    assert l40s.label == f"assumed from H200 (measured {h200.date}: {h200.command} there)"
    assert l40s.short_label == "assumed from H200" and l40s.source  # the file's why


def _files(tmp_path, docs):
    out = {}
    for gpu, consts in docs.items():
        path = tmp_path / f"{gpu}.json"
        path.write_text(json.dumps({"format": "warpscope-physics/1", "gpu": gpu, "constants": consts}))
        out[gpu] = read_physics(path)
    return out


NUMBER = {"value": 4.0, "unit": "us", "provenance": "measured", "date": "d", "command": "c", "source": "s"}


@pytest.mark.parametrize("docs, words", [
    ({"A": {"launch_overhead_us": {"assumed_from": "B"}},
      "B": {"launch_overhead_us": {"assumed_from": "A"}}},
     "loop: A launch_overhead_us -> B launch_overhead_us -> A launch_overhead_us"),
    ({"A": {"launch_overhead_us": {"assumed_from": "A"}}}, "loop: A launch_overhead_us -> A"),
    ({"A": {"launch_overhead_us": {"assumed_from": "Z9000"}}},
     "A's launch_overhead_us is assumed from 'Z9000', which has no file there"),
    ({"A": {"launch_overhead_us": {"assumed_from": "B"}}, "B": {}},
     "A's launch_overhead_us is assumed from B's launch_overhead_us, which B lacks"),
    ({"A": {"launch_overhead_us": {"assumed_from": "B", "constant": "dram_latency_ns"}},
      "B": {"dram_latency_ns": {**NUMBER, "unit": "ns"}}},
     "A's launch_overhead_us must be in us; B's dram_latency_ns it is assumed from is in ns"),
])
def test_a_bad_reference_is_one_line(tmp_path, docs, words):
    with pytest.raises(UserError) as err:
        resolve_references(_files(tmp_path, docs), "physics")
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("entry, words", [
    ({"assumed_from": 5}, "needs a GPU's name in 'assumed_from', got 5"),
    ({"assumed_from": ""}, "needs a GPU's name in 'assumed_from'"),
    ({"assumed_from": "H200", "value": 4.1}, "both a 'value' and 'assumed_from'"),
    ({"assumed_from": "H200", "constant": ["x"]}, "needs a constant's name in 'constant'"),
    ({"assumed_from": "H200", "provenance": "measured"}, "its provenance is 'assumed', not 'measured'"),
])
def test_a_reference_of_the_wrong_shape_is_one_line(tmp_path, entry, words):
    with pytest.raises(UserError, match=words):
        _files(tmp_path, {"A": {"launch_overhead_us": entry}})


def test_a_good_chain_resolves_once_per_constant(tmp_path):
    files = resolve_references(_files(tmp_path, {
        "A": {"launch_overhead_us": NUMBER},
        "B": {"launch_overhead_us": {"assumed_from": "A", "source": "why A"}},
        "C": {"launch_overhead_us": {"assumed_from": "B", "source": "why B"}}}), "physics")
    c = files["C"].constants["launch_overhead_us"]
    assert (c.value, c.assumed_from, c.source) == (4.0, "A", "why B")  # the figure's GPU, C's why
    assert c.label == "assumed from A (measured d: c there)" and not files["C"].references


def test_the_cli_says_one_line_on_a_loop(folder):
    _edit(folder / "H200.json", "launch_overhead_us", {"assumed_from": "L40S"})
    _edit(folder / "L40S.json", "launch_overhead_us", {"assumed_from": "H200"})
    code, _, err = run_cli(["explain", "--gpu", "L40S", "--elements", "1e6"])
    assert_contract(code, err)
    assert code == 2 and "the assumed_from references loop" in err
