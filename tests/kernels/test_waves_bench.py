"""`bench --waves-sweep`: the prediction without a GPU (any preset), the measured path on the CPU,
and results files that keep each point's M, N, K and the cuBLAS ceiling."""

import argparse
from dataclasses import replace

import pytest
from kernels_env import HAS_GPU

from kernels import cli
from kernels.measure.bench import at_dims, waves_sweep
from kernels.declare.registry import get_kernel
from kernels.measure.results import load_results, save_results
from sim.inputs.errors import UserError
from sim.traces.waves import from_measurements, parse_sweep


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.mark.skipif(HAS_GPU, reason="with a GPU this measures instead of predicting")
@pytest.mark.parametrize("gpu", ["H200", "T4", "RTX 5090"])
def test_without_a_gpu_it_prints_the_prediction_for_any_preset(capsys, tmp_path, gpu):
    out = tmp_path / "w.json"
    args = _parse("bench", "--waves-sweep", "M=1024,K=8192,N=3840..4608x256", "--gpu", gpu,
                  "--out", str(out))
    assert args.handler(args) == 0
    text = capsys.readouterr().out
    assert f"Predicted on {preset_name(gpu)}" in text and "prediction only" in text
    assert "tiled pred" in text and "stream_k pred" in text and not out.exists()
    if gpu == "H200":  # 128 tiles, then 136: one wave, then a nearly empty second one
        rows = [line.split() for line in text.splitlines() if line.strip().startswith(("3,840", "4,352"))]
        assert rows[0][1] == "120" and rows[1][1] == "136" and rows[1][3].endswith("<")


def preset_name(gpu):
    from sim.rules.devices import preset

    return preset(gpu).name


@pytest.mark.parametrize("argv,why", [
    (("--waves-sweep", "M=1024,N=1..9x1"), "give K"),
    (("--waves-sweep", "M=1,N=1,K=1", "--block", "64"), "--block does not apply"),
    (("--kernel", "add_triton", "--waves-sweep", "M=64,N=64,K=64"), "not a matrix product"),
    (("--sizes", "2^20",), "give --kernel"),
    (("--kernel", "add_triton", "--gpu", "T4", "--out", "x.json"), "--gpu is for --waves-sweep"),
])
def test_bad_requests_are_one_line(argv, why, monkeypatch):
    monkeypatch.setattr("kernels.launching.backends.gpu_status", lambda: (True, ""))  # as if on a GPU
    monkeypatch.setattr("kernels.measure.bench.waves_sweep", _refuse_non_matmuls)
    args = _parse("bench", *argv, "--out", "w.json") if "--out" not in argv else _parse("bench", *argv)
    with pytest.raises(UserError, match=why):
        args.handler(args)


def _refuse_non_matmuls(dims_list, kernels, **kw):
    for k in kernels:
        if "M" not in k.size_dims(1):
            raise UserError(f"{k.name} is not a matrix product (its sizes are not M, N, K)")
    raise AssertionError("measured")


def test_a_kernel_at_dims_sees_that_matrix_everywhere():
    spec = at_dims(get_kernel("matmul_tiled"), dict(M=896, N=4864, K=8192))
    assert spec.launch_shape(3, None, 132).grid_blocks == 133
    assert spec.flops_of(3) == 2 * 896 * 4864 * 8192
    assert spec.peer_spec().flops_of(3) == 2 * 896 * 4864 * 8192


def test_measured_on_the_cpu_path_and_saved_with_dims(tmp_path):
    """One tiny point through Triton's interpreter: each measurement names its M, N, K; JSON and
    CSV keep them (and the cuBLAS ceiling)."""
    dims = parse_sweep("M=64,K=64,N=64")
    result = waves_sweep(dims, [get_kernel("matmul_tiled")], reps=1, allow_cpu=True, cublas=True)
    assert [m.kernel for m in result.measurements] == ["matmul_tiled", "matmul_tiled_torch"]
    assert all(m.dims == "M=64,N=64,K=64" and m.flops == 2 * 64**3 for m in result.measurements)
    assert not any(m.is_gpu_timing for m in result.measurements)
    result = replace(result, compute_ceiling_tflops=700.5)
    for name in ("w.json", "w.csv"):
        save_results(result, tmp_path / name)
        back = load_results(tmp_path / name)
        assert [m.dims for m in back.measurements] == [m.dims for m in result.measurements]
        assert back.compute_ceiling_tflops == 700.5
    sweep = from_measurements(back.measurements, "w.csv", "CPU")
    assert set(sweep.points) == {"matmul_tiled", "cuBLAS"} and sweep.dims_list == dims
