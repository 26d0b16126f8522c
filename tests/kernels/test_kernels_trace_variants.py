"""The trace kernels' variants without a GPU: they compile for sm_90 (inline PTX included), the
CLI rejects bad values in one line before looking for a GPU, and a trace's meta says what a
simulation of the launch needs."""

import argparse
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from kernels_env import HAS_GPU

from kernels import cli
from kernels.launching.launch import Resources
from kernels.tracing.trace import grid_for_waves, summarize_trace, trace_from_stamps, trace_meta
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _parse(*argv):
    parser = argparse.ArgumentParser(prog="warpscope")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.mark.parametrize("argv,message", [
    (["--wait", "nap"], "--wait must be one of spin, sleep, memory"),
    (["--kernel", "mul"], "--kernel must be one of spin, add"),
    (["--warps", "3"], "--warps must be"),
    (["--hold-regs", "3"], "--hold-regs must be one of"),
    (["--grid", "10", "--waves", "2"], "--grid or --waves, not both"),
    (["--elements", "2^20"], "--elements: only with --kernel add"),
    (["--kernel", "add"], "needs --elements"),
    (["--kernel", "add", "--elements", "2^20", "--wait", "sleep"], "--wait: only with --kernel spin"),
    (["--kernel", "add", "--elements", "2^20", "--block", "1000"], "power of two"),
    (["--kernel", "add", "--elements", "lots"], "is not a number"),
    (["--kernel", "add", "--elements", "0"], "--elements must be"),
    (["--kernel", "softmax", "--elements", "100", "--block", "4096"], "less than one row"),
    (["--kernel", "copy", "--elements", "2^27", "--block", "256"], "more than a trace file holds"),
    (["--kernel", "square", "--spin-us", "5", "--elements", "2^20"], "only with --kernel spin"),
])
def test_trace_rejects_bad_values_in_one_line_before_any_gpu_work(tmp_path, argv, message):
    args = _parse("trace", *argv, "--out", str(tmp_path / "t.json"))
    with pytest.raises(UserError, match=message) as err:
        args.handler(args)
    assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [(["--spin-us", "0"], "--spin-us must be at least 0.1"),
                                           (["--waves", "-1"], "--waves must be")])
