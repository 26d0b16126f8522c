"""The waves model (Qt-free): the sawtooth predicted on every GPU, measured beside it, and a point
turned into the launch the SM view and the timeline animate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gui.models.launch import LaunchInputs, LaunchModel
from gui.models.playback import PlaybackModel
from gui.models.simulation import SimulationModel, SimulationOptions, run_simulation
from gui.models.waves import WavesModel
from kernels.declare.registry import KERNELS
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from tests.models.fakes import Recorder
from tests.tiers import every_preset

RUN = Path(__file__).resolve().parents[2] / "resources" / "measured" / "H200_matmul_sawtooth.json"


def _launch(model: WavesModel, gpu: str = "H200") -> LaunchModel:
    """A launch model that follows the waves model's points, as the window wires them."""
    launch = LaunchModel(LaunchInputs(gpu=gpu))
    launch.set_kernels(KERNELS)
    model.launch_wanted.connect(lambda request: launch.update(**request.changes()))
    return launch


def test_default_sweep_predicts_the_sawtooth_on_the_h200():
    m = WavesModel(preset("H200"))
    assert m.run_now() is not None and m.is_current()
    series = {s.kernel: s for s in m.series()}
    assert list(series) == ["matmul_tiled", "matmul_persistent", "matmul_stream_k"]
    tiled = series["matmul_tiled"]
    assert np.isnan(tiled.median).all() and np.isfinite(tiled.predicted).all()
    assert [label for _, label in m.wave_marks()] == ["132", "264", "396"]
    assert [x for x, _ in m.wave_marks()] == [4224, 8448, 12672]  # 132 tiles = 8 rows x 16.5 columns
    assert m.drops()["matmul_tiled"][1] == [4352, 8704, 12800]


@pytest.mark.parametrize("gpu", every_preset())
def test_every_preset_predicts_and_animates_a_point(gpu):
    """Without a GPU the prediction and the animation work on every preset: a point past the first
    full wave becomes a launch whose simulated timeline has its nearly empty last wave."""
    spec = preset(gpu)
    m = WavesModel(spec)
    launch = _launch(m, gpu)
    assert m.set_sweep("M=1024,K=4096,N=256..6144x256")
    m.run_now()
    preds = m.run.predictions["matmul_tiled"]
    i = next(i for i, p in enumerate(preds) if p.waves > 1 and p.tiles % p.concurrent_tiles)
    request = m.select("matmul_tiled", i)
    assert request is not None and launch.state.inputs.dims == request.dims and launch.state.ok
    run = run_simulation(launch.state, "compute", "sm-order")
    tl = run.timeline
    assert tl.n_blocks == preds[i].tiles and tl.waves == -(-preds[i].tiles // preds[i].concurrent_tiles)
    assert tl.tail_fraction > 0 and tl.frame(tl.makespan_us * 0.999).running <= preds[i].concurrent_tiles


def test_window_models_play_the_chosen_launch():
    m = WavesModel(preset("H200"))
    launch = _launch(m)
    options = SimulationOptions()
    sim = SimulationModel(launch, options)
    playback = PlaybackModel(sim)
    m.run_now()
    m.select("matmul_tiled", 16)  # N = 4352: 136 tiles
    options.set(cost="compute")
    run = sim.run_now()
    assert run is not None and run.cost == "compute" and run.timeline.n_blocks == 136
    playback.pick(run.timeline.makespan_us * 0.9)
    frame = playback.frame
    assert frame.wave == 2 and frame.running == 4 and frame.in_tail


def test_a_measured_file_replaces_the_sweep_and_is_predicted_beside():
    m = WavesModel(preset("L40S"))
    changed = Recorder(m.changed)
    m.open_file(str(RUN))
    assert m.sweep_text == "M=1024,K=8192,N=256..14080x256" and m.gpu.name == "H200"
    assert changed.calls and not m.is_current()
    m.run_now()
    tiled = {s.kernel: s for s in m.series()}["matmul_tiled"]
    assert np.isfinite(tiled.median).all() and np.isfinite(tiled.predicted).all()
    assert (tiled.p20 <= tiled.median).all() and (tiled.median <= tiled.p80).all()
    meas, pred = m.drops()["matmul_tiled"]
    assert meas == pred == [4352, 8704, 12800]
    req = m.launch_request("matmul_tiled", 0)
    assert (req.regs_per_thread, req.smem_per_block) == (220, 147456)  # the compiled kernel's
    assert req.changes()["gpu"] == "H200"  # animated on the GPU it was measured on, not the L40S
    assert "measured" in m.point_tip("matmul_tiled", 16) and "136 tiles" in m.point_tip("matmul_tiled", 16)


def test_bad_input_is_a_message_and_nothing_changes():
    m = WavesModel(preset("H200"))
    said = Recorder(m.message)
    before = m.dims_list
    assert not m.set_sweep("M=1024,N=zero,K=1")
    assert m.dims_list == before and "Sweep not changed" in said.calls[-1][0]
    with pytest.raises(UserError):
        m.open_file(str(Path(__file__)))  # not a results file
    assert m.select("cuBLAS", 0) is None and m.select("matmul_tiled", 10**6) is None


def test_a_stale_prediction_is_dropped():
    m = WavesModel(preset("H200"))
    job = m.job()
    m.set_sweep("M=1024,K=8192,N=256..1024x256")
    assert not m.accept(job()) and not m.is_current()
    assert m.accept(m.job()()) and len(m.series()[0].x) == 4


def test_a_matmul_launch_keeps_its_matrix_until_a_size_is_typed():
    inputs = LaunchInputs(gpu="H200", kernel="matmul_tiled", dims="M=896,N=4864,K=8192",
                          threads_per_block=256, regs_per_thread=220, smem_per_block=147456,
                          block_size=128)
    launch = LaunchModel(LaunchInputs.from_dict(inputs.to_dict()))  # as saved and restored
    assert launch.state.ok  # before the kernels load: a custom launch, the matrix waits
    launch.set_kernels(KERNELS)
    assert launch.state.inputs.kernel == "matmul_tiled" and launch.state.blocks == 133
    launch.update(elements=4096)  # a typed size replaces the matrix: 4096^2 in 128 x 256 tiles
    assert launch.state.inputs.dims == "" and launch.state.blocks == 32 * 16


def test_the_live_measurement_can_be_sent_to_the_kernel_host():
    """The host runs jobs it unpickles by import path: the waves job must survive the trip."""
    import pickle
    from functools import partial

    from gui.models.waves import measure_job

    job = pickle.loads(pickle.dumps(partial(measure_job, [dict(M=64, N=64, K=64)])))
    assert job.func is measure_job and job.args[0] == [dict(M=64, N=64, K=64)]
