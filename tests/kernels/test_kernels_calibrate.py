"""`main.py calibrate` without a GPU: the recorder is replaced by traces recorded on the H200, so
the fit and the write path (profile into the user's config folder, found by every front end) run
for real."""

import datetime
from pathlib import Path

import pytest
from kernels_env import HAS_GPU

from kernels.measure import calibrate as cal
from kernels import cli
from sim.rules.devices import preset
from sim.schedule.dispatch_profile import load_profile, profile_for
from sim.inputs.errors import UserError
from sim.traces.trace_bundle import load_bundle

DATA = Path(__file__).parents[1] / "data" / "h200_spin_fit"
FAMILY = tuple(("spin", w, us, waves) for w in (4, 16) for us in (20.0, 100.0)
               for waves in (1.0, 2.2)) + (("sleep", 4, 20.0, 3.3), ("spin", 4, 7.0, 1.0))


class FakeRecorder:
    """kernels.tracing.trace.record_trace's signature; answers from the recorded bundle."""

    def __init__(self):
        self.traces, self.calls = load_bundle(DATA), []

    def __call__(self, grid, num_warps, spin_us, command, *, wait, waves):
        self.calls.append((wait, num_warps, spin_us, waves, command))
        name = f"{'A' if wait == 'spin' else 'B'}-{wait}-w{num_warps}-{spin_us:g}us-{waves:g}w"
        if name not in self.traces:
            raise RuntimeError(f"the device hiccuped on {name}")  # one failure: noted, skipped
        return self.traces[name]


SHARE_FAMILY = (("add", 2**25, 1024, 4), ("add", 2**24, 512, 4))


class FakeTileRecorder:
    """kernels.tracing.trace.record_tile_trace's signature; answers with the H200's recorded adds
    (tests/data/h200_memory_kernels_fit) of the same launch, or `only` for every one."""

    def __init__(self, only=None):
        self.traces, self.only, self.calls = load_bundle(DATA.parent / "h200_memory_kernels_fit"), only, []

    def __call__(self, kernel, elements, block_size, num_warps, command):
        self.calls.append(command)
        return self.traces[self.only or f"{kernel}_n{elements.bit_length() - 1}_b{block_size}"]


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return tmp_path / "cfg" / "warpscope" / "dispatch"


@pytest.mark.slow
def test_calibrate_records_fits_and_writes_the_users_profile(config, tmp_path):
    record = FakeRecorder()
    said = []
    result = cal.calibrate(probes={}, held_out=(), record=record, gpu=preset("H200"), family=FAMILY, fit_s=1.0,
                           keep=str(tmp_path / "kept"), command="warpscope calibrate",
                           say=said.append, record_tile=FakeTileRecorder(), share_family=SHARE_FAMILY)
    assert result.path == str(config / "H200.json")
    assert [c[:4] for c in record.calls] == list(FAMILY)
    assert "--wait spin --warps 4 --spin-us 20 --waves 1" in record.calls[0][4]
    assert result.failed == [("spin-w4-7us-1w", "RuntimeError: the device hiccuped on A-spin-w4-7us-1w")]
    today = datetime.date.today().isoformat()
    profile = profile_for("NVIDIA H200")  # what the app and every command now use
    assert profile == load_profile(result.path) == result.profile
    assert profile.label == f"calibrated on H200, {today}"
    assert "warpscope calibrate: 9 traces recorded on H200" in profile.source
    assert len(result.scores) == 9 and any("fitting on 9 traces" in s for s in said)
    assert sorted(load_bundle(tmp_path / "kept")) == sorted(result.traces)


def test_too_few_traces_is_one_line(config):
    with pytest.raises(UserError, match="too few to fit"):
        cal.calibrate(probes={}, held_out=(), record=FakeRecorder(), gpu=preset("H200"), family=FAMILY[:3], fit_s=1.0,
                      say=lambda _m: None)
    assert not (config / "H200.json").exists()


def test_the_command_checks_its_arguments_before_the_gpu(tmp_path):
    parser = cli.argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command", required=True))
    for argv, words in ((["calibrate", "--out", str(tmp_path / "p.txt")], "must end in .json"),
                        (["calibrate", "--out", "/proc/nope/p.json"], "cannot write")):
        args = parser.parse_args(argv)
        with pytest.raises(UserError, match=words):
            args.handler(args)
    with pytest.raises(SystemExit):  # refused by the parser, before anything runs
        parser.parse_args(["calibrate", "--fit-seconds", "0"])


@pytest.mark.skipif(HAS_GPU, reason="on a GPU this would calibrate it")
def test_without_a_gpu_it_says_so(config):
    parser = cli.argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["calibrate"])
    with pytest.raises(UserError, match="needs a GPU"):
        args.handler(args)


