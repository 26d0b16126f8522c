"""kernels/offline_compile/resources.py: a registry kernel's registers and shared memory at one launch, compiled
here for a GPU that is not here, checked against what the driver reported on the H200."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from kernels.offline_compile.compile import (CompileCancelled, CompileError, CompiledResources, ResourceCache,
                             resources_many)
from kernels.declare.kernel_file import open_kernel_file
from kernels.declare.registry import get_kernel
from kernels.offline_compile.resources import (COMPILE_BUDGET_BYTES, compile_elements, launch_arrays,
                               launch_request, launch_resources_many, occupancy_smem)
from sim.inputs.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
H200 = json.loads((ROOT / "tests" / "data" / "h200_registers.json").read_text(encoding="utf-8"))


def _example(name: str):
    [spec, _peer] = open_kernel_file(EXAMPLES / name)
    return spec


def _h200_row(kernel: str, block: dict) -> dict:
    [row] = [r for r in H200["rows"] if r["kernel"] == kernel and r["block"] == block]
    return row


# Rows whose numbers do not move between the H200's compilers (triton 3.6.0, NVVM of CUDA 13.0)
# and this machine's (triton 3.7.1, NVVM of CUDA 12.9).
CASES = [("softmax_triton.py", "softmax_kernel", {"BLOCK_SIZE": 4096, "num_warps": 4}),
         ("layernorm_triton.py", "layer_norm_fwd_kernel", {"BLOCK_SIZE": 16384, "num_warps": 4}),
         ("stencil_numba.py", "stencil_kernel", {"threads": [32, 8]})]


@pytest.mark.slow  # layer norm at BLOCK_SIZE 16384 keeps ptxas busy ~6 s
def test_compiled_here_equals_what_the_driver_reported_on_the_h200(tmp_path):
    """softmax 4096 with 4 warps: 54 registers; layer norm at BLOCK_SIZE 16384: 255 and 416 B
    of spills; the stencil: 20. Compiled for sm_90 without a GPU, side by side."""
    specs, blocks = [], []
    for file, _, block in CASES:
        spec = _example(file)
        specs.append(spec)
        blocks.append({k: tuple(v) if isinstance(v, list) else v for k, v in block.items()})
    cache = ResourceCache(tmp_path)
    requests = [launch_request(s, 4 * 4096, b, (9, 0))[0] for s, b in zip(specs, blocks)]
    compiled = resources_many(requests, cache)
    for (file, kernel, block), res in zip(CASES, compiled):
        assert isinstance(res, CompiledResources), f"{file}: {res}"
        driver = _h200_row(kernel, block)["driver"]
        assert res.regs_per_thread == driver["regs_per_thread"], file
        assert res.stack_bytes == driver.get("spills_bytes", 0), file
    assert [r.regs_per_thread for r in compiled] == [54, 255, 20]
    assert compiled[1].spills and not compiled[0].spills


def test_the_shared_memory_the_occupancy_uses_is_the_drivers():
    """The H200's driver reports no static shared memory for any Triton kernel although sm_90
    cubins carry a 1 KiB section; a Numba kernel's static arrays count."""
    tri = [r for r in H200["rows"] if r["backend"] == "triton" and r["compiled"]]
    assert tri and all(r["driver"]["static_smem_bytes"] == 0 for r in tri)
    assert any(r["compiled"]["static_smem_bytes"] == 1024 for r in tri)
    row = _h200_row("softmax_kernel", {"BLOCK_SIZE": 4096, "num_warps": 4})
    res = CompiledResources.from_dict(row["compiled"])
    assert occupancy_smem(res) == row["driver"]["dynamic_smem_bytes"] == 16
    # a Numba kernel with a 512-float32 shared array: the sm_90 cubin reads 3,072 B (2,048 and
    # the 1 KiB reserve section), the H200's driver 2,048; the occupancy adds the reserve itself
    numba = CompiledResources("k", "numba", (9, 0), 20, 3072, 0, 0, 0, None, "numba-cuda", "12.9")
    assert occupancy_smem(numba) == numba.smem_per_block_bytes == 2048
    sm80 = CompiledResources("k", "numba", (8, 0), 20, 2048, 0, 0, 0, None, "numba-cuda", "12.9")
    assert occupancy_smem(sm80) == 2048  # no reserve section before sm_90
    from sim.rules.devices import preset
    from sim.rules.occupancy import occupancy

    occ = occupancy(preset("H200"), 256, 20, occupancy_smem(numba))
    assert occ.smem_allocated_per_block_bytes == 2048 + 1024  # the reserve counted once


