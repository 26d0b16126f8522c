"""The TMA matmul kernels (tiled, persistent, stream-K) against float64, through the interpreter,
and compiled for sm_90.

Triton's interpreter runs host-side tensor descriptors (it turns each into its own descriptor
object and copies boxes with numpy), so the kernels' own code is checked here on the CPU, in
fp16 and fp32 (its bfloat16 is wrong upstream), at sizes with ragged edges on both sides and a K
that is not a multiple of BLOCK_K (the boxes past the matrix read zeros and store nothing). The
sm_90 code (TMA copies, wgmma, the pipelined and warp-specialised loops) is compiled without a GPU
in a subprocess (matmul_tma_compile.py); it is not run here.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from kernels_env import HAS_GPU

from kernels.bodies import matmul as mm

from kernels.declare import matmul_problem as mp
from tests.kernels.matmul_checks import assert_right_on_every_call
from kernels.bodies import matmul_tma as mt

DEVICE = "cuda" if HAS_GPU else "cpu"
SMALL = mm.MatmulConfig(64, 64, 32, 2, 4, 2)
# (100, 152, 168): 2 x 3 = 6 tiles, the last row and column of tiles ragged, 6 K-iterations of 32
# with 8 in the last; 5 persistent programs: one of them takes two tiles
M, N, K = 100, 152, 168


def _inputs(dtype, m=M, n=N, k=K, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(m, k, generator=g).to(dtype).to(DEVICE),
            torch.randn(k, n, generator=g).to(dtype).to(DEVICE))


def _poisoned(a, b):
    return torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=DEVICE)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("variant, loop", [
    ("tma", {}), ("tma_persistent", {}), ("tma_persistent", dict(flatten=False)),
    ("tma_persistent", dict(epilogue_subtile=True)),
    ("tma_persistent", dict(warp_specialize=True, flatten=False))])
def test_matches_float64(variant, loop, dtype):
    a, b = _inputs(dtype)
    c = _poisoned(a, b)
    mt.bind_matmul_tma_variant(a, b, c, variant, SMALL, programs=5, **loop)()
    err = mp.relative_error(c, mp.reference(a, b))
    assert err < mp.TOLERANCE[str(dtype).removeprefix("torch.")], err


@pytest.mark.parametrize("m, n, k, programs, leftover", [
    (100, 152, 168, 5, 1),  # one leftover tile split over 5 programs (6 K-iterations: 1-2 each)
    (100, 152, 168, 4, 2),  # two: each program's range crosses from one tile into the next
    (64, 128, 64, 8, 2),  # no full wave: every tile split, more programs than K-iterations
    (130, 200, 72, 3, 0),  # full waves only: the stream-K part has nothing to do
    (100, 152, 40, 5, 1)])  # K = 40: one full and one partial K-iteration, 2 ragged tiles a side
@pytest.mark.parametrize("loop", [{}, dict(flatten=False, epilogue_subtile=True)])
def test_stream_k_matches_float64_and_cleans_up(m, n, k, programs, leftover, loop):
    """The TMA stream-K kernel: its split is the pointer kernel's (stream_k_split), its answer
    right on ragged edges and partial K, and a second call (the workspace and counters back at
    zero after the first) right again."""
    a, b = _inputs(torch.float32, m, n, k, seed=5)
    assert mm.stream_k_split(m, n, k, SMALL, programs)["leftover_tiles"] == leftover
    c = _poisoned(a, b)
    run = mt.bind_matmul_tma_variant(a, b, c, "tma_stream_k", SMALL, programs, **loop)
    assert_right_on_every_call(run, c, a, b)


def test_more_programs_than_tiles_and_repeated_calls():
    """8 programs for 2 tiles: the launcher keeps 2; a second call gives the same answer."""
    a, b = _inputs(torch.float32, 64, 128, 64, seed=2)
    c = _poisoned(a, b)
    run = mt.bind_matmul_tma_persistent(a, b, c, SMALL, programs=8)
    assert_right_on_every_call(run, c, a, b)


def test_rows_tma_cannot_reach_are_refused():
    a, b = _inputs(torch.float16, 100, 150, 160)  # N = 150: 300-byte rows, not 16-byte aligned
    with pytest.raises(ValueError, match="multiples of 8"):
        mt.bind_matmul_tma(a, b, _poisoned(a, b), SMALL)
    a, b = _inputs(torch.float16)
    with pytest.raises(ValueError, match="row-major"):
        mt.bind_matmul_tma(a, b.t().contiguous().t(), _poisoned(a, b), SMALL)
    with pytest.raises(ValueError, match="not a TMA variant"):
        mt.bind_matmul_tma_variant(a, b, _poisoned(a, b), "tiled", SMALL, 4)


def test_declarations_run_and_check_through_the_registry():
    """`check --kernel matmul_tma,matmul_tma_persistent,matmul_tma_stream_k`: launched by
    kernels/launching with their declared grids (the wrapper makes the descriptors from the
    launch's BLOCK sizes; stream-K's workspace and counters are declared inputs)."""
    from kernels.measure.check import run_checks

    names = ["matmul_tma", "matmul_tma_persistent", "matmul_tma_stream_k"]
    results = run_checks(names, [104])
    assert [(r.kernel, r.status) for r in results] == [(n, "OK") for n in names], results


def test_auto_launches_a_tma_choice():
    """A choice whose pick is a TMA candidate (the first TMA one, taken as chosen) launches it."""
    from dataclasses import replace

    from kernels.declare.registry import auto_gpu, matmul_choice

    a, b = _inputs(torch.float16, 128, 256, 64, seed=4)
    gpu = auto_gpu(4)
    choice = matmul_choice(dict(M=128, N=256, K=64), gpu, "float16")
    for variant in ("tma", "tma_persistent", "tma_stream_k"):
        pick = next(c for c in choice.candidates if c.variant == variant)
        forced = replace(choice, candidates=(pick,))
        c = _poisoned(a, b)
        run = mm.bind_matmul_auto(a, b, c, gpu, "float16", choice=forced)
        run()
        assert run.choice.chosen.variant == variant
        assert mp.relative_error(c, mp.reference(a, b)) < mp.TOLERANCE["float16"]


@pytest.mark.slow
def test_tma_kernels_compile_for_sm90():
    """TMA copies and wgmma in every required configuration, no spills; the warp-specialised
    ones compile, and whether Triton split their warps is reported, not required."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = Path(__file__).with_name("matmul_tma_compile.py")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=300)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and rows, done.stdout + done.stderr
    for row in rows:
        if row["required"]:
            assert "error" not in row, row
            assert row["wgmma"] and row["tma"] and row["stack"] == 0, row
            assert row["atomics"] == row["loop"].get("STREAM_K", False), row  # stream-K's adds
            assert row["shared_metadata"] <= 232448, row  # the H200's 227 KiB per block


