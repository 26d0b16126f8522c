"""`main.py calibrate --matmul` without a GPU: the timer is replaced by times made with known
constants (a truth fit file, read through the model as the user's file of another config
folder), so the fit, the write path and the held-out check run for real, and must give the
known constants back."""

import datetime
import json
import os

import pytest
from kernels_env import HAS_GPU

from kernels import cli
from kernels.measure import matmul_calibrate as mc
from sim.inputs.errors import UserError
from sim.model.matmul_choice import TILE_FIT_PATH, compute_constant, tile_fit, user_fit_path
from sim.model.throughput import compute_model
from sim.rules.devices import preset

GPU = preset("H100 SXM")  # no shipped fit of its own: the H200's, assumed, until calibrated
SIZES = (dict(M=1024, N=1024, K=8192), dict(M=1024, N=4096, K=8192), dict(M=1024, N=6144, K=8192))
HELD_OUT = ((1024, 5504, 8192),)
SHIPPED = json.loads(TILE_FIT_PATH.read_text())
# The truth: compute terms unlike the H200's, every efficiency 3% under the H200's, and the tiled
# 128x256 kernel's 1 (the compute terms are fitted on it: its own efficiency is theirs)
TRUTH_TERMS = {"tensor_efficiency": 0.91, "memory_exposed": 0.7}
TILED = "matmul_tiled 128x256x64 w8 s3"
TRUTH_EFF = {k: (1.0 if k == TILED else round(v * 0.97, 4)) for k, v in SHIPPED["efficiency"].items()}


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return tmp_path / "cfg"


class TruthTimer:
    """mc.GpuTimer's signature: each launch's time is the model's with the truth fit (written as
    the user's file of its own config folder), cuBLAS 5% under the fastest candidate."""

    def __init__(self, folder):
        self.folder, self.calls = folder, []
        saved = os.environ["XDG_CONFIG_HOME"]
        os.environ["XDG_CONFIG_HOME"] = str(folder)
        try:
            path = user_fit_path(GPU.name)
            path.parent.mkdir(parents=True)
            compute = {**SHIPPED["compute"], **TRUTH_TERMS}
            path.write_text(json.dumps({**SHIPPED, "gpu": GPU.name, "compute": compute,
                                        "efficiency": TRUTH_EFF}))
        finally:
            os.environ["XDG_CONFIG_HOME"] = saved

    def __call__(self, dims, candidates, deadline):
        from kernels.declare.registry import matmul_variants
        from sim.model.matmul_choice import choose

        self.calls.append((dims, [c.label for c in candidates]))
        saved = os.environ["XDG_CONFIG_HOME"]
        os.environ["XDG_CONFIG_HOME"] = str(self.folder)
        try:
            truth = {c.label: c.time_us for c in choose(matmul_variants(), dims, GPU, mc.DTYPE).candidates}
        finally:
            os.environ["XDG_CONFIG_HOME"] = saved
        got = {c.label: truth[c.label] for c in candidates}
        return {**got, mc.CUBLAS: 0.95 * min(got.values())}


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """One calibration against the truth (a module's worth of checks read it)."""
    root = tmp_path_factory.mktemp("calibrate")
    saved = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(root / "cfg")
    try:
        timer, said = TruthTimer(root / "truth"), []
        result = mc.calibrate_matmul(gpu=GPU, measure=timer, sizes=SIZES, held_out=HELD_OUT,
                                     command="warpscope calibrate --matmul", say=said.append)
        yield result, timer, said, root / "cfg"
    finally:
        if saved is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = saved


def test_the_fit_gives_back_the_constants_the_times_were_made_with(calibrated):
    result, timer, _said, _cfg = calibrated
    assert [d for d, _ in timer.calls[:3]] == list(SIZES)  # the compute terms' sizes first
    assert len(timer.calls[0][1]) == 18  # every candidate matmul_auto weighs on a Hopper GPU
    assert result.compute_fitted and not result.failed
    for name, value in TRUTH_TERMS.items():
        assert result.fit["compute"][name] == pytest.approx(value, abs=2e-3), name
    measured = {k: v for k, v in result.fit["efficiency"].items()
                if k not in result.fit["efficiency_assumed"]}
    assert len(measured) == 18 and result.fit["efficiency_assumed"] == []
    for key, value in measured.items():
        assert value == pytest.approx(TRUTH_EFF[key], rel=3e-3), key


def test_the_held_out_check_predicts_with_what_was_saved(calibrated):
    """Off the sawtooth, the saved fit predicts the truth's time (within 1%: the constants are
    stored rounded), cuBLAS beside it."""
    result, *_ = calibrated
    ((m, n, k, label, predicted, measured, cublas),) = result.held_out
    assert (m, n, k) == HELD_OUT[0] and predicted == pytest.approx(measured, rel=0.01)
    assert cublas < measured and label
    lines = mc.report(result)
    assert any("held-out check: 1 of 1 predicted within 10%" in line for line in lines)


