"""One time per launch: `explain --json`, `simulate --json` and the window's models give
the same whole-launch time, its parts add up to it, and bandwidth x time = bytes moved, on every
preset at several sizes and blocks."""

import json

import pytest

import main
from gui.models.insight import InsightModel
from gui.models.launch import LaunchInputs, LaunchModel
from gui.models.simulation import SimulationModel, SimulationOptions
from tests.tiers import every_preset

LAUNCHES = [(2**12, 128), (1_000_000, 256), (2**24, 1024), (3 * 2**20 + 7, 96)]


def _cli(capsys, *argv) -> dict:
    assert main.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("gpu", every_preset())
def test_every_surface_gives_one_whole_launch_time(gpu, capsys):
    for elements, block in LAUNCHES:
        args = ("--gpu", gpu, "--elements", str(elements), "--block", str(block))
        explained = _cli(capsys, "explain", *args)
        simulated = _cli(capsys, "simulate", *args)
        launch = LaunchModel(LaunchInputs(gpu=gpu, elements=elements, threads_per_block=block))
        window = InsightModel(launch, measured=None).launch_prediction
        run = SimulationModel(launch, SimulationOptions("memory", "tpc-spread")).run_now()
        whole = explained["whole_launch_us"]
        where = (gpu, elements, block)
        assert whole == simulated["whole_launch_us"] == round(window.whole_launch_us, 4) \
            == run.summary()["whole_launch_us"], where
        assert explained["parts_us"] == simulated["parts_us"] == run.summary()["parts_us"], where
        assert sum(explained["parts_us"].values()) == pytest.approx(whole, abs=1e-3), where
        assert explained["parts_us"]["launch_overhead_us"] > 0, where
        for out in (explained, simulated):  # bandwidth x time = bytes, in GB/s x us = kB
            assert out["bandwidth_gbps"] * out["whole_launch_us"] * 1e3 == \
                pytest.approx(out["bytes_moved"], rel=1e-3), where
        assert out["bytes_moved"] == 12 * elements
        assert window.bandwidth_gbps * window.whole_launch_us * 1e3 == pytest.approx(12 * elements)
        assert explained["tail_fraction"] == simulated["tail_fraction"], where


def test_a_tiled_matmul_is_one_compute_bound_time_everywhere(capsys):
    """`explain`, `simulate` and predict_matmul (the Waves and Bandwidth panels) give a matmul
    kernel one whole-launch time, compute-bound, with its launch overhead."""
    from kernels.declare.registry import get_kernel
    from sim.rules.devices import preset
    from sim.rules.occupancy import occupancy
    from sim.model.throughput import estimated_registers, pipeline_smem_bytes, predict_matmul

    spec = get_kernel("matmul_tiled")
    params = spec.block_params(None)
    regs, smem = estimated_registers(params), pipeline_smem_bytes(params)
    args = ("--kernel", "matmul_tiled", "--gpu", "H200", "--elements", "4096", "--regs",
            str(regs), "--smem", str(smem))
    explained, simulated = _cli(capsys, "explain", *args), _cli(capsys, "simulate", *args)
    waves = predict_matmul(spec, dict(M=4096, N=4096, K=4096), preset("H200"))
    assert explained["mode"] == simulated["mode"] == "compute"
    assert explained["whole_launch_us"] == simulated["whole_launch_us"] == \
        round(waves.time_us, 4) == round(waves.launch.whole_launch_us, 4)
    assert explained["tflops"] == round(waves.tflops, 2)
    assert waves.launch.launch_overhead_us == explained["parts_us"]["launch_overhead_us"] > 0
    assert occupancy(preset("H200"), 32 * params["num_warps"], regs, smem).blocks_per_sm == \
        waves.blocks_per_sm


MATMUL_GPUS = ("H200", "A100 80GB")  # fitted on the H200; the A100 takes the fit, labelled assumed
MATMUL_DIMS = ("M=1024,N=4352,K=8192", "M=1024,N=2304,K=8192", "M=2048,N=3072,K=1024")
MATMUL_KERNELS = ("matmul_auto", "matmul_tiled", "matmul_stream_k", "matmul_tma_persistent")


def _matmul_candidate(name: str, choice):
    """The chooser's row for this launch: matmul_auto's pick, a fixed kernel's declared tile."""
    from kernels.declare.registry import get_kernel, matmul_variants

    if name == "matmul_auto":
        return choice.chosen
    variant = next(v for v, s in matmul_variants().items() if s.name == name)
    params = get_kernel(name).block_params(None)
    return next(c for c in choice.candidates if c.variant == variant
                and all(c.params[k] == params[k] for k in c.params))


@pytest.mark.parametrize("gpu", MATMUL_GPUS)
def test_a_matmul_launch_is_its_candidates_time_everywhere(gpu, capsys):
    """explain --json, simulate --json, the chooser's table and the window's Verdicts give a
    matmul launch one whole-launch time (bf16, the table's dtype; the fitted efficiency and
    stream-K's leftover term in it), its parts add up and FLOP/s x time = the product's FLOPs."""
    from kernels.declare.registry import all_kernels, matmul_choice
    from sim.model.throughput import estimated_registers, pipeline_smem_bytes
    from sim.model.matmul_choice import TMA_MIN_CC
    from sim.rules.devices import preset

    spec = preset(gpu)
    for dims in MATMUL_DIMS:
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in dims.split(","))}
        choice = matmul_choice(sizes, spec)
        assert choice.dtype == "bfloat16"
        for name in MATMUL_KERNELS:
            if "tma" in name and tuple(spec.compute_capability) < TMA_MIN_CC:
                continue  # no TMA unit: not a candidate there (tests/sim/test_matmul_choice_tma.py)
            c = _matmul_candidate(name, choice)
            regs, smem = estimated_registers(c.params), pipeline_smem_bytes(c.params)
            args = ("--gpu", gpu, "--kernel", name, "--dims", dims, "--regs", str(regs),
                    "--smem", str(smem))
            explained, simulated = _cli(capsys, "explain", *args), _cli(capsys, "simulate", *args)
            launch = LaunchModel(LaunchInputs(gpu=gpu))
            launch.set_kernels(all_kernels())
            assert launch.select_kernel(name) and launch.state.inputs.kernel == name
            launch.update(dims=dims, regs_per_thread=regs, smem_per_block=smem)
            window = InsightModel(launch, measured=None).launch_prediction
            where = (gpu, dims, name)
            whole = explained["whole_launch_us"]
            assert explained["mode"] == simulated["mode"] == window.mode == "compute", where
            assert whole == simulated["whole_launch_us"] == round(window.whole_launch_us, 4) \
                == pytest.approx(c.time_us, abs=1e-4), where
            assert explained["parts_us"] == simulated["parts_us"], where
            assert sum(explained["parts_us"].values()) == pytest.approx(whole, abs=1e-3), where
            flops = 2 * sizes["M"] * sizes["N"] * sizes["K"]
            for out in (explained, simulated):
                assert out["tflops"] * out["whole_launch_us"] * 1e6 == pytest.approx(flops, rel=1e-3)
            assert c.tflops * c.time_us * 1e6 == pytest.approx(flops, rel=1e-9)
            fitted = explained["confidence"]["constants"]["tile_efficiency"]
            assert fitted["provenance"] == ("measured" if gpu == "H200" else "assumed"), where
