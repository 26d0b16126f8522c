"""Achieved occupancy (Nsight Compute's sm__warps_active.avg.pct_of_peak_sustained_active) and
waves per SM, for recorded traces and simulated schedules.

Recorded: every trace recorded in tests/data, on the H200 and the H100 (each bundle's every
trace, and the single trace files) against a float64 reference worked out here from the raw stamps by a sweep
over start and end events, within 0.05. Simulated: a launch of whole waves of equal spinning
blocks keeps every slot busy, so its achieved occupancy is its theoretical one (an invariant).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.rules.occupancy import occupancy
from sim.schedule.achieved import achieved_occupancy, of_simulation
from sim.schedule.scheduler import UniformCost, simulate
from sim.traces.trace import read_any_trace
from sim.traces.trace_bundle import load_bundle
from sim.traces.trace_occupancy import achieved_of_trace

DATA = Path(__file__).parents[1] / "data"
BUNDLES = sorted(p.parent for p in DATA.glob("*/dispatch_index.json"))
FILES = sorted([DATA / "trace_h200.json", *(DATA / "matmul_traces").glob("*.json")])
WARP_SLOTS = 2048 // 32  # Hopper (H100, H200): 2,048 threads per SM (NVIDIA's datasheets), 32 per warp


def reference(sm, start, end, warps_per_block: int) -> float:
    """Sweep each SM's start (+1) and end (-1) events in time order, ends first at a tie:
    integrate resident warps, and the time at least one block is resident."""
    sm = np.asarray(sm, dtype=np.int64)
    times = np.concatenate([np.asarray(start, np.float64), np.asarray(end, np.float64)])
    delta = np.concatenate([np.ones(len(sm)), -np.ones(len(sm))])
    who = np.concatenate([sm, sm])
    order = np.lexsort((delta, times, who))
    times, delta, who = times[order], delta[order], who[order]
    resident = np.cumsum(delta)  # each SM's events sum to 0: the count restarts per SM
    same_sm = who[1:] == who[:-1]
    dt = np.where(same_sm, np.diff(times), 0.0)
    held = resident[:-1]
    active = float(dt[held > 0].sum())
    return warps_per_block * float((held * dt).sum()) / (WARP_SLOTS * active)


def _warps(meta: dict) -> int:
    if meta.get("threads_per_block"):
        return -(-int(meta["threads_per_block"]) // 32)
    return int(meta.get("num_warps") or meta["config"]["num_warps"])


def _raw_bundle(folder: Path):
    index = json.loads((folder / "dispatch_index.json").read_text())
    with np.load(folder / index.get("arrays", "dispatch_traces.npz")) as npz:
        sm, start, end = npz["sm"], npz["start_us"], npz["end_us"]
    for entry in index["traces"]:
        rows = slice(entry["offset"], entry["offset"] + entry["count"])
        yield entry["name"], entry["meta"], sm[rows], start[rows], end[rows]


@pytest.mark.parametrize("folder", BUNDLES, ids=lambda p: p.name)
def test_every_bundled_trace_matches_the_sweep_of_its_stamps(folder):
    traces = load_bundle(folder)
    off = []
    for name, meta, sm, start, end in _raw_bundle(folder):
        got = achieved_of_trace(traces[name])
        want = reference(sm, start, end, _warps(meta))
        if not abs(got.achieved - want) <= 0.05:
            off.append((name, got.achieved, want))
    assert len(traces) > 0 and not off, off[:5]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_trace_file_matches_the_sweep_of_its_stamps(path):
    doc = json.loads(path.read_text())
    rows = np.asarray(doc["blocks"], dtype=np.float64)
    col = {c: i for i, c in enumerate(doc["columns"])}
    want = reference(rows[:, col["sm"]], rows[:, col["start_us"]], rows[:, col["end_us"]], _warps(doc["meta"]))
    got = achieved_of_trace(read_any_trace(path))
    assert abs(got.achieved - want) <= 0.05, (got.achieved, want)
    assert 0 < got.theoretical <= 1


def test_waves_per_sm_is_ncus_grid_over_sms_times_blocks_per_sm():
    # trace_h200.json: 2,112 blocks of 256 threads on 132 SMs at 8 blocks per SM = 2 waves
    got = achieved_of_trace(read_any_trace(DATA / "trace_h200.json"))
    assert got.waves_per_sm == pytest.approx(2112 / (132 * 8)) and got.theoretical == 1.0


@pytest.mark.parametrize("gpu, threads, regs, waves", [("H200", 256, 0, 3), ("H200", 128, 128, 2),
                                                      ("T4", 96, 40, 4), ("A100 80GB", 1024, 0, 1)])
def test_whole_waves_of_equal_blocks_achieve_the_theoretical_occupancy(gpu, threads, regs, waves):
    spec = preset(gpu)
    occ = occupancy(spec, threads, regs)
    sim = simulate(spec, waves * spec.sm_count * occ.blocks_per_sm, occ, UniformCost(10.0))
    got = of_simulation(sim, occ)
    assert got.achieved == pytest.approx(occ.occupancy, abs=1e-9)
    assert got.waves_per_sm == pytest.approx(waves)


def test_a_partial_last_wave_achieves_less_than_theoretical():
    spec = preset("H200")
    occ = occupancy(spec, 256)
    sim = simulate(spec, spec.sm_count * occ.blocks_per_sm + 1, occ, UniformCost(10.0))
    # by hand: one SM holds 8 blocks for 10 us, then 1 block for 10 us: (8 + 1) / (2 x 8) there
    want = (131 * 8 * 10 + 9 * 10) * 8 / (64 * (131 * 10 + 20))
    assert of_simulation(sim, occ).achieved == pytest.approx(want, rel=1e-9)


def test_overlapping_and_separate_blocks_on_one_sm():
    # SM 0: [0, 4] and [2, 6] overlap (active 6, blocks' time 8); SM 1: [0, 1] and [5, 6] (active 2)
    sm, start, end = [0, 0, 1, 1], [0.0, 2.0, 0.0, 5.0], [4.0, 6.0, 1.0, 6.0]
    assert achieved_occupancy(sm, start, end, 4, 64) == pytest.approx(4 * 10 / (64 * 8))
    assert reference(sm, start, end, 4) == pytest.approx(4 * 10 / (64 * 8))
