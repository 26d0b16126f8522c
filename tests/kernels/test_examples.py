"""The example kernel files in resources/examples: each loads, compiles for every GPU preset's
compute capability with nonzero registers, and is right against its float64 reference when run
the way docs/KERNEL_FILES.md says a declaration is run (in the interpreter/simulator here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.compile import (CompiledResources, ResourceCache, numba_argtypes_from_args,
                             numba_request, resources_many, signature_from_args, triton_request)
from kernels.kernel_file import launch_arguments, launch_grid, load_kernel_file
from kernels_env import AVAILABLE
from sim.devices import preset, presets

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
FILES = ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py")
CCS = sorted({preset(name).compute_capability for name in presets()})


def _compile_request(decl: dict, cc):
    _, _, _, args = launch_arguments(decl, 4 * 4096)
    block = dict(decl["block"])
    if decl["backend"] == "triton":
        num_warps = block.pop("num_warps", 4)
        num_stages = block.pop("num_stages", 3)
        return triton_request(decl["kernel"], signature_from_args(args),
                              block | decl.get("constants", {}), num_warps, num_stages, cc)
    return numba_request(decl["kernel"], numba_argtypes_from_args(args), cc)


@pytest.fixture(scope="module")
def declarations():
    return {f: load_kernel_file(EXAMPLES / f) for f in FILES}


def test_each_example_declares_one_kernel_with_everything(declarations):
    for file, decls in declarations.items():
        [decl] = decls
        assert decl["backend"] == file.split("_")[-1].removesuffix(".py"), file
        for key in ("inputs", "args", "grid", "block", "bytes", "reference", "rtol", "peer"):
            assert key in decl, f"{file} lacks {key}"


def test_every_example_compiles_for_every_preset(declarations, tmp_path):
    """Distinct compute capabilities only (12 presets share 8); one batch, so one compiler
    process per backend."""
    requests = [(file, cc, _compile_request(decls[0], cc))
                for file, decls in declarations.items() for cc in CCS]
    results = resources_many([r for _, _, r in requests], ResourceCache(tmp_path))
    for (file, cc, _), res in zip(requests, results):
        assert isinstance(res, CompiledResources), f"{file} for {cc}: {res}"
        assert res.compute_capability == cc
        assert 0 < res.regs_per_thread <= 255, f"{file} for {cc}"
        assert not res.spills, f"{file} spills for {cc}"


@pytest.mark.parametrize("file", FILES)
def test_example_is_right_against_its_reference(declarations, file):
    [decl] = declarations[file]
    backend = decl["backend"]
    if not AVAILABLE[backend].ok:
        pytest.skip(AVAILABLE[backend].reason)
    for n in decl["check_sizes"][:2]:
        dims, inputs, out, args = launch_arguments(decl, n)
        block = dict(decl["block"])
        grid = launch_grid(decl, dims, block)
        if backend == "triton":
            import torch

            tensors = {id(a): torch.from_numpy(a) for a in (*inputs, out)}
            launch_args = [tensors.get(id(a), a) for a in args]
            num_warps = block.pop("num_warps")
            decl["kernel"][grid](*launch_args, **block, num_warps=num_warps)
            out = tensors[id(out)].numpy()
        else:
            decl["kernel"][grid, block["threads"]](*args)
        want = decl["reference"](*inputs)
        np.testing.assert_allclose(out, want, rtol=decl["rtol"], atol=decl.get("atol", 1e-6),
                                   err_msg=f"{file} at n={n}")


@pytest.mark.parametrize("file", FILES)
def test_peer_agrees_with_the_reference(declarations, file):
    torch = pytest.importorskip("torch")
    [decl] = declarations[file]
    _, inputs, _, _ = launch_arguments(decl, decl["check_sizes"][-1])
    got = decl["peer"](torch, *[torch.from_numpy(a) for a in inputs]).numpy()
    np.testing.assert_allclose(got, decl["reference"](*inputs), rtol=decl["rtol"],
                               atol=decl.get("atol", 1e-6))
