"""The bench model without a window: which curves, their predictions, the banner that describes
them, the sweep form and the jobs' outcomes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from gui.models.bench import BenchModel, parse_blocks, parse_sizes
from sim.inputs.errors import UserError

from tests.models.fakes import GPU, NO_GPU, Recorder, fake_sweep


@dataclass(frozen=True)
class K:
    name: str
    backend: str = "triton"
    benchable: bool = True

    def loop_trips(self, n, grid_blocks, threads_per_block):
        return 1  # a fixed tile: every load issued up front, as kernels.declare.spec says for these


def _model():
    m = BenchModel()
    m.set_kernels([K("add_triton"), K("add_torch", "torch"), K("copy_torch", "torch"),
                   K("lanes_numba", "numba", benchable=False)])
    return m


def test_parse_sizes_and_blocks():
    assert parse_sizes("2^16..2^20") == [2**k for k in range(16, 21)]
    assert parse_sizes("2^16..2^20 x4") == [2**16, 2**18, 2**20]
    assert parse_sizes("1e6, 1048583") == [1_000_000, 1_048_583]
    for bad in ("2^40", ""):
        with pytest.raises(ValueError):
            parse_sizes(bad)
    assert parse_blocks("default") is None and parse_blocks("1024, 256") == [256, 1024]
    with pytest.raises(ValueError):
        parse_blocks("big")


def test_sweep_form_is_checked():
    m = _model()
    assert m.ticked == ("add_triton", "add_torch", "copy_torch")
    m.set_availability(NO_GPU)
    with pytest.raises(UserError, match="no GPU here"):
        m.sweep_request("2^20", "default", 50, True, False)
    req = m.sweep_request("2^16..2^18", "256,1024", 10, True, True)
    assert req.sizes == (2**16, 2**17, 2**18) and req.blocks == (256, 1024) and req.allow_cpu
    with pytest.raises(UserError, match="not a number"):
        m.sweep_request("lots", "default", 10, True, True)
    m.set_ticked([])
    with pytest.raises(UserError, match="tick at least one kernel"):
        m.sweep_request("2^20", "default", 10, True, True)


def test_each_plot_draws_its_points_with_predictions():
    m = _model()
    res = fake_sweep()(["add_triton", "add_torch"], [2**20, 2**24], [1024, 4096])
    m.set_result(res)
    size = {s.kernel: s for s in m.series("size")}
    assert list(size) == ["add_triton", "add_torch"]
    s = size["add_triton"]
    assert s.x.tolist() == [2**20, 2**24]
    best = [max(p.bandwidth_gbps for p in res.measurements if p.kernel == "add_triton" and p.elements == n)
            for n in (2**20, 2**24)]
    assert s.median.tolist() == best and (s.p20 <= s.median).all() and (s.median <= s.p80).all()
    assert np.isfinite(s.predicted).all() and "simulator predicts" in s.tips[0]
    block = {s.kernel: s for s in m.series("block")}["add_triton"]
    assert block.x.tolist() == [1024, 4096] and {p.elements for p in block.points} == {2**24}
    header, rows = m.export_rows("size")
    assert len(rows) == 4 and rows[0][header.index("predicted_gbps")] > 0


def test_shown_kernels_follow_the_ticks():
    m = _model()
    m.set_result(fake_sweep()(["add_triton", "add_torch", "copy_torch"], [2**20], [1024]))
    shown = Recorder(m.shown_changed)
    m.set_ticked(["copy_torch"])
    assert m.shown_kernels() == ["copy_torch"] and shown.calls
    m.set_ticked(["add_numba"])  # not in the result: the usual comparison
    assert m.shown_kernels() == ["add_triton", "add_torch", "copy_torch"]


def test_only_gpu_timings_get_a_prediction():
    m = _model()
    res = fake_sweep()(["add_triton"], [2**20], [1024])  # device named "H200" only: the preset
    m.set_result(res)
    assert all(m.predicted(p) is not None for p in res.measurements)
    cpu = dataclasses.replace(res, measurements=tuple(
        dataclasses.replace(p, is_gpu_timing=False) for p in res.measurements))
    m.set_result(cpu)
    assert all(m.predicted(p) is None for p in cpu.measurements)


@pytest.mark.slow
def test_the_h200_sweep_is_predicted_within_30_percent():
    from kernels.measure.results import load_results

    m = _model()
    m.set_result(load_results(Path(__file__).parents[2] / "tests" / "data" / "h200_block_size_sweep.json"))
    m.set_ticked([])
    header, rows = m.export_rows("block")
    k, measured, predicted = (header.index(c) for c in ("kernel", "bandwidth_gbps", "predicted_gbps"))
    ours = [r for r in rows if not r[k].endswith("torch")]
    assert ours and all(0.75 < r[predicted] / r[measured] < 1.3 for r in ours)
    assert all(r[predicted] is None for r in rows if r[k].endswith("torch"))


def test_the_banner_describes_the_curves_drawn():
    """After a CPU-path sweep the banner still said the curves were GPU timings."""
    m = _model()
    assert m.banner()[0].startswith("Checking")
    m.set_availability(NO_GPU)
    text, tip = m.banner()
    assert "No GPU here" in text and "TRITON_INTERPRET" in tip and "tick <i>CPU path</i>" in text
    m.set_result(fake_sweep()(["add_triton"], [2**20], [1024]))
    assert "are</b> GPU timings" in m.banner()[0] and "H200" in m.banner()[0]
    cpu = fake_sweep(gpu=False)(["add_triton"], [2**20], [1024])
    m.set_result(cpu)
    assert "NOT GPU timings" in m.banner()[0] and "are</b> GPU timings" not in m.banner()[0]
    m.set_availability(GPU)
    assert m.banner() == ("", "")
    m.set_availability(None, "ImportError: no torch")
    assert "no torch" in m.banner()[0]


def test_job_outcomes_reach_the_model():
    m = _model()
    busy, messages, logs = Recorder(m.busy_changed), Recorder(m.message), Recorder(m.log)
    m.begin("sweep")
    m.progressed(1, 4, "add_triton n=1024")
    assert m.busy == "sweep" and m.progress == (1, 4, "add_triton n=1024")
    res = fake_sweep()(["add_triton"], [2**20], [1024])
    m.finish("sweep", True, False, res)
    assert m.busy == "" and m.result is res and m.progress[2] == "done"
    assert busy.calls == [("sweep",), ("",)] and "Sweep: 1 measurements" in messages.calls[-1][0]
    m.finish("load", False, False, None, "cannot read bench.json")
    assert "load failed: cannot read bench.json" in messages.calls[-1][0] and m.progress[2] == "failed"
    assert any("1 measurements of 1 kernels" in c[0] for c in logs.calls)
    assert m.measured_resources() == {"add_triton": (24, 0)}
