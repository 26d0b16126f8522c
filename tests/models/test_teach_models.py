"""The teaching panels' models, without Qt: verdicts and the latency model for the launch, the
second GPU, the timing toggles."""

import pytest

from gui.models.compare_gpus import CompareGpusModel
from gui.models.insight import InsightModel
from gui.models.launch import LaunchInputs, LaunchModel
from gui.models.timing import HONEST, TimingModel
from sim.traces.latency_data import load_latency_run
from sim.inputs.units import fmt_us


def insight(gpu="H200", elements=2**26, threads=256, regs=0):
    launch = LaunchModel(LaunchInputs(gpu=gpu, elements=elements, threads_per_block=threads,
                                      regs_per_thread=regs))
    return launch, InsightModel(launch)


def test_the_h200_uses_its_measured_copy_fraction_and_shows_its_sweep():
    """The ceiling is the H200's achievable bandwidth from resources/physics (the one `explain`
    and `simulate` use); the checked-in latency run's sweep is laid beside the model."""
    _, ins = insight("H200")
    gbps, where = ins.ceiling
    assert gbps == pytest.approx(4813 * 0.8684) and "measured 2026-11-29" in where
    kinds = [c.kind for c in ins.curves()]
    assert kinds.count("measured") == 2 and "loaded" in kinds and "little" in kinds
    assert [f.key for f in ins.findings] == ["bytes-in-flight"]


def test_other_gpus_take_their_copy_fraction_and_show_no_measurements():
    from sim.rules.physics import physics_for

    _, ins = insight("T4", 2**24, 256, regs=72)
    fraction = physics_for(ins.gpu).constant("copy_fraction")
    assert ins.ceiling[0] == pytest.approx(320.0 * fraction.value)
    assert fraction.short_label in ins.ceiling[1]
    assert "measured" not in [c.kind for c in ins.curves()]
    assert "registers" in [f.key for f in ins.findings]


def test_verdicts_follow_the_launch():
    launch, ins = insight("B200", 40 * 256)
    seen = []
    ins.changed.connect(lambda: seen.append(1))
    assert "below-one-wave" in [f.key for f in ins.findings]
    assert ins.blocks_on_sm(39) == 1 and ins.blocks_on_sm(40) == 0 and ins.activity() is not None
    ins.set_sm(100)
    assert ins.activity() is None  # the grid leaves SM 100 empty
    launch.update(elements=2**26)
    assert seen and "below-one-wave" not in [f.key for f in ins.findings]


def test_time_lines_name_the_whole_launch():
    from gui.models.simulation import run_simulation
    from sim.rules.physics import physics_for

    launch, ins = insight("H200", 2**31)
    p = ins.launch_prediction
    assert ins.time_lines()[0].startswith(f"Whole launch, predicted: {fmt_us(p.whole_launch_us)} at "
                                          f"{p.bandwidth_gbps:,.0f} GB/s = launch overhead "
                                          f"{fmt_us(p.launch_overhead_us)}")
    assert p.launch_overhead_us == physics_for("H200").value("launch_overhead_us")
    assert p.bandwidth_gbps * p.whole_launch_us * 1e3 == pytest.approx(2**31 * 12)
    run = run_simulation(launch.state, "memory", "sm-order", other=False)
    assert ins.time_lines(run)[1] == ins.confidence.label  # what the prediction rests on
    line = ins.time_lines(run)[2]
    tl = run.timeline
    # the H200's faster SMs ran more blocks in their slots: the grid's waves are told
    assert f"takes {fmt_us(p.whole_launch_us)} over {tl.waves_fractional:,.1f} waves;" in line
    assert tl.waves_told == f"{tl.waves_fractional:,.1f} waves"
    assert f"the {tl.skipped_waves:,} identical ones before them are not" in line


def test_second_gpu_same_inputs_same_ceiling_rule():
    launch, ins = insight("H200")
    cmp = CompareGpusModel(launch, ins, other="T4")
    here, there = cmp.sides
    assert (here.gpu.name, there.gpu.name) == ("H200", "T4")
    assert here.prediction.ceiling_gbps == ins.ceiling[0]  # one rule for both panels
    assert here.time_us == pytest.approx(ins.launch_prediction.whole_launch_us)
    assert {d.key for d in cmp.differences} >= {"occupancy", "waves", "time"}
    assert cmp.set_other("B200") and cmp.sides[1].gpu.name == "B200"
    assert not cmp.set_other("no such GPU") and cmp.other == "B200"
    launch.update(threads_per_block=1024)
    assert cmp.sides[1].occ.threads_per_block == 1024


def test_timing_toggles_lay_each_trap_beside_the_honest_timing():
    run = load_latency_run()
    t = TimingModel()
    t.set_records(run.methods, run.source())
    assert t.kernels() == ["add_triton", "add_torch", "add_numba_naive"]
    assert [s.method for s in t.series()] == [HONEST]
    t.set_toggle("clock", True)
    honest, trap = t.series()
    assert trap.method == "host_launch_returned" and "returns before the GPU" in trap.measures
    # the trap: at 2^26 the launch returns long before the work is done
    assert trap.gbps[-1] > 4 * honest.gbps[-1]
    assert honest.gbps_p20[-1] <= honest.gbps[-1] <= honest.gbps_p80[-1]
    t.set_toggle("launches", True)
    assert [s.method for s in t.series()][-2:] == ["events_lone_launch", "events_back_to_back"]
    header, rows = t.export_rows()
    assert header[:2] == ["kernel", "method"] and len(rows) == 4 * 4


def test_the_live_timing_job_can_go_to_the_kernel_host():
    """The window's HostRunner sends jobs by pickle: module-level function plus plain args."""
    import pickle

    from gui.models.timing import timing_task

    job = pickle.loads(pickle.dumps(timing_task()))
    assert job.args == (("add_triton", "add_torch", "add_numba_naive"), (2**16, 2**20, 2**24, 2**26))
