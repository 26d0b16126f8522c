"""The example kernel files in resources/examples: each loads, becomes a KernelSpec, compiles for
every GPU preset's compute capability with nonzero registers, and is right against its float64
reference when launched by WarpScope's launcher (in the interpreter/simulator here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.measure import harness
from kernels.offline_compile.compile import CompiledResources, spec_request
from kernels.declare.kernel_file import load_kernel_file
from kernels.declare.spec import declare
from kernels_env import AVAILABLE
from shared_compile import resources_once
from sim.rules.devices import preset, presets

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
FILES = ("softmax_triton.py", "layernorm_triton.py", "stencil_numba.py")
CCS = sorted({preset(name).compute_capability for name in presets()})


@pytest.fixture(scope="module")
def specs():
    out = {}
    for file in FILES:
        [decl] = load_kernel_file(EXAMPLES / file)
        for key in ("inputs", "args", "grid", "block", "bytes", "reference", "rtol", "peer"):
            assert key in decl, f"{file} lacks {key}"
        out[file] = declare(decl, origin=str(EXAMPLES / file))
    return out


def test_each_example_is_a_kernel_of_its_backend(specs):
    for file, spec in specs.items():
        assert spec.backend == file.removesuffix(".py").split("_")[-1], file
        assert spec.launchable and spec.sweep in spec.block
        shape = spec.launch_shape(spec.check_sizes[-1])
        assert shape.grid_blocks >= 1


@pytest.mark.slow
def test_every_example_compiles_for_every_preset(specs):
    """Distinct compute capabilities only (12 presets share 8); one batch, so one compiler
    process per backend. The same requests as test_kernel_file_cli.py's (its size has the same
    remainder mod 16): the run compiles them once."""
    requests = [(file, cc, spec_request(spec, spec.check_sizes[-1], None, cc))
                for file, spec in specs.items() for cc in CCS]
    results = resources_once([r for _, _, r in requests])  # the run's cache: shared
    for (file, cc, _), res in zip(requests, results):
        assert isinstance(res, CompiledResources), f"{file} for {cc}: {res}"
        assert res.compute_capability == cc
        assert 0 < res.regs_per_thread <= 255, f"{file} for {cc}"
        assert not res.spills, f"{file} spills for {cc}"


@pytest.mark.parametrize("file", FILES)
def test_example_is_right_against_its_reference(specs, file):
    spec = specs[file]
    if not AVAILABLE[spec.backend].ok:
        pytest.skip(AVAILABLE[spec.backend].reason)
    for n in spec.check_sizes[:2]:
        inputs, out = harness.make_arrays(spec, n, on_gpu=False, seed=n)
        launch = harness.bind(spec, inputs, out, n)
        launch.run()
        got = out.numpy() if hasattr(out, "numpy") else out
        np.testing.assert_allclose(got, harness.reference_of(spec, inputs), rtol=spec.rtol,
                                   atol=spec.atol, err_msg=f"{file} at n={n}")


@pytest.mark.parametrize("file", FILES)
def test_peer_agrees_with_the_reference(specs, file):
    torch = pytest.importorskip("torch")
    spec = specs[file]
    inputs, _ = harness.make_arrays(spec, spec.check_sizes[-1], on_gpu=False, seed=1)
    got = spec.peer(torch, *inputs).numpy()
    np.testing.assert_allclose(got, harness.reference_of(spec, inputs), rtol=spec.rtol,
                               atol=spec.atol)
