"""Every preset has a physics file, and every constant in it says where it comes from
(docs/GPU_DATA.md): value, unit, provenance (measured / published / assumed), source; an assumed
one names the preset it is taken from; none cites the seed article, which is the check."""

import json
import re
from pathlib import Path

import pytest

from sim.rules.devices import presets
from sim.rules.physics import physics_for

ROOT = Path(__file__).resolve().parents[2]
PHYSICS = ROOT / "resources" / "physics"
REQUIRED = ("launch_overhead_us", "dram_latency_ns", "copy_fraction", "l2_gbps", "trip_overhead_ns")
MEMORY_KINDS = {"HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6", "GDDR6X", "GDDR7"}
# The seed article in any of the ways a source could name it.
ARTICLE = re.compile(r"the article|seed article|gpu-programming-with-triton|triton-part1|"
                     r"crusoe", re.IGNORECASE)


def problems(doc: dict, preset_names: list[str]) -> list[str]:
    """What is wrong with one physics file's sources (empty: nothing)."""
    out = []
    if doc.get("format") != "warpscope-physics/1":
        out.append("format is not warpscope-physics/1")
    if doc.get("memory_kind") not in MEMORY_KINDS:
        out.append(f"memory_kind {doc.get('memory_kind')!r}")
    consts = doc.get("constants") or {}
    for name in REQUIRED:
        if name not in consts:
            out.append(f"{name} missing")
    for name, c in consts.items():
        if not isinstance(c, dict):
            out.append(f"{name} is not an object")
            continue
        if "assumed_from" in c:  # a reference: the named GPU's figure, resolved by the loader
            if c["assumed_from"] not in preset_names:
                out.append(f"{name} is assumed from {c['assumed_from']!r}, no preset")
            if "value" in c or not c.get("source"):
                out.append(f"{name}: a reference has a source and no value")
            continue
        for key in ("value", "unit", "provenance", "source"):
            if c.get(key) in (None, ""):
                out.append(f"{name} lacks {key}")
        if c.get("provenance") not in ("measured", "published", "assumed"):
            out.append(f"{name} provenance {c.get('provenance')!r}")
        if c.get("provenance") == "assumed" and c.get("from") not in preset_names:
            out.append(f"{name} is assumed from {c.get('from')!r}, no preset")
        if c.get("provenance") == "measured" and not (c.get("date") and c.get("command")):
            out.append(f"{name} is measured without date and command")
        if ARTICLE.search(str(c.get("source", ""))):
            out.append(f"{name} cites the seed article")
    return out


def physics_files():
    return {p.stem: json.loads(p.read_text()) for p in sorted(PHYSICS.glob("*.json"))}


def test_every_preset_has_a_physics_file():
    missing = [n for n in presets() if not (PHYSICS / f"{n.replace(' ', '_')}.json").is_file()]
    assert not missing, f"no resources/physics file for {missing}"


def test_physics_files_name_their_presets():
    for key, doc in physics_files().items():
        assert doc.get("gpu", "").replace(" ", "_") == key and doc["gpu"] in presets(), key


@pytest.mark.parametrize("key", sorted(p.stem for p in PHYSICS.glob("*.json")))
def test_every_constant_has_a_source(key):
    assert problems(physics_files()[key], presets()) == []


def test_the_check_finds_each_defect():
    good = {"value": 1.0, "unit": "ns", "provenance": "published", "source": "a paper, table 3"}
    doc = {"format": "warpscope-physics/1", "memory_kind": "HBM3",
           "constants": {n: dict(good) for n in REQUIRED}}
    names = presets()
    assert problems(doc, names) == []
    cases = {
        "lacks source": {"source": ""},
        "lacks unit": {"unit": None},
        "provenance 'guessed'": {"provenance": "guessed"},
        "assumed from None": {"provenance": "assumed"},
        "assumed from 'Z9000'": {"provenance": "assumed", "from": "Z9000"},
        "cites the seed article": {"source": "the article's table: 645 GB/s"},
        "measured without": {"provenance": "measured"},
        "is assumed from 'Z9000'": {"assumed_from": "Z9000", "value": None},
        "a reference has a source and no value": {"assumed_from": "H200"},
    }
    for expect, change in cases.items():
        bad = json.loads(json.dumps(doc))
        bad["constants"]["copy_fraction"].update(change)
        if change.get("value", 1) is None:
            del bad["constants"]["copy_fraction"]["value"]
        assert any(expect in p for p in problems(bad, names)), expect
    bad = json.loads(json.dumps(doc))
    del bad["constants"]["l2_gbps"]
    assert problems(bad, names) == ["l2_gbps missing"]
    assert "memory_kind 'DDR4'" in problems({**doc, "memory_kind": "DDR4"}, names)


def test_no_check_point_is_a_constants_source():
    # benchmarks/published/ is the check set: the one gpu-stream row a copy_fraction comes from
    # (scale at full occupancy) must not be among its points.
    import csv
    rows = []
    for path in (ROOT / "tests" / "data" / "published").glob("*.csv"):
        with path.open(newline="") as f:
            rows += list(csv.DictReader(f))
    assert rows
    for key, doc in physics_files().items():
        c = doc["constants"]["copy_fraction"]
        m = re.search(r"gpu-stream/(\S+): scale kernel .*?(\d+) threads x 2 blocks", c["source"])
        if c.get("provenance") != "published" or not m:
            continue
        source = [r for r in rows if r["source"].endswith(f"gpu-stream/{m.group(1)}")
                  and r["kernel"] == "gpu-stream scale" and r["threads_per_block"] == m.group(2)]
        assert source == [], f"{key}: its copy_fraction row is in the check set"


def copies(docs: dict, figure) -> list[str]:
    """Assumed constants stored as a number equal (within 1%: a rounded copy is a copy) to the
    figure of the GPU they say they are from, or to an H200 measured one: they would go stale
    with it; an assumed figure that is the other GPU's as it is must be an assumed_from reference."""
    out = []
    for key, doc in docs.items():
        for name, c in doc["constants"].items():
            if c.get("provenance") != "assumed" or "value" not in c:
                continue
            for gpu in {c.get("from"), "H200"} - {None, doc["gpu"]}:
                other = figure(gpu, name)  # the H200's counts where it was measured (fitted)
                if other is None or (gpu != c.get("from") and other.provenance != "measured"):
                    continue
                if abs(c["value"] - other.value) <= 0.01 * abs(other.value):
                    out.append(f"{key}'s {name} = {c['value']} copies {gpu}'s {other.value}")
    return out


def _figure(gpu, name):
    return physics_for(gpu).constants.get(name)


def test_no_preset_carries_a_copy_of_another_gpus_figure():
    assert copies(physics_files(), _figure) == []
    # the check finds one: the H200's launch overhead pasted into the L40S's file as a number
    doc = physics_files()["L40S"]
    h200 = _figure("H200", "launch_overhead_us").value
    doc["constants"]["launch_overhead_us"] = {"value": h200, "unit": "us", "provenance": "assumed",
                                              "from": "H200", "source": "x"}
    assert copies({"L40S": doc}, _figure) == [f"L40S's launch_overhead_us = {h200} copies H200's {h200}"]
