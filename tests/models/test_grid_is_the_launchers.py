"""The grid the window shows for every registry kernel is the grid its launcher launches (the
window once showed 3,907 blocks for add_numba at 1,000,000 elements; the launcher runs 977)."""

from __future__ import annotations

import kernels  # available() switches on the interpreter and the simulator before they load

kernels.available()

import pytest  # noqa: E402

from gui.models.launch import LaunchInputs, LaunchModel, block_params  # noqa: E402
from kernels.declare.registry import KERNELS  # noqa: E402
from sim.rules.devices import preset  # noqa: E402

LAUNCHABLE = [k for k in KERNELS if k.launchable]


@pytest.mark.parametrize("spec", LAUNCHABLE, ids=[k.name for k in LAUNCHABLE])
def test_the_window_shows_the_grid_the_launcher_launches(spec):
    from kernels.measure.harness import make_arrays
    from kernels.launching.launcher import bind

    gpu = preset("H200")
    model = LaunchModel(LaunchInputs(gpu=gpu.name))
    model.set_kernels(KERNELS)
    assert model.select_kernel(spec.name), spec.name
    sizes = (1, 130, 300) if spec.dims is not None else (1, 4_097, 1_000_000)  # n x n matrices
    for n in sizes:
        assert model.update(elements=n)
        state = model.state
        inputs, out = make_arrays(spec, n, on_gpu=False)
        launched = model.launched_kernel()  # matmul_auto: the candidate it chose, at its tile
        assert (launched is spec) != (spec.name == "matmul_auto"), spec.name
        launch = bind(launched, inputs, out, n, block_params(launched, state.inputs), gpu.sm_count)
        assert state.geometry.blocks == launch.grid_blocks, (spec.name, n)
        assert state.inputs.threads_per_block == launch.threads_per_block, (spec.name, n)
        assert state.elements_per_block == launch.block_size, (spec.name, n)


def test_the_fast_numba_add_is_977_blocks_at_a_million():
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels(KERNELS)
    model.select_kernel("add_numba")
    assert model.state.geometry.blocks == 977


def test_window_and_simulate_agree_for_a_kernel(capsys):
    """`simulate --kernel add_numba` and the window with add_numba selected: same grid, same
    bytes, same tail."""
    import json

    import main
    from gui.models.simulation import SimulationModel, SimulationOptions

    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels(KERNELS)
    model.select_kernel("add_numba")
    run = SimulationModel(model, SimulationOptions("memory", "tpc-spread")).run_now()
    assert main.main(["simulate", "--kernel", "add_numba", "--elements", "1e6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["blocks"] == run.timeline.grid_blocks == 977
    assert out["tail_fraction"] == round(run.timeline.tail_fraction, 4)
    assert out["makespan_us"] == round(run.prediction.makespan_us, 4)
    assert out["whole_launch_us"] == round(run.prediction.whole_launch_us, 4)