@pytest.mark.slow
def test_calibrate_reads_which_sms_move_bytes_faster_and_the_model_takes_them(config):
    from sim.model.memory_cost import TripCost
    from sim.model.launch_model import Launch
    from sim.schedule.dispatch_profile import dram_share_for

    tiles = FakeTileRecorder()
    result = cal.calibrate(probes={}, held_out=(), record=FakeRecorder(), gpu=preset("H200"), family=FAMILY, fit_s=1.0,
                           say=lambda _m: None, record_tile=tiles, share_family=SHARE_FAMILY)
    assert "--kernel add --elements 2^25 --block 1024 --warps 4" in tiles.calls[0]
    fit_24 = [*range(32, 44), *range(78, 88), 126, 127]
    assert sorted(result.dram_share.faster_sms) == fit_24 and "24 faster SMs" in result.share_note
    assert result.dram_share.share == pytest.approx(1.439, abs=0.01)  # measured, not the preset's 1.5
    mine = dram_share_for(preset("H200"))  # what every prediction now reads
    assert mine == result.dram_share and mine.command == "warpscope calibrate"
    assert mine.date == datetime.date.today().isoformat() and mine.provenance == "measured"
    launch = Launch(16384, 128, 16, 12.0 * 2**24, 2**24)
    w = TripCost.for_gpu(preset("H200"), launch).sm_weights
    assert max(w) / min(w) == pytest.approx(mine.share)


@pytest.mark.slow
def test_share_traces_that_show_no_faster_sms_leave_the_preset_s(config):
    from sim.rules.physics import physics_for
    from sim.schedule.dispatch_profile import dram_share_for

    result = cal.calibrate(probes={}, held_out=(), record=FakeRecorder(), gpu=preset("H200"), family=FAMILY, fit_s=1.0,
                           say=lambda _m: None, record_tile=FakeTileRecorder("add_n24_b256"),
                           share_family=SHARE_FAMILY)
    assert result.dram_share is None and "no faster SMs" in result.share_note
    assert "dram_share" not in (config / "H200.json").read_text()
    assert dram_share_for(preset("H200")) == physics_for("H200").dram_share


@pytest.mark.slow
def test_a_damaged_share_in_the_users_file_is_one_line_and_the_preset_s_is_used(config, capsys):
    import json

    from sim.rules.physics import physics_for
    from sim.schedule.dispatch_profile import dram_share_for

    cal.calibrate(probes={}, held_out=(), record=FakeRecorder(), gpu=preset("H200"), family=FAMILY, fit_s=1.0,
                  say=lambda _m: None, record_tile=FakeTileRecorder(), share_family=SHARE_FAMILY)
    path = config / "H200.json"
    doc = json.loads(path.read_text())
    doc["dram_share"]["share"] = -1
    path.write_text(json.dumps(doc))
    assert dram_share_for(preset("H200")) == physics_for("H200").dram_share
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ignored" in err and "share" in err


def test_calibrate_measures_the_models_constants_and_checks_launches_it_never_fitted(config):
    """The probes' numbers join the user's file and win over the preset's; the held-out check
    predicts each launch with them, beside what was measured."""
    from types import SimpleNamespace

    from sim.rules.physics import physics_for

    h200 = preset("H200")
    stored = physics_for(h200).value("dram_latency_ns")
    probes = {"dram_latency_ns": lambda gpu: 400.0, "copy_fraction": lambda gpu: 0.5,
              "l2_gbps": lambda gpu: 1e9}  # implausible: the stored figure stays

    def measured(kernel, elements, block, warps):
        return SimpleNamespace(grid_blocks=elements // block, threads_per_block=32 * warps,
                               regs_per_thread=32, smem_per_block_bytes=0,
                               bytes_moved=12 * elements, median_ms=0.1)

    result = cal.calibrate(probes=probes, held_out=(("add_triton", 2**24, 1024, 4),),
                           check_measure=measured, record=FakeRecorder(), gpu=h200, family=FAMILY,
                           fit_s=1.0, say=lambda _m: None, record_tile=FakeTileRecorder(),
                           share_family=SHARE_FAMILY)
    today = datetime.date.today().isoformat()
    mine = physics_for(h200)
    assert mine.value("dram_latency_ns") == 400.0 != stored
    assert mine.constant("copy_fraction").label == f"calibrated on H200, {today}"
    assert not mine.constant("l2_gbps").source.startswith("calibrated")
    assert [n for n, _ in result.failed if n == "l2_gbps"] == ["l2_gbps"]
    ((label, predicted, measured_us),) = result.check
    assert label == "add_triton 2^24 block 1024 w4" and measured_us == pytest.approx(100.0)
    # at half the copy bandwidth, 200 MB take at least 200e6 / (0.5 * 4,813 GB/s) us
    assert predicted >= 12 * 2**24 / (0.5 * h200.peak_dram_gbps * 1e3)
