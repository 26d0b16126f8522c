"""The matmul kernels against float64: tiled, persistent, and persistent + stream-K.

Without a GPU they run in Triton's interpreter (fp16 and fp32; its bfloat16 is wrong upstream),
at sizes whose tiles, waves and K ranges exercise every path: partial tiles on both edges, a K
that is not a multiple of BLOCK_K, stream-K work units that span two tiles, programs that get no
stream-K work. The GPU-only paths (inline PTX stamps, wgmma, the atomics' PTX) are compiled for
sm_90 in a subprocess (matmul_compile.py), since the interpreter cannot run them.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from kernels_env import HAS_GPU

from kernels.bodies import matmul as mm

from kernels.declare import matmul_problem as mp
from tests.kernels.matmul_checks import assert_right_on_every_call

DEVICE = "cuda" if HAS_GPU else "cpu"
SMALL = mm.MatmulConfig(64, 64, 32, 2, 4, 2)  # fast in the interpreter: few programs and ops


def _inputs(M, N, K, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(dtype).to(DEVICE)
    b = torch.randn(K, N, generator=g).to(dtype).to(DEVICE)
    return a, b


def _run(kind, a, b, programs=5):
    c = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=DEVICE)  # poison
    if kind == "tiled":
        mm.bind_matmul(a, b, c, SMALL)()
    else:
        mm.bind_matmul_persistent(a, b, c, SMALL, programs=programs, stream_k=kind == "stream_k")()
    return c


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("kind", ["tiled", "persistent", "stream_k"])
def test_matches_float64(kind, dtype, M=100, N=150, K=160):
    """(100, 150, 160): 2 x 3 = 6 tiles with ragged edges, 5 K-iterations with a partial last one;
    on 5 programs the stream-K kernel does 5 tiles whole and spreads the 6th one's K over all 5."""
    a, b = _inputs(M, N, K, dtype)
    err = mp.relative_error(_run(kind, a, b), mp.reference(a, b))
    assert err < mp.TOLERANCE[str(dtype).removeprefix("torch.")], err


def test_tolerance_catches_a_wrong_tile_and_an_unwritten_one():
    a, b = _inputs(100, 150, 160, torch.float16)
    ref = mp.reference(a, b)
    good = _run("tiled", a, b).float()
    wrong = good.clone()
    wrong[64:, 128:] *= 1.01  # one edge tile 1% off: far above fp16 rounding
    assert mp.relative_error(wrong, ref) > mp.TOLERANCE["float16"]
    unwritten = good.clone()
    unwritten[0, 0] = float("nan")
    assert np.isnan(mp.relative_error(unwritten, ref))


@pytest.mark.parametrize("M,N,K,programs,leftover", [(100, 150, 160, 4, 2), (64, 64, 64, 5, 1)])
def test_stream_k_splits_and_cleans_up(M, N, K, programs, leftover):
    """4 programs on 6 tiles: 4 whole, the other 2 tiles' 10 K-iterations cut into 4 ranges (two
    span a tile boundary). 5 programs on 1 tile of 2 K-iterations: no full wave, 3 programs idle.
    The second call must give the same answer: a workspace left dirty would add the first call's
    partial sums, a counter left dirty would leave a tile unwritten (still NaN)."""
    a, b = _inputs(M, N, K, torch.float32, seed=3)
    c = torch.empty((M, N), dtype=a.dtype, device=DEVICE)
    run = mm.bind_matmul_persistent(a, b, c, SMALL, programs=programs, stream_k=True)
    assert mm.stream_k_split(M, N, K, SMALL, programs)["leftover_tiles"] == leftover
    assert_right_on_every_call(run, c, a, b)


def test_flop_and_byte_formulas():
    assert mp.matmul_flops(8192, 8192, 8192) == 2 * 8192**3
    assert mp.matmul_bytes(2, 3, 4) == 2 * (2 * 4 + 4 * 3 + 2 * 3)  # A, B read; C written
    assert mm.tiles(896, 4864, mm.DEFAULT_CONFIG) == 133  # 7 x 19: one tile past 132 SMs
    assert mm.stamp_rows(896, 4864, mm.DEFAULT_CONFIG, 132, stream_k=True) == 132 + 2 * 132


def test_declarations_run_and_check_through_the_registry():
    """`check --kernel matmul`: each declaration, launched by kernels/launching/launcher.py with its own
    grid rule, against the float64 reference (under the interpreter here)."""
    from kernels.measure.check import run_checks

    results = run_checks(["matmul_tiled", "matmul_persistent", "matmul_stream_k"], [100])
    assert [(r.kernel, r.status) for r in results] == [
        ("matmul_tiled", "OK"), ("matmul_persistent", "OK"), ("matmul_stream_k", "OK")], results
    from kernels.declare.registry import get_kernel

    spec = get_kernel("matmul_tiled")
    assert spec.flops_of(100) == 2 * 100**3 and spec.group == "matmul"
    assert spec.launch_shape(8192).grid_blocks == 64 * 32  # 128 x 256 tiles of an 8192^2 C


def test_every_variant_compiles_for_sm90():
    """The GPU-only code: tiled with stamps, persistent + stream-K with stamps (covers the plain
    loop, the atomics and the inline PTX). Compiled by Triton for sm_90, no GPU needed."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = Path(__file__).with_name("matmul_compile.py")
    done = subprocess.run([sys.executable, str(script), "--quick"], env=env, capture_output=True,
                          text=True, timeout=300)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and rows, done.stdout + done.stderr
    for row in rows:
        assert row["wgmma"] and row["stack"] == 0, row  # tensor cores, no spills
        assert row["smid"] == row["globaltimer"] == row["stamp"], row
        assert row["atomics"] == row.get("stream_k", False), row
