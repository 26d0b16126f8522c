"""The TMA matmuls compile without a GPU through the product's own path (kernels.offline_compile.compile
spec_request, what `explain --kernel matmul_auto` and the window ask): their descriptors are typed
as Triton's launcher types a TensorDescriptor. Before, matmul_auto's TMA pick at 4096^3 failed
`explain` with "_DeclaredTma is not a @triton.jit function"."""

from __future__ import annotations

import pytest

from kernels.offline_compile.compile import spec_request
from kernels.declare.registry import get_kernel
from tests.kernels.shared_compile import resources_once

TILE = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}


def test_the_descriptors_are_typed_by_their_boxes():
    req = spec_request(get_kernel("matmul_tma"), 1024, TILE, (9, 0))
    sig = req.spec["signature"]
    assert sig[:3] == ["tensordesc<fp16[128, 64]>", "tensordesc<fp16[64, 256]>",
                       "tensordesc<fp16[128, 256]>"] or sig[:3] == [
        "tensordesc<bf16[128, 64]>", "tensordesc<bf16[64, 256]>", "tensordesc<bf16[128, 256]>"]
    assert len(sig) == 6  # then M, N, K


@pytest.mark.slow
def test_the_persistent_tma_kernel_compiles_for_sm90():
    [res] = resources_once([spec_request(get_kernel("matmul_tma_persistent"), 1024, TILE, (9, 0))])
    assert not isinstance(res, Exception), res
    assert res.regs_per_thread > 64 and res.dynamic_smem_bytes > 100_000 and res.stack_bytes == 0


def test_the_compile_request_carries_the_declared_flags_at_its_warps():
    """The request `explain --kernel matmul_tma_stream_k --warps 4` makes carries the flags the
    launcher uses (matmul_problem.tma_loop: no warp specialisation below 8 warps;
    TMA stream-K declares none at any warps)."""
    from kernels.declare.matmul_problem import tma_loop

    spec = get_kernel("matmul_tma_stream_k")
    for w in (4, 8):
        f = spec_request(spec, 1024, {**TILE, "num_warps": w}, (9, 0)).spec["constexprs"]
        assert {k: f[k] for k in tma_loop("tma_stream_k", w)} == tma_loop("tma_stream_k", w)
        assert f["STREAM_K"] and f["WARP_SPECIALIZE"] is False