def test_the_written_file_round_trips_and_wins_over_the_shipped_one(calibrated):
    result, _timer, _said, cfg = calibrated
    saved = os.environ["XDG_CONFIG_HOME"]
    os.environ["XDG_CONFIG_HOME"] = str(cfg)
    try:
        path = user_fit_path(GPU.name)
        assert str(path) == result.path and path.name == "H100_SXM_matmul.json"
        assert json.loads(path.read_text()) == result.fit == tile_fit(GPU)
        assert compute_model(GPU).tensor_efficiency == result.fit["compute"]["tensor_efficiency"]
        today = datetime.date.today().isoformat()
        assert compute_constant(GPU).label == (f"calibrated on H100 SXM (atomic rate and fix-up "
                                               f"assumed from H200), {today}")
        assert compute_constant(preset("H200")).label.startswith("measured")  # another GPU's: shipped
        from kernels.declare.registry import get_kernel
        from sim.model.throughput import predict_matmul

        p = predict_matmul(get_kernel("matmul_stream_k"), dict(M=1024, N=3584, K=8192), GPU)
        assert p.launch.sources["compute_terms"].startswith("calibrated on H100 SXM")
        assert p.launch.sources["tile_efficiency"] == f"calibrated on H100 SXM, {today}"
        assert p.launch.sources["stream_k_leftover_us"].startswith("assumed from H200")
    finally:
        os.environ["XDG_CONFIG_HOME"] = saved


def test_a_size_that_fails_is_noted_and_the_rest_still_fitted(config, tmp_path):
    truth = TruthTimer(tmp_path / "truth")

    def measure(dims, candidates, deadline):
        if dims["N"] == 6144:
            raise RuntimeError("CUDA error: an illegal memory access")
        return truth(dims, candidates, deadline)

    result = mc.calibrate_matmul(gpu=GPU, measure=measure, sizes=SIZES, held_out=(),
                                 say=lambda _m: None)
    assert result.failed == [("N=6144", "RuntimeError: CUDA error: an illegal memory access")]
    assert [p["N"] for p in result.points] == [1024, 4096]
    assert result.fit["compute"]["tensor_efficiency"] == pytest.approx(0.91, abs=2e-3)
    assert tile_fit(GPU) == result.fit


def test_a_spent_budget_is_one_line_and_writes_nothing(config, tmp_path):
    from sim.inputs.errors import RunFailure

    with pytest.raises(RunFailure, match="no matmul size could be measured") as exc:
        mc.calibrate_matmul(gpu=GPU, measure=TruthTimer(tmp_path / "truth"), sizes=SIZES,
                            budget_s=mc.CHECK_S, say=lambda _m: None)
    assert "\n" not in str(exc.value) and not user_fit_path(GPU.name).exists()


def test_without_a_calibration_the_h100_says_assumed_from_h200(config):
    assert compute_constant(GPU).label.startswith("assumed from H200")
    assert tile_fit(GPU) == SHIPPED


def test_a_damaged_user_file_is_one_line_and_the_shipped_one_is_used(config, capsys):
    path = user_fit_path(GPU.name)
    path.parent.mkdir(parents=True)
    for text in ("{not json", json.dumps({**SHIPPED, "compute": {"tensor_efficiency": -1}})):
        path.write_text(text)
        assert tile_fit(GPU) == SHIPPED
        assert compute_model(GPU).tensor_efficiency == SHIPPED["compute"]["tensor_efficiency"]
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "ignored" in err and path.name in err, err


def test_the_command_says_what_it_does_and_refuses_a_wrong_flag(capsys):
    parser = cli.argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command", required=True))
    with pytest.raises(SystemExit):
        parser.parse_args(["calibrate", "--help"])
    assert "--matmul" in capsys.readouterr().out
    args = parser.parse_args(["calibrate", "--matmul", "--out", "x.json"])
    with pytest.raises(UserError, match="XDG_CONFIG_HOME"):
        args.handler(args)


@pytest.mark.skipif(HAS_GPU, reason="on a GPU this would calibrate it")
def test_without_a_gpu_it_says_so_in_one_line(config):
    parser = cli.argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["calibrate", "--matmul"])
    with pytest.raises(UserError, match="calibrate --matmul needs (a GPU|Triton on the GPU)") as exc:
        args.handler(args)
    assert "\n" not in str(exc.value)
    assert not user_fit_path("H100 SXM").parent.exists()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1",
                    reason="the timer's CPU path runs Triton's interpreter")
def test_the_timer_launches_each_variant_as_matmul_auto_does_and_checks_its_product():
    """The GPU timer's path on the CPU (host clock, no timing): each variant at its smallest tile
    is bound, run and compared with torch's product; a launch whose product is wrong (a
    persistent kernel given no programs writes nothing) is named and left out, the others kept."""
    from dataclasses import replace

    dims = dict(M=64, N=128, K=128)
    small = [c for c in mc._candidates(dims, GPU) if c.params["BLOCK_M"] == 64]
    assert len(small) == 6
    persistent = next(c for c in small if c.variant == "persistent")
    wrong = replace(persistent, programs=0, params={**persistent.params, "num_stages": 5})
    said = []
    timer = mc.GpuTimer(rounds=1, say=said.append, device="cpu")
    got = timer(dims, small + [wrong], deadline=float("inf"))
    assert sorted(got) == sorted([c.label for c in small] + [mc.CUBLAS])
    assert list(timer.broken) == [wrong.label], timer.broken
    assert len(said) == 1 and "FAILED" in said[0]


@pytest.mark.skipif(not HAS_GPU or os.environ.get("TRITON_INTERPRET") == "1",
                    reason="real timing needs a GPU, and Triton's interpreter times nothing")
def test_on_the_gpu_it_writes_a_fit_the_model_reads(config):
    gpu = mc.require_gpu()  # the two sizes the compute terms are fitted on, one held out
    result = mc.calibrate_matmul(say=lambda _m: None, sizes=mc.sawtooth(gpu.sm_count)[:2],
                                 held_out=HELD_OUT[:1])
    assert result.points and os.path.exists(result.path)
    assert tile_fit(gpu)["calibrated"].startswith("calibrated on ")
