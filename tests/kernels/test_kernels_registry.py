"""The registry table: complete, consistent, and readable without GPU libraries."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from kernels.declare.registry import KERNELS, get_kernel, kernel_names, parse_kernel_list
from sim.inputs.errors import UserError


def test_names_unique_and_fields_valid():
    names = [k.name for k in KERNELS]
    assert len(names) == len(set(names))
    for k in KERNELS:
        assert k.backend in ("numba", "triton", "torch")
        assert k.block_param in ("threads", "BLOCK_SIZE", "BLOCK_M", None)
        assert k.kind in ("kernel", "lanes", "trace")
        if k.benchable:
            assert callable(k.reference)
            assert k.bytes_moved(1000) >= 2 * 4 * 1000 or k.group == "matmul"
            assert k.arity in (1, 2) or callable(k.inputs)
        if k.launchable:
            assert k.block_problem() is None, k.name  # its own defaults suit it


def test_issue_minimum_is_there():
    by = {(k.group, k.backend) for k in KERNELS}
    for need in [("add", "numba"), ("add", "triton"), ("add", "torch"), ("add_relu", "torch"),
                 ("add_relu", "triton"), ("add_relu", "numba"), ("copy", "torch"),
                 ("square", "numba"), ("lanes", "numba"), ("trace", "triton")]:
        assert need in by, need
    assert get_kernel("add_numba_naive").teaching
    assert not get_kernel("add_numba").teaching and not get_kernel("add_triton").teaching


def test_add_relu_trips_and_kernel_counts():
    eager, compiled = get_kernel("add_relu_torch_eager"), get_kernel("add_relu_torch_compile")
    # read a, read b, write tmp, read tmp, write c
    assert (eager.bytes_moved(1_000_000), eager.kernels_per_call) == (20_000_000, 2)
    assert (compiled.bytes_moved(1_000_000), compiled.kernels_per_call) == (12_000_000, 1)
    assert get_kernel("add_relu_triton").bytes_moved(10) == get_kernel("add_relu_numba").bytes_moved(10) == 120
    assert get_kernel("copy_torch").bytes_moved(1 << 20) == 2 * 4 * 2**20


def test_every_kernel_resolves():
    from kernels.declare.spec import resolve

    for k in KERNELS:
        assert callable(resolve(k.kernel)) or hasattr(resolve(k.kernel), "run"), k.name


# The grid each built-in launches, worked out by hand from its source (not from its declaration):
# the naive kernels one element per thread, the fast Numba kernels 4 per thread, Triton BLOCK_SIZE
# per program, the grid-stride add 8 blocks per SM.
HAND_GRIDS = [
    ("add_numba_naive", 1_000_000, None, 4, 3907),
    ("add_numba", 1_000_000, None, 4, 977),  # the issue's example: 977, not 3,907
    ("add_numba", 1_000_000, 128, 4, 1954),
    ("add_relu_numba", 1_000_000, None, 4, 977),
    ("add_numba_gridstride", 1_000_000, None, 132, 1056),
    ("add_numba_gridstride", 1000, None, 132, 4),
    ("square_numba", 1025, 256, 4, 5),
    ("add_triton", 1_000_000, None, 4, 977),
    ("add_triton", 1_000_000, 4096, 4, 245),
    ("add_triton_tutorial", 1, None, 4, 1),
    ("copy_triton", 2**20, 1024, 4, 1024),
]


@pytest.mark.parametrize("name,n,block,sms,blocks", HAND_GRIDS)
def test_grid_rules_match_the_kernels(name, n, block, sms, blocks):
    shape = get_kernel(name).launch_shape(n, block, sm_count=sms)
    assert shape.grid_blocks == blocks


def test_block_rules_live_in_the_spec():
    triton, numba = get_kernel("add_triton"), get_kernel("add_numba_naive")
    assert triton.block_problem(96) and "power of two" in triton.block_problem(96)
    assert triton.block_problem({"BLOCK_SIZE": 1024, "num_warps": 3})
    assert triton.block_problem(2048) is None
    assert numba.block_problem(96) is None and numba.block_problem(1025)
    assert get_kernel("add_triton").launch_shape(4096, {"num_warps": 8}).threads_per_block == 256
    with pytest.raises(UserError, match="grid depends on the GPU"):
        get_kernel("add_numba_gridstride").launch_shape(1000)
    with pytest.raises(UserError, match="torch chooses"):
        get_kernel("add_torch").launch_shape(1000)


def test_references_are_float64_and_right():
    x = np.array([-2.0, -0.5, 0.25, 3.0], dtype=np.float32)
    y = np.array([1.0, 0.25, 0.5, -4.0], dtype=np.float32)
    assert get_kernel("add_torch").reference(x, y).dtype == np.float64
    assert get_kernel("add_relu_triton").reference(x, y).tolist() == [0.0, 0.0, 0.75, 0.0]
    assert get_kernel("square_numba").reference(x).tolist() == [4.0, 0.25, 0.0625, 9.0]


def test_lookup_and_lists():
    with pytest.raises(UserError, match="unknown kernel"):
        get_kernel("nope")
    assert [k.name for k in parse_kernel_list("add_relu")] == [
        "add_relu_torch_eager", "add_relu_torch_compile", "add_relu_triton", "add_relu_numba"]
    assert [k.name for k in parse_kernel_list("add_triton, add_torch,add_triton")] == [
        "add_triton", "add_torch"]
    assert "trace_triton" not in kernel_names(benchable_only=True)
    assert len(parse_kernel_list("all")) == len(kernel_names(benchable_only=True))
    with pytest.raises(UserError):
        parse_kernel_list(" , ")


def test_import_is_cheap():
    """kernels, its registry and its CLI load no GPU library and no Qt (docs/ARCHITECTURE.md)."""
    code = ("import sys, kernels, kernels.cli, kernels.declare.registry, kernels.measure.timing, kernels.measure.results;"
            "heavy = [m for m in ('torch', 'triton', 'numba', 'PySide6') if m in sys.modules];"
            "print(','.join(heavy))")
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)
    assert out.stdout.strip() == ""
