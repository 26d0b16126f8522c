"""Occupancy equals the CUDA driver's own answer on every case recorded on an H200.

tests/data/occupancy_h200.json was made on the lent H200 with
    python3 benchmarks/occupancy_truth.py --out $OUT/occupancy_h200.json
(cuOccupancyMaxActiveBlocksPerMultiprocessor on kernels compiled by NVRTC at several register caps,
with static and dynamic shared memory and several carveout preferences).
"""

import json
from pathlib import Path

import pytest

from sim.rules.devices import preset
from sim.rules.occupancy import occupancy

DATA = json.loads((Path(__file__).parents[1] / "data" / "occupancy_h200.json").read_text())


def test_enough_cases_and_variety():
    cases = DATA["cases"]
    assert len(cases) >= 2000
    assert len({c[1] for c in cases}) >= 30  # register counts
    assert len({c[0] for c in cases}) >= 40  # block sizes
    assert {c[4] for c in cases} >= {-1, 0, 50, 100}  # carveouts
    assert {c[5] for c in cases} >= {0, 1, 32}


def test_preset_matches_the_driver_attributes():
    spec, attrs = preset("H200"), DATA["device_attributes"]
    for field in ("sm_count", "warp_size", "max_threads_per_sm", "max_blocks_per_sm",
                  "max_threads_per_block", "regs_per_sm", "regs_per_block", "smem_per_sm_bytes",
                  "smem_per_block_bytes", "smem_per_block_optin_bytes",
                  "smem_reserved_per_block_bytes", "l2_bytes"):
        assert getattr(spec, field) == attrs[field], field
    assert spec.compute_capability == (attrs["cc_major"], attrs["cc_minor"])


def test_every_case_agrees_with_the_driver():
    gpu = preset("H200")
    mismatches = []
    for threads, regs, static, dynamic, carveout, driver in DATA["cases"]:
        ours = occupancy(gpu, threads, regs, static + dynamic, None if carveout < 0 else carveout)
        if ours.blocks_per_sm != max(driver, 0):
            mismatches.append((threads, regs, static, dynamic, carveout, driver, ours.blocks_per_sm))
    assert not mismatches, f"{len(mismatches)} cases differ, first: {mismatches[:5]}"


@pytest.mark.parametrize("threads", [1025, 2000])
def test_oversized_blocks_get_zero_like_the_driver(threads):
    rows = [c for c in DATA["cases"] if c[0] == 1025]
    assert rows and all(c[5] <= 0 for c in rows)
    occ = occupancy(preset("H200"), threads)
    assert occ.blocks_per_sm == 0 and "1024" in occ.reason
