"""The registry table: complete, consistent, and readable without GPU libraries."""

import importlib
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from kernels.registry import KERNELS, get_kernel, kernel_names, parse_kernel_list
from sim.errors import UserError


def test_names_unique_and_fields_valid():
    names = [k.name for k in KERNELS]
    assert len(names) == len(set(names))
    for k in KERNELS:
        assert k.backend in ("numba", "triton", "torch")
        assert k.block_param in ("threads", "BLOCK_SIZE", None)
        assert k.kind in ("elementwise", "lanes", "trace")
        assert isinstance(k.default_block, int) and k.default_block > 0
        if k.benchable:
            assert callable(k.reference) and k.arity in (1, 2) and k.trips >= 2


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
    assert (eager.trips, eager.kernels_per_call) == (5, 2)
    assert (compiled.trips, compiled.kernels_per_call) == (3, 1)
    assert get_kernel("add_relu_triton").trips == get_kernel("add_relu_numba").trips == 3
    assert eager.bytes_moved(1_000_000) == 20_000_000
    assert get_kernel("copy_torch").bytes_moved(1 << 20, 2) == 4 * 2**20


def test_every_launcher_resolves():
    for k in KERNELS:
        module, function = k.launcher.split(":")
        assert callable(getattr(importlib.import_module(module), function)), k.launcher


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
    code = ("import sys, kernels, kernels.cli, kernels.registry, kernels.timing, kernels.results;"
            "heavy = [m for m in ('torch', 'triton', 'numba', 'PySide6') if m in sys.modules];"
            "print(','.join(heavy))")
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)
    assert out.stdout.strip() == ""