def test_a_value_out_of_bounds_is_refused_by_the_parser(tmp_path, capsys, argv, message):
    import main

    with pytest.raises(SystemExit) as exit_:
        main.main(["trace", *argv, "--out", str(tmp_path / "t.json")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path")
@pytest.mark.parametrize("argv", [["--wait", "memory", "--waves", "2.5", "--hold-regs", "64"],
                                  ["--kernel", "add", "--elements", "2^24", "--block", "256",
                                   "--warps", "2"],
                                  ["--kernel", "softmax", "--elements", "2^24", "--block", "4096",
                                   "--warps", "8"],
                                  ["--kernel", "square", "--elements", "2^20"]])
def test_valid_variants_get_as_far_as_needing_a_gpu(tmp_path, argv):
    args = _parse("trace", *argv, "--out", str(tmp_path / "t.json"))
    with pytest.raises(UserError, match="needs a GPU"):
        args.handler(args)


def test_meta_says_what_a_simulation_needs():
    h200 = preset("H200")
    res = Resources(regs_per_thread=12, smem_per_block_bytes=0, spills=0)
    meta = trace_meta(h200, kernel="spin-trace", grid=4225, num_warps=4, res=res,
                      command="warpscope trace --grid 4225", wait="sleep", spin_us=20.0,
                      hold_regs=0, triton_version="3.6.0")
    for key in ("kernel", "wait", "grid", "num_warps", "threads_per_block", "spin_us",
                "regs_per_thread", "smem_per_block_bytes", "sm_count", "predicted", "command",
                "triton_version", "date"):
        assert meta[key] is not None, key
    assert meta["threads_per_block"] == 128 and meta["sm_count"] == 132
    occ = occupancy(h200, 128, 12, 0)
    assert meta["predicted"]["blocks_per_sm"] == occ.blocks_per_sm == 16
    assert meta["predicted"]["waves"] == pytest.approx(4225 / (16 * 132))
    assert meta["predicted"]["limited_by"] == list(occ.limited_by)
    json.dumps(meta)  # it goes into a JSON file as it is


def test_grid_in_waves_follows_the_compiled_registers():
    h200 = preset("H200")
    assert grid_for_waves(h200, 2.2, 128, Resources(12, 0, 0)) == round(2.2 * 132 * 16)
    # 168 registers x 128 threads: three blocks per SM, registers the limiter
    assert occupancy(h200, 128, 168, 0).limited_by == ("registers",)
    assert grid_for_waves(h200, 1.0, 128, Resources(168, 0, 0)) == 3 * 132


def _stamps_trace(rows, spin_us=10.0, waves=1.0):
    meta = {"spin_us": spin_us, "predicted": {"blocks_per_sm": 2, "waves": waves}}
    return trace_from_stamps(np.array(rows, dtype=np.int64), "H200", meta)


def test_stamps_become_a_trace_relative_to_the_first_start():
    t = _stamps_trace([[5, 1_000_300, 1_010_300], [7, 1_000_000, 1_010_000],
                       [5, 1_010_400, 1_020_400]], waves=1.5)
    assert t.block.tolist() == [0, 1, 2] and t.sm.tolist() == [5, 7, 5]
    assert t.start_us.tolist() == [0.3, 0.0, 10.4] and t.end_us[2] == pytest.approx(20.4)
    s = summarize_trace(t)
    assert s["started_within_0_5us"] == 2
    assert s["textbook_makespan_us"] == 20.0  # ceil(1.5 waves) x 10 us
    assert s["makespan_us"] == pytest.approx(20.4)
    with pytest.raises(UserError, match="recorded nothing"):
        _stamps_trace([[-1, -1, -1], [0, 0, 10]])


COMPILE_PROBE = """
import subprocess, sys, pathlib
sys.path.insert(0, {root!r})
import triton
from kernels.bodies.trace_kernels import compile_for
cuobjdump = pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
for tag, kw in [("sleep", dict(kernel="spin", wait="sleep")),
                ("memory", dict(kernel="spin", wait="memory")),
                ("hold", dict(kernel="spin", hold_regs=64)),
                ("add", dict(kernel="add", block_size=256, num_warps=2)),
                ("square", dict(kernel="square", block_size=512)),
                ("softmax", dict(kernel="softmax", block_size=4096, num_warps=8))]:
    ck = compile_for(**kw)
    cubin = pathlib.Path({tmp!r}) / (tag + ".cubin")
    cubin.write_bytes(ck.asm["cubin"])
    run = lambda flag: subprocess.run([cuobjdump, flag, cubin], capture_output=True, text=True,
                                      check=True).stdout
    regs = int(run("-res-usage").split("REG:")[1].split()[0])
    # disassembling takes ~1.5 s: only where ptxas could silently undo the PTX
    sass = run("-sass") if tag == "memory" else ""
    ptx = ck.asm["ptx"]
    print(tag, "nanosleep" in ptx, "LDG" in sass, ptx.count("%globaltimer;"), regs)
"""


@pytest.mark.slow
def test_every_new_variant_compiles_for_sm90_with_its_ptx_intact(tmp_path):
    """Inline PTX fails at compile time, not on the GPU; and ptxas silently drops a load whose
    value no instruction uses (the memory wait's chase did, once), so its SASS is checked."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", COMPILE_PROBE.format(root=str(ROOT),
                                                                      tmp=str(tmp_path))],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()}
    assert rows["sleep"][0] == "True" and rows["memory"][0] == "False"
    assert rows["memory"][1] == "True"  # the chase's load survived ptxas
    assert int(rows["hold"][3]) >= 64 + 8  # 64 held values really take registers
    for tag in ("add", "square", "softmax"):
        assert int(rows[tag][2]) == 2, tag  # stamped at entry and after the store


@pytest.mark.parametrize("kernel,elements,block,warps", [
    ("add", 1000, 256, 4), ("copy", 1000, 256, 2), ("square", 300, 128, 4),
    ("softmax", 3 * 256 + 5, 256, 4)])
def test_the_unstamped_twin_of_each_real_trace_kernel_computes_its_kernel(kernel, elements,
                                                                          block, warps):
    """The same launch `trace` times unstamped, run in the interpreter (stamps need a GPU)."""
    import torch

    from kernels.tracing.trace import tile_grid, tile_launch

    launch, out, want = tile_launch(kernel, elements, block, warps, device="cpu")
    stamps = torch.full((tile_grid(kernel, elements, block), 3), -1, dtype=torch.int64)
    launch(False, stamps)
    assert torch.allclose(out, want, rtol=1e-5, atol=1e-7)
    assert (stamps == -1).all()  # unstamped: nothing written
    if kernel == "softmax":  # whole rows only: the 5 elements past the last row are no row
        assert tile_grid(kernel, elements, block) == 3 and out.numel() == 3 * 256