def test_the_builtins_arrays_claim_any_size_without_memory():
    import tracemalloc

    spec = get_kernel("add_triton")
    tracemalloc.start()
    try:
        inputs, out = launch_arrays(spec, 2**31)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [a.shape for a in (*inputs, out)] == [(2**31,)] * 3
    assert peak < 1 << 20  # numpy reports its allocations to tracemalloc: 3 x 8 GiB claimed
    request, shown = launch_request(spec, 2**31, 4096, (8, 0))
    assert shown == 2**31
    assert request.spec["signature"] == ["*fp32:16"] * 3 + ["i64:16"]  # n >= 2^31: an i64
    request, _ = launch_request(spec, 1_000_001, 4096, (8, 0))
    assert request.spec["signature"][-1] == "i32"
    numba, _ = launch_request(get_kernel("add_numba"), 2**31, 256, (8, 0))
    assert numba.spec["argtypes"] == ["float32[::1]"] * 3


def test_a_files_arrays_are_made_at_a_smaller_size_with_the_same_alignment():
    matmul = get_kernel("matmul_tiled")  # M = N = K = n: a million is 6 TB of inputs
    shown = compile_elements(matmul, 1_000_000)
    assert shown % 16 == 1_000_000 % 16 and matmul.bytes_moved(shown) <= COMPILE_BUDGET_BYTES
    assert compile_elements(matmul, 1_000_003) % 16 == 3
    softmax = _example("softmax_triton.py")
    assert compile_elements(softmax, 1_000_000) == 1_000_000  # 8 MB: made as asked


def test_a_files_failing_inputs_are_one_line_with_the_trace_in_the_log():
    spec = _example("softmax_triton.py")
    from dataclasses import replace

    def boom(n):
        raise MemoryError("no room for the rows")

    bad = replace(spec, inputs=boom)
    with pytest.raises(CompileError) as err:
        launch_request(bad, 4096, None, (8, 0))
    assert "its 'inputs' at n=4,096 raised MemoryError: no room" in str(err.value)
    assert "\n" not in str(err.value) and "boom" in err.value.log


def test_torch_kernels_have_no_registers_to_say():
    with pytest.raises(UserError, match="torch compiles its own"):
        launch_request(get_kernel("add_torch"), 1000, None, (9, 0))
    assert isinstance(launch_resources_many(get_kernel("add_triton"), 1000, [1000], (9, 0))[0],
                      CompileError)  # BLOCK_SIZE 1000: no power of two, one line


def test_cancelling_ends_the_compiler_and_caches_nothing(tmp_path):
    cache = ResourceCache(tmp_path)
    request, _ = launch_request(get_kernel("copy_triton"), 12345, 2048, (8, 6))
    start = time.monotonic()
    with pytest.raises(CompileCancelled):
        resources_many([request], cache, should_cancel=lambda: time.monotonic() - start > 0.3)
    assert time.monotonic() - start < 5  # ended, not waited for
    assert cache.get(request) is None and cache.compiled == 0


@pytest.mark.slow
def test_the_numbers_say_where_they_come_from(tmp_path):
    [res] = launch_resources_many(get_kernel("add_triton"), 1_000_000, [4096], (8, 0),
                                  cache=ResourceCache(tmp_path))
    import triton

    assert res.source == f"triton {triton.__version__} for sm_80"
    assert res.params == {"BLOCK_SIZE": 4096, "num_warps": 4} and res.elements == 1_000_000
    assert 0 < res.regs_per_thread <= 255 and np.isclose(res.smem_per_block, 0)
