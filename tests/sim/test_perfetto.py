"""Perfetto export (sim/traces/perfetto.py): the files follow the Chrome Trace Event Format's rules,
checked here by a validator written from the format's documentation (every complete event on a
named track with numeric, non-negative times; instant and counter events well formed) and against
the schedule they came from: one slice per block, none overlapping in its slot, the counter equal
to the slices resident at every moment it changes and in between."""

import json
from pathlib import Path

import numpy as np
import pytest

from main import main
from sim.inputs.errors import UserError
from sim.model.launch_model import predict_geometry
from sim.rules.devices import preset
from sim.rules.geometry import launch_geometry
from sim.rules.occupancy import occupancy
from sim.traces.compare import compare_trace
from sim.traces.perfetto import perfetto_document, write_perfetto
from sim.traces.trace_bundle import load_bundle

DATA = Path(__file__).resolve().parents[1] / "data"
TOL_US = 1e-6  # times are written to 0.1 ns; a slot's next block starts no earlier than this


def validate(doc: dict) -> dict[int, list[dict]]:
    """The format's rules for what this file uses; returns the complete events by pid."""
    assert set(doc) >= {"traceEvents", "displayTimeUnit", "otherData"}
    assert doc["displayTimeUnit"] in ("ms", "ns")  # the only two the format allows
    assert all(isinstance(v, str) for v in doc["otherData"].values())
    names, tracks, slices = {}, set(), {}
    for ev in doc["traceEvents"]:
        assert isinstance(ev["name"], str) and ev["name"]
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        ph = ev["ph"]
        assert ph in ("X", "i", "C", "M"), ph
        if ph == "M":
            assert ev["name"] in ("process_name", "process_sort_index", "thread_name", "thread_sort_index")
            if ev["name"] == "process_name":
                names[ev["pid"]] = ev["args"]["name"]
            if ev["name"] == "thread_name":
                tracks.add((ev["pid"], ev["tid"]))
            continue
        assert isinstance(ev["ts"], (int, float)) and ev["ts"] >= 0
        if ph == "X":
            assert isinstance(ev["dur"], (int, float)) and ev["dur"] >= 0
            slices.setdefault(ev["pid"], []).append(ev)
        elif ph == "i":
            assert ev["s"] in ("g", "p", "t")
        else:
            assert ev["args"] and all(isinstance(v, (int, float)) and v >= 0 for v in ev["args"].values())
    assert set(slices) <= set(names)
    for pid, evs in slices.items():
        assert {(pid, e["tid"]) for e in evs} <= tracks, "a slice on a track with no thread_name"
    return slices


def check_against(doc: dict, pid: int, label: str, tl) -> None:
    evs = validate(doc)[pid]
    other = doc["otherData"]
    elided = int(other[f"{label}.elided_blocks"])
    assert len(evs) == tl.n_blocks == int(other[f"{label}.grid_blocks"]) - elided
    assert sorted(e["args"]["block"] for e in evs) == list(range(elided, elided + tl.n_blocks))
    per_sm = int(other[f"{label}.tracks_per_sm"])
    assert per_sm >= tl.lanes
    by_slot: dict[int, list] = {}
    for e in evs:
        a = e["args"]
        assert e["tid"] == a["sm"] * per_sm + a["slot"] and e["name"] == str(a["block"])
        assert a["wave"] >= 1 and abs(e["ts"] + e["dur"] - a["end_us"]) < TOL_US
        by_slot.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_slot.values():
        spans.sort()
        assert all(b[0] >= a[1] - TOL_US for a, b in zip(spans, spans[1:])), "slices overlap in a slot"
    _check_counter(doc, pid, evs)


