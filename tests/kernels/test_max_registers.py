"""A register cap (__launch_bounds__/-maxrregcount; Triton maxnreg, Numba max_registers) as an
input: the compiler, run without a GPU (kernels/offline_compile/), reports fewer registers, and the
occupancy follows. Truth: the compiler's own report (ptxas) stays within the cap."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

import main
from sim.rules.devices import preset
from sim.rules.occupancy import occupancy


def _explain(capsys, *argv):
    assert main.main(["explain", "--gpu", "H200", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_triton_maxnreg_lowers_registers_and_raises_occupancy(capsys):
    launch = ["--kernel", "add_triton", "--block", "8192", "--warps", "8", "--elements", "2^24"]
    free = _explain(capsys, *launch)
    capped = _explain(capsys, *launch, "--max-registers", "64")
    regs_free = free["kernel"]["compiled"]["regs_per_thread"]
    regs_capped = capped["kernel"]["compiled"]["regs_per_thread"]
    assert regs_free > 64 >= regs_capped  # ptxas kept each thread within the cap
    occ = capped["occupancy"]
    assert occ["regs_per_thread"] == regs_capped  # what the compiler said is what the rules use
    assert occ["blocks_per_sm"] == occupancy(preset("H200"), 256, regs_capped,
                                             occ["smem_per_block_bytes"]).blocks_per_sm
    assert occ["blocks_per_sm"] > free["occupancy"]["blocks_per_sm"]
    assert "capped at 64" in capped["kernel"]["note"]


@pytest.mark.slow
def test_numba_max_registers_reaches_ptxas(capsys):
    launch = ["--kernel", "add_numba", "--elements", "2^20"]
    free = _explain(capsys, *launch)["kernel"]["compiled"]["regs_per_thread"]
    capped = _explain(capsys, *launch, "--maxrregcount", "24")["kernel"]["compiled"]["regs_per_thread"]
    assert capped <= 24 < free


def test_a_custom_launch_keeps_its_registers_under_the_cap(capsys):
    out = _explain(capsys, "--regs", "100", "--max-registers", "64")
    assert out["occupancy"]["regs_per_thread"] == 64


@pytest.mark.parametrize("value", ["0", "256", "abc"])
def test_a_bad_cap_is_one_line(capsys, value):
    with pytest.raises(SystemExit):
        main.main(["explain", "--max-registers", value])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-registers" in err[0]


@pytest.mark.slow
def test_window_compiles_with_the_cap_and_a_custom_launch_stays_under_it():
    """The window's path: the launch model puts the cap in its compile target, the compiler host
    (gui/jobs.py) compiles with it; a typed register count is held under it."""
    from gui.jobs import KernelRef, _compile
    from gui.models.compiled import MAX_REGISTERS, compile_target
    from gui.models.launch import LaunchInputs, LaunchModel
    from kernels.declare.registry import get_kernel

    model = LaunchModel(LaunchInputs(gpu="H200"))
    model.set_kernels([get_kernel("add_triton")])
    assert model.update(regs_per_thread=100, max_registers=64)
    assert model.inputs.regs_per_thread == model.state.occ.regs_per_thread == 64
    assert model.select_kernel("add_triton")
    assert model.update(threads_per_block=256, block_size=8192, max_registers=64)
    target = compile_target(model.kernel(), model.state)
    assert target.block[MAX_REGISTERS] == 64
    # in a process of its own, as in the window: the compiler host's function switches its process
    # off Triton's interpreter and Numba's simulator for good
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as host:
        res = host.submit(_compile, KernelRef("add_triton"), target.elements, target.block,
                          target.cc, bool).result(timeout=300)
    assert res.regs_per_thread <= 64
