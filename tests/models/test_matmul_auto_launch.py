"""matmul_auto in the window is the launch of the candidate it chose (gui/models/matmul_auto.py),
as `explain` resolves it: that candidate's tile, threads and compiled resources, a compute-bound
work list, and a new candidate when the sizes change. Before, the window kept matmul_auto's own
declaration: no tile, registers unset, 8 blocks per SM and a memory-bound 25 us timeline for a
4096^3 product that takes ~190 us."""

from __future__ import annotations

from gui.models.launch import LaunchInputs, LaunchModel
from kernels.declare.registry import KERNELS, matmul_choice
from sim.rules.devices import preset


def test_the_window_launches_matmul_autos_pick():
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels(KERNELS)
    assert model.select_kernel("matmul_auto")
    for dims in ("M=4096,N=4096,K=4096", "M=1024,N=4352,K=8192"):
        assert model.update(dims=dims)
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in dims.split(","))}
        chosen = matmul_choice(sizes, preset("H200")).chosen
        st = model.state
        assert model.launched_kernel().name != "matmul_auto" and st.inputs.kernel == "matmul_auto"
        assert st.inputs.threads_per_block == 32 * chosen.params["num_warps"]
        assert st.geometry.blocks == chosen.programs and st.work is not None
        target = model.target
        assert target is not None and target.kernel == model.launched_kernel().name
        assert dict(target.params)["BLOCK_N"] == chosen.params["BLOCK_N"]


def test_a_tma_kernel_before_hopper_is_refused_in_one_line():
    """Picking matmul_tma on a T4 (or switching to a T4 with it picked) is refused with the line
    `explain` gives; before, the window showed its occupancy and no whole-launch time."""
    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels(KERNELS)
    said = []
    model.rejected.connect(said.append)
    assert model.select_kernel("matmul_tma")
    assert not model.update(gpu="T4") and model.state.spec.name == "H200"
    assert said == ["matmul_tma cannot run on T4: T4 has compute capability 7.5 (no TMA unit); "
                    "matmul_tma needs 9.0 or later"]


def test_the_windows_verdicts_give_a_matmul_no_bytes_in_flight_advice():
    """The window's findings take the mode its prediction takes (sim.model.launch_model.
    default_mode of the launch's work), as explain does: a matmul's time is its FLOPs."""
    from gui.models.insight import InsightModel

    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels(KERNELS)
    assert model.select_kernel("matmul_tiled") and model.update(dims="M=1024,N=4352,K=8192")
    insight = InsightModel(model, measured=None)
    assert insight.launch_prediction.mode == "compute"
    assert "bytes-in-flight" not in {f.key for f in insight.findings}