def _check_counter(doc: dict, pid: int, evs: list[dict]) -> None:
    """The counter at each of its moments, and halfway to the next, equals the slices resident
    then (start <= t < end), counted from the slices themselves."""
    starts = np.sort([e["args"]["start_us"] for e in evs])
    ends = np.sort([e["args"]["end_us"] for e in evs])
    counter = [(e["ts"], e["args"]["blocks"]) for e in doc["traceEvents"]
               if e["ph"] == "C" and e["pid"] == pid]
    assert counter and all(b[0] > a[0] for a, b in zip(counter, counter[1:]))
    times = np.array([t for t, _ in counter])
    values = np.array([c for _, c in counter])
    samples = np.r_[times, (times[1:] + times[:-1]) / 2]
    at = np.searchsorted(times, samples, side="right") - 1
    resident = np.searchsorted(starts, samples, side="right") - np.searchsorted(ends, samples, side="right")
    assert np.array_equal(values[at], resident)
    assert values[-1] == 0


def _h200_prediction(elements: int, block: int = 256):
    gpu = preset("H200")
    occ = occupancy(gpu, block)
    return predict_geometry(gpu, occ, launch_geometry(gpu, elements, block, occ))


def test_a_million_element_h200_launch():
    tl = _h200_prediction(1_000_000).simulation.timeline
    doc = json.loads(json.dumps(perfetto_document({"predicted": tl})))
    check_against(doc, 1, "predicted", tl)
    assert tl.n_blocks == 3907 and doc["otherData"]["predicted.elided_blocks"] == "0"
    waves = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"].startswith("wave ")]
    # 3,907 blocks over 132 SMs x 8 slots: 3.7 waves, more on the slots of faster SMs
    assert len(waves) == tl.waves >= 4
    assert max(e["args"]["wave"] for e in validate(doc)[1]) == tl.waves
    assert any(e["ph"] == "i" and e["name"].startswith("tail") for e in doc["traceEvents"])


def test_a_big_grid_keeps_the_models_elision_and_says_so():
    tl = _h200_prediction(100_000_000).simulation.timeline
    doc = perfetto_document({"predicted": tl})
    check_against(doc, 1, "predicted", tl)
    other = doc["otherData"]
    assert int(other["predicted.grid_blocks"]) == 390_625  # ceil(1e8 / 256)
    assert int(other["predicted.elided_blocks"]) == tl.first_block > 0
    assert int(other["predicted.elided_waves"]) * 132 * 8 == tl.first_block  # whole waves
    first = min(e["ts"] for e in doc["traceEvents"] if e["ph"] == "X")
    assert first == pytest.approx(float(other["predicted.elided_us"]), abs=1e-3)
    assert len(json.dumps(doc)) < 8e6


def test_a_recorded_h200_trace_beside_its_prediction(tmp_path):
    trace = load_bundle(DATA / "h200_memory_kernels_fit")["add_n20_b256"]  # 2^20 elements at 256 a block
    c = compare_trace(trace)
    path = tmp_path / "both.json"
    assert write_perfetto(path, {"predicted": c.simulated, "recorded": c.recorded}) == 2 * 4096
    doc = json.loads(path.read_text())
    check_against(doc, 1, "predicted", c.simulated)
    check_against(doc, 2, "recorded", c.recorded)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {1: "predicted", 2: "recorded"}
    assert len({e["tid"] for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 2}) >= 132


def test_the_commands_write_it(tmp_path, capsys):
    out = tmp_path / "sim.json"
    assert main(["simulate", "--gpu", "H200", "--elements", "1e6", "--perfetto", str(out)]) == 0
    assert "Perfetto timeline written" in capsys.readouterr().out
    assert len(validate(json.loads(out.read_text()))[1]) == 3907
    out = tmp_path / "export.json"
    assert main(["export", "--elements", "2^20", "--block", "512", "--perfetto", str(out)]) == 0
    assert len(validate(json.loads(out.read_text()))[1]) == 2048
    out = tmp_path / "compare.json"
    assert main(["compare", str(DATA / "trace_h200.json"), "--perfetto", str(out)]) == 0
    assert set(validate(json.loads(out.read_text()))) == {1, 2}


def test_unwritable_target_is_one_line(tmp_path, capsys):
    assert main(["simulate", "--perfetto", str(tmp_path / "no" / "x.json")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "does not exist" in err
    with pytest.raises(UserError):
        write_perfetto(tmp_path, {"predicted": _h200_prediction(1000).simulation.timeline})
