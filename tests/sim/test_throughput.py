"""The compute-bound model: what each program does (against the schedules the H200 recorded), the
waves it makes, and its predictions against the H200 sawtooth it was not fitted on."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.declare.registry import get_kernel
from sim.rules.devices import preset, spec_from_device
from sim.inputs.errors import UserError
from sim.traces.compare import compare_trace
from sim.traces.matmul_trace import recorded_matmul
from sim.rules.occupancy import occupancy
from sim.model.launch_model import Launch, predict_launch
from sim.schedule.policies import cost_model_id
from sim.model.throughput import launch_work, predict_matmul, tensor_tflops
from sim.traces.trace import load_trace
from sim.traces.waves import CUBLAS, load_matmul_run, parse_sweep
from tests.tiers import every_preset

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json"
TRACES = ROOT / "tests" / "data" / "matmul_traces"
H200 = preset("H200")
TILED, PERSISTENT, STREAM_K = (get_kernel(f"matmul_{k}") for k in ("tiled", "persistent", "stream_k"))


def _recorded_items(name: str) -> set[tuple]:
    """(program, tile, k_begin, k_end) of every row the kernel stamped on the H200."""
    trace = load_trace(TRACES / f"{name}.json")
    cols = trace.meta["extra_columns"]
    return {(r[cols.index("program")], r[cols.index("tile")], r[cols.index("k_begin")], r[cols.index("k_end")])
            for r in trace.meta["extra"]}


@pytest.mark.parametrize("name", sorted(p.stem for p in TRACES.glob("*.json")))
def test_simulated_schedule_matches_the_recorded_one(name):
    trace = load_trace(TRACES / f"{name}.json")
    c = compare_trace(trace, H200)
    recorded, simulated = c.recorded, c.simulated
    assert c.model == "compute" and simulated.n_blocks == recorded.n_blocks  # tile by tile
    assert simulated.waves == recorded.waves
    assert simulated.makespan_us == pytest.approx(recorded.makespan_us, rel=0.08)
    assert c.predicted_launch_us == pytest.approx(trace.meta["event_ms"] * 1e3, rel=0.08)
    # the launch read off the trace is the registry's kernel at the recorded tile and grid
    kernel, launch = get_kernel("matmul_" + trace.meta["kernel"]), recorded_matmul(trace)
    pred = predict_matmul(kernel, launch.dims, H200, launch.block, dtype=trace.meta["dtype"],
                          resources=(trace.meta["regs"], trace.meta["smem"]))
    assert pred.programs == launch.programs and pred.time_us == c.predicted_launch_us


@pytest.mark.parametrize("gpu", every_preset())
def test_every_preset_gets_a_prediction(gpu):
    spec = preset(gpu)
    pred = predict_matmul(TILED, dict(M=1024, N=4352, K=8192), spec)
    conc = pred.blocks_per_sm * spec.sm_count
    assert pred.simulation.waves == -(-pred.tiles // conc) and 0 < pred.tflops < tensor_tflops(spec)
    if pred.note:  # the kernel's 144 KiB tile does not fit: a smaller tile that launches
        assert occupancy(spec, 32 * pred.params["num_warps"], 0, 0).can_launch


def test_tensor_rates_and_their_gaps():
    assert tensor_tflops(H200, "bfloat16") == 989.4
    assert tensor_tflops(preset("V100"), "float16") == 125
    with pytest.raises(UserError, match="no BF16"):
        tensor_tflops(preset("V100"), "bfloat16")
    detected = spec_from_device(name="NVIDIA H200", compute_capability=(9, 0), sm_count=132,
                                l2_bytes=H200.l2_bytes, memory_bytes=H200.memory_bytes,
                                peak_dram_gbps=4800.0, clock_mhz=1980)
    assert detected.tensor_tflops_fp16 is None and tensor_tflops(detected) == 989.4


def test_the_compute_cost_is_a_registered_policy():
    assert cost_model_id("compute-bound") == "compute"
    occ = occupancy(H200, 256, 220, 147456)
    work = launch_work(TILED, 1, {}, H200, occ.blocks_per_sm, 133, dict(M=896, N=4864, K=8192))
    launch = Launch(133, 256, occ.blocks_per_sm, work=work.build())
    sim = predict_launch(H200, launch, "compute", placement="sm-order").simulation
    assert sim.cost == "compute" and sim.waves == 2
    assert sim.makespan_us == pytest.approx(predict_matmul(TILED, dict(M=896, N=4864, K=8192), H200,
                                                           placement="sm-order").simulation.makespan_us)
    with pytest.raises(UserError, match="needs a kernel"):
        predict_launch(H200, Launch(133, 256, occ.blocks_per_sm), "compute")
    with pytest.raises(UserError, match="declares no FLOPs"):
        launch_work(get_kernel("add_triton"), 10240, {}, H200, 1, 10).build()


def test_leaving_out_identical_waves_keeps_the_last_ones():
    """A big grid simulated in part (max_waves) ends exactly as the whole grid does."""
    occ = occupancy(H200, 256, 220, 147456)
    work = launch_work(TILED, 1, {}, H200, 1, 8 * 133, dict(M=1024, N=133 * 256, K=1024))
    launch = Launch(8 * 133, 256, occ.blocks_per_sm, work=work.build())
    whole = predict_launch(H200, launch, "compute", max_waves=None).simulation
    part = predict_launch(H200, launch, "compute", max_waves=2).simulation
    assert part.skipped_waves > 0
    wave = whole.makespan_us - whole.timeline.wave_starts_us[-1]
    assert part.makespan_us - part.timeline.wave_starts_us[-1] == pytest.approx(wave)


def test_sweeps_read_like_the_command_line():
    dims = parse_sweep("M=1024,K=8192,N=256..14080x256")
    assert len(dims) == 55 and dims[0] == dict(M=1024, N=256, K=8192) and dims[-1]["N"] == 14080
    assert [d["M"] for d in parse_sweep("K=64, N=64, M=2^7..2^9 x128")] == [128, 256, 384, 512]
    for bad, why in (("M=1,N=2", "give K"), ("M=1..4,N=1..4,K=1", "only one"),
                     ("M=1,N=1,K=0..4", "increasing"), ("X=1", "not M="), ("M=1,M=2,N=1,K=1", "twice"),
                     ("M=1,K=1,N=1..100000x1", "bigger step")):
        with pytest.raises(UserError, match=why):
            parse_sweep(bad)


def test_measured_file_keeps_its_kernels_and_cublas():
    run = load_matmul_run(RUN)
    assert set(run.points) == {"matmul_tiled", "matmul_persistent", "matmul_stream_k", CUBLAS}
    assert len(run.dims_list) == 55 and run.dtype == "bfloat16"
    assert run.resources["matmul_tiled"] == (220, 147456)
