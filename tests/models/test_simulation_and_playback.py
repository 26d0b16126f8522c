"""The simulation and playback models without a window: runs follow the launch and the options,
stale runs are dropped, time keeps its place, frames come from the timeline."""

from __future__ import annotations

import numpy as np
import pytest

from gui.models.launch import LaunchInputs, LaunchModel
from gui.models.playback import SPEEDS, PlaybackModel
from gui.models.simulation import SimulationModel, SimulationOptions
from tests.models.fakes import Recorder


def _models(**inputs):
    launch = LaunchModel(LaunchInputs(**inputs))
    options = SimulationOptions()
    sim = SimulationModel(launch, options)
    return launch, options, sim, PlaybackModel(sim)


def test_options_take_ids_and_old_spellings():
    options = SimulationOptions("memory-bound", "tpc")
    assert (options.cost, options.placement) == ("memory", "tpc-spread")
    assert (options.schedule, options.wait) == ("calibrated", "spin")
    changed = Recorder(options.changed)
    options.set(placement="SM order")
    options.set(cost="quantum", placement="recorded")  # unknown / trace-only: ignored
    options.set(schedule="textbook", wait="sleep")
    options.set(schedule="perfect")  # unknown: ignored
    assert changed.calls == [("memory", "sm-order"), ("memory", "sm-order")]
    assert (options.schedule, options.wait) == ("ideal", "sleep")
    assert [pid for pid, _ in options.placements()] == ["sm-order", "tpc-spread"]
    assert dict(options.costs())["memory"] == "memory-bound"
    assert [s for s, _ in options.schedules()] == ["calibrated", "ideal"]


def test_a_run_follows_the_launch_and_stale_runs_are_dropped():
    launch, options, sim, _ = _models(gpu="L40S", elements=1_000_000, threads_per_block=256)
    options.set(cost="uniform", schedule="ideal")  # the article's textbook numbers
    wanted, changed = Recorder(sim.wanted), Recorder(sim.changed)
    job = sim.job()
    run = job()
    assert run.timeline.grid_blocks == 3907 and run.timeline.tail_fraction == pytest.approx(0.2)
    launch.update(threads_per_block=512)  # while the job was running
    assert wanted.calls and not sim.accept(run) and sim.run is None
    assert sim.run_now().timeline.grid_blocks == 1954 and changed.calls[-1][0] is sim.run
    assert sim.job() is None  # current
    options.set(cost="memory")
    assert len(wanted.calls) == 2 and sim.job() is not None


def test_a_run_holds_both_schedules():
    """The calibrated schedule is the one shown; the ideal one rides along for the residency curve
    (and the other way round). An L40S has no measured profile: the label says it is assumed."""
    launch, options, sim, _ = _models(gpu="L40S", elements=1_000_000, threads_per_block=128)
    options.set(cost="uniform")  # equal blocks: what the dispatch model places
    run = sim.run_now()
    assert run.schedule == "calibrated" and run.other_schedule == "ideal"
    assert run.schedule_label == "assumed from NVIDIA H200 (not measured on this GPU)"
    assert run.other.timeline.makespan_us < run.timeline.makespan_us  # busy warps: slower
    assert run.summary()["dispatch_profile"] == run.schedule_label
    options.set(schedule="ideal")
    ideal = sim.run_now()
    assert ideal.timeline.makespan_us == run.other.timeline.makespan_us
    assert ideal.other.timeline.makespan_us == run.timeline.makespan_us
    options.set(schedule="calibrated", wait="sleep")  # waiting warps: close to the textbook
    asleep = sim.run_now()
    assert asleep.timeline.makespan_us < 1.05 * ideal.timeline.makespan_us


def test_a_launch_that_cannot_run_clears_the_run_with_its_reason():
    launch, _, sim, playback = _models(gpu="H200")
    sim.run_now()
    playback.set_playing(True)
    changed = Recorder(sim.changed)
    launch.update(regs_per_thread=300)
    assert sim.run is None and "cannot run on H200" in changed.calls[-1][1]
    assert sim.job() is None and playback.end_us == 0 and not playback.playing


def test_the_window_and_the_cli_get_the_same_tail():
    """One tail number: the model's run and `simulate --json` agree."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    launch, options, sim, _ = _models(gpu="H200", elements=1_000_000, threads_per_block=256)
    options.set(cost="memory", placement="tpc-spread")
    run = sim.run_now()
    out = subprocess.run([sys.executable, "main.py", "simulate", "--gpu", "H200", "--elements", "1e6",
                          "--block", "256", "--json"], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=True).stdout
    assert json.loads(out)["tail_fraction"] == run.summary()["tail_fraction"] > 0


def test_new_run_keeps_the_place_in_time_and_frames_add_up():
    launch, _, sim, playback = _models(gpu="T4", elements=100_000, threads_per_block=256)
    times = Recorder(playback.time_changed)
    run = sim.run_now()
    assert playback.end_us == run.makespan_us and playback.time_us == pytest.approx(0.4 * run.makespan_us)
    playback.set_time(run.makespan_us / 4)
    launch.update(threads_per_block=128)
    new = sim.run_now()
    assert playback.time_us == pytest.approx(new.makespan_us / 4) and times.calls
    f = playback.frame
    assert f.time_us == playback.time_us and f.retired + f.running + f.queued == 782
    assert f.resident.shape == (40, new.occ.blocks_per_sm)


def test_play_step_and_speed():
    _, _, sim, playback = _models(gpu="T4", elements=100_000, threads_per_block=256)
    run = sim.run_now()
    playback.set_time(0)
    playback.step(+1)  # one wave: 160 blocks (40 SMs x 4), block 160 in start order is wave 2's first
    assert playback.time_us == pytest.approx(np.sort(run.timeline.start_us)[160])
    assert playback.frame.running > 0 and playback.frame.retired + playback.frame.running > 160
    playback.step(-1)
    assert playback.time_us == 0.0
    playback.set_time(run.makespan_us)
    playback.step(+1)
    assert playback.time_us == run.makespan_us
    playback.set_playing(True)  # at the end: starts over
    assert playback.playing and playback.time_us == 0.0
    playback.advance(1.0)
    assert playback.time_us == pytest.approx(run.makespan_us / playback.base_seconds)
    playback.pick(3.0)
    assert not playback.playing and playback.time_us == 3.0
    playback.set_speed(2.0)
    for bad in (float("nan"), float("inf"), "fast"):
        playback.set_speed(bad)
    assert playback.speed == 2.0
    playback.faster(+1)
    assert playback.speed == SPEEDS[SPEEDS.index(2.0) + 1]
    playback.set_speed(1000)
    assert playback.speed == 64.0


def test_first_run_can_start_playing():
    _, _, sim, playback = _models(gpu="T4")
    playback.play_when_ready = True
    sim.run_now()
    assert playback.playing and not playback.play_when_ready


def test_huge_grid_runs_only_its_last_waves():
    _, _, sim, _ = _models(gpu="RTX 5090", elements=2**31, threads_per_block=32)
    tl = sim.run_now().timeline
    assert tl.grid_blocks == 2**31 // 32 and tl.n_blocks < tl.grid_blocks and tl.skipped_waves > 0
    assert np.all(tl.frame(0.0).resident >= -1)