class _Recorder:
    """Stands in for a JIT kernel: `kernel[grid](*args, **meta)` keeps the meta of each launch."""

    def __init__(self) -> None:
        self.meta: list[dict] = []

    def __getitem__(self, grid):
        return lambda *args, **meta: self.meta.append(meta)


@pytest.mark.parametrize("stream_k, warps, flatten, ws", [
    (True, 8, True, False),  # TMA stream-K as declared (the flags measured)
    (True, 4, True, False),
    (False, 8, True, False)])  # TMA persistent as declared
def test_the_launcher_takes_the_variants_declared_flags(monkeypatch, stream_k, warps, flatten, ws):
    """bind_matmul_tma_persistent's defaults, and the registry's launch of the declaration, are
    the variant's declared flags (matmul_problem.tma_loop); a flag given is kept."""
    variant = "tma_stream_k" if stream_k else "tma_persistent"
    assert mp.tma_loop(variant, warps) == dict(FLATTEN=flatten, WARP_SPECIALIZE=ws,
                                               EPILOGUE_SUBTILE=False)
    rec = _Recorder()
    monkeypatch.setattr(mt, "matmul_tma_persistent_kernel", rec)
    a, b = _inputs(torch.float16)
    config = mm.MatmulConfig(64, 64, 32, 2, warps, 2)
    mt.bind_matmul_tma_persistent(a, b, _poisoned(a, b), config, programs=5, stream_k=stream_k)()
    mt.bind_matmul_tma_persistent(a, b, _poisoned(a, b), config, programs=5, stream_k=stream_k,
                                  flatten=not flatten)()
    assert {k: rec.meta[0][k] for k in mp.TMA_LOOP[variant]} == mp.tma_loop(variant, warps)
    assert rec.meta[1]["FLATTEN"] is (not flatten)
    declared = mt._DeclaredTma(rec)  # the registry's path: the declaration's constants as meta
    spec_constants = next(d["constants"] for d in mp.MATMUL if d["name"] == f"matmul_{variant}")
    declared[(5,)](a, b, _poisoned(a, b), None, None, M, N, K, **spec_constants,
                   **config.meta())
    assert rec.meta[2]["WARP_SPECIALIZE"] is ws and rec.meta[2]["FLATTEN"] is flatten


@pytest.mark.parametrize("warps, ws", [(8, True), (4, False)])
def test_warp_specialisation_asked_below_8_warps_is_dropped(monkeypatch, warps, ws):
    """Triton cannot warp-specialise 4-warp programs of this kernel for sm_90 (triton 3.6.0
    and 3.7.1): the registry's launch of a declaration asking for it drops it there, keeps it at 8."""
    assert mp.supported_loop(dict(FLATTEN=False, WARP_SPECIALIZE=True), warps) == dict(
        FLATTEN=False, WARP_SPECIALIZE=ws)
    rec = _Recorder()
    a, b = _inputs(torch.float16)
    config = mm.MatmulConfig(64, 64, 32, 2, warps, 2)
    mt._DeclaredTma(rec)[(5,)](a, b, _poisoned(a, b), None, None, M, N, K, STREAM_K=True,
                               FLATTEN=False, WARP_SPECIALIZE=True, EPILOGUE_SUBTILE=False,
                               **config.meta())
    assert rec.meta[0]["WARP_SPECIALIZE"] is ws
