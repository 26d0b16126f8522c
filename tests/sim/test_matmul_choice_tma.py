"""matmul_auto weighs its TMA candidates only where the GPU has a Tensor Memory Accelerator
(compute capability 9.0 and later); elsewhere it says why they are not candidates."""

from __future__ import annotations

import pytest

from kernels.declare.registry import matmul_variants
from sim.model.matmul_choice import TMA_VARIANTS, choose
from sim.rules.devices import preset

DIMS = dict(M=1024, N=4352, K=8192)


@pytest.mark.parametrize("gpu, has_tma", [("H200", True), ("A100 80GB", False), ("L40S", False)])
def test_tma_candidates_only_on_hopper_and_later(gpu, has_tma):
    choice = choose(matmul_variants(), DIMS, preset(gpu))
    weighed = {c.variant for c in choice.candidates}
    assert bool(weighed & set(TMA_VARIANTS)) == has_tma
    said = [line for line in choice.skipped if "(no TMA unit)" in line]
    assert (len(said) == len(TMA_VARIANTS)) != has_tma


def test_explain_of_a_tma_kernel_before_hopper_says_why_in_one_line(capsys):
    import main

    code = main.main(["explain", "--gpu", "A100 80GB", "--kernel", "matmul_tma_persistent",
                      "--dims", "M=1024,N=4352,K=8192", "--regs", "200", "--smem", "100000"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["warpscope: error: matmul_tma_persistent cannot run on A100 80GB: "
                                 "A100 80GB has compute capability 8.0 (no TMA unit); "
                                 "matmul_tma_persistent needs 9.0 or later"]
