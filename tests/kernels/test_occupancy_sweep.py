"""`bench --occupancy-sweep` without a GPU: the launches run in numba-cuda's simulator, every
result is checked, the padding forces the blocks per SM asked for, the file loads as any bench
file, nothing claims to be a GPU timing, and bad values are one line before any work."""

import argparse

import pytest
from kernels_env import HAS_GPU

from kernels import cli
from kernels.measure.occupancy_sweep import occupancy_sweep
from kernels.measure.results import load_results, save_results
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy

pytestmark = pytest.mark.skipif(HAS_GPU, reason="the CPU path")


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_the_simulator_sweep_is_checked_forced_and_labelled(tmp_path):
    result = occupancy_sweep(("scale", "add"), (32, 64), (1, 2), dtype="fp32", elements=96,
                             allow_cpu=True)
    # per kernel and block size: unpadded, then 1 and 2 blocks per SM
    assert [(m.kernel, m.block_size, m.blocks_per_sm) for m in result.measurements] == [
        (f"occupancy_{k}_fp32", b, n) for k in ("scale", "add") for b in (32, 64)
        for n in (32, 1, 2)]
    h200 = preset("H200")
    for m in result.measurements:
        assert not m.is_gpu_timing and "NOT a GPU timing" in m.method
        pad = m.dynamic_smem_bytes or 0
        assert occupancy(h200, m.block_size, 0, pad).blocks_per_sm == m.blocks_per_sm
        assert (pad > 0) == (m.blocks_per_sm != 32)
        assert m.bytes_moved == (3 if "add" in m.kernel else 2) * 4 * 96
    path = tmp_path / "occ.json"
    save_results(result, path)
    assert load_results(path).measurements == result.measurements


def test_without_a_gpu_or_cpu_flag_it_says_so_in_one_line(tmp_path):
    args = _parse("bench", "--occupancy-sweep", "--out", str(tmp_path / "o.json"))
    with pytest.raises(UserError, match="needs a GPU.*--cpu") as err:
        args.handler(args)
    assert "\n" not in str(err.value) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv,message", [
    (["--occupancy-sweep", "--kernel", "mul"], "kernels are add, copy, scale"),
    (["--occupancy-sweep", "--dtype", "fp16"], "--dtype must be fp64 or fp32"),
    (["--occupancy-sweep", "--sizes", "2^20,2^22"], "takes one size"),
    (["--occupancy-sweep", "--block", "2048"], "1..1024"),
    (["--occupancy-sweep", "--blocks-per-sm", "0"], "--blocks-per-sm must be"),
    (["--occupancy-sweep", "--waves-sweep", "M=1,K=1,N=1..2x1"], "not both"),
    (["--occupancy-sweep", "--warps", "4"], "--warps does not apply"),
    (["--kernel", "add_triton", "--dtype", "fp64"], "--dtype is for --occupancy-sweep"),
])
def test_bad_values_are_one_line_before_any_work(tmp_path, argv, message):
    args = _parse("bench", *argv, "--cpu", "--out", str(tmp_path / "o.json"))
    with pytest.raises(UserError, match=message) as err:
        args.handler(args)
    assert "\n" not in str(err.value) and list(tmp_path.iterdir()) == []


def test_help_names_the_sweep(capsys):
    with pytest.raises(SystemExit):
        _parse("bench", "--help")
    out = capsys.readouterr().out
    assert "--occupancy-sweep" in out and "--blocks-per-sm" in out
