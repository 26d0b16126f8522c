"""A GPU the model was never fitted on, after `main.py calibrate` alone: the H100's held-out
kernel times and block traces (tests/data/h100_heldout) against the model with the numbers that
calibrate measured there in the user's config folder. The bars are the project's (makespan,
residency); each stated below with its tolerance."""

import json
import shutil
import statistics
from pathlib import Path
from types import SimpleNamespace

import pytest

from sim.model.launch_model import predict_measured
from sim.rules.devices import preset
from sim.traces.compare import compare_trace
from sim.traces.trace_bundle import load_bundle

DATA = Path(__file__).parents[1] / "data" / "h100_heldout"
H100 = preset("H100 SXM")


@pytest.fixture
def calibrated(tmp_path, monkeypatch):
    """The user's config folder holding what calibrate wrote on the H100."""
    folder = tmp_path / "cfg" / "warpscope" / "dispatch"
    folder.mkdir(parents=True)
    shutil.copy(DATA / "calibrated_H100_SXM.json", folder / "H100_SXM.json")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return folder


def test_the_model_reads_what_calibrate_measured(calibrated):
    from sim.rules.physics import physics_for

    ph = physics_for(H100)
    for name in ("copy_fraction", "dram_latency_ns", "l2_latency_ns", "l2_gbps"):
        assert ph.constant(name).label == "calibrated on NVIDIA H100 80GB HBM3, 2026-12-07", name


def test_held_out_kernel_times(calibrated):
    """120 GPU-timed launches: median error at most 6%, nine in ten within 15%."""
    rows = json.loads((DATA / "kernel_times.json").read_text())["measurements"]
    errors = sorted(abs(p.whole_launch_us / (r["median_ms"] * 1e3) - 1)
                    for r in rows if (p := predict_measured(H100, SimpleNamespace(**r))))
    assert len(errors) == 120
    assert statistics.median(errors) <= 0.06
    assert errors[int(0.9 * len(errors))] <= 0.15


def test_held_out_block_traces(calibrated):
    """18 traces: every makespan within 20%, the median within 6%; residency error at most 0.30
    on each, 0.12 at the median."""
    scores = [compare_trace(trace, gpu=H100).score for trace in load_bundle(DATA).values()]
    makespan = [abs(s.makespan_error) for s in scores]
    residency = [s.residency_error for s in scores]
    assert len(scores) == 18
    assert max(makespan) <= 0.20 and statistics.median(makespan) <= 0.06
    assert max(residency) <= 0.30 and statistics.median(residency) <= 0.12
