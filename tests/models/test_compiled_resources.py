"""The launch model asks the compiler for the selected kernel's resources and says where the
numbers came from: without Qt, with the compiler's answers given by hand (the real compiler is
tested in tests/kernels/test_resources.py and the window's tests)."""

from __future__ import annotations

import pytest

from gui.models.compiled import BY_HAND, COMPILER, COMPILING, FAILED, CompileTarget
from gui.models.launch import LaunchInputs, LaunchModel
from kernels.offline_compile.compile import CompileError
from kernels.declare.registry import KERNELS
from kernels.offline_compile.resources import LaunchResources
from sim.rules.occupancy import occupancy


class Asked:
    def __init__(self, signal):
        self.targets: list[CompileTarget] = []
        signal.connect(self.targets.append)


def answer(target: CompileTarget, regs: int, smem: int = 0, stack: int = 0,
           compiler: str = "triton 3.7.1") -> LaunchResources:
    return LaunchResources(target.kernel, target.cc, target.block, target.elements, regs, smem,
                           stack, compiler, "12.8.93")


@pytest.fixture
def model():
    m = LaunchModel(LaunchInputs(gpu="A100 80GB", elements=1_000_000))
    m.set_kernels(KERNELS)
    return m


def test_selecting_a_kernel_asks_the_compiler_for_the_selected_gpu(model):
    asked = Asked(model.compile_wanted)
    assert model.select_kernel("add_triton")
    [t] = asked.targets
    assert (t.kernel, t.cc, t.block, t.elements) == (
        "add_triton", (8, 0), {"BLOCK_SIZE": 1024, "num_warps": 4}, 1_000_000)
    assert model.state.origin.kind == COMPILING and "sm_80" in model.state.origin.text
    model.set_compiled(t, answer(t, 25))
    st = model.state
    assert st.inputs.regs_per_thread == 25 and st.origin.kind == COMPILER
    assert st.origin.text == "triton 3.7.1 for sm_80"
    assert st.occ == occupancy(st.spec, 128, 25, 0)


def test_each_configuration_is_asked_once_and_remembered(model):
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    first = asked.targets[-1]
    model.set_compiled(first, answer(first, 25))
    assert model.update(block_size=4096)
    bigger = asked.targets[-1]
    assert bigger.block["BLOCK_SIZE"] == 4096 and model.state.origin.kind == COMPILING
    model.set_compiled(bigger, answer(bigger, 56))
    assert model.inputs.regs_per_thread == 56
    n = len(asked.targets)
    assert model.update(block_size=1024)  # back: known, applied at once, nothing asked
    assert len(asked.targets) == n
    assert model.inputs.regs_per_thread == 25 and model.state.origin.kind == COMPILER
    assert model.update(gpu="T4")  # another compute capability: another compile
    assert asked.targets[-1].cc == (7, 5) and model.state.origin.kind == COMPILING


def test_a_new_size_keeps_the_numbers_until_the_answer(model):
    """Only the size's alignment can change the code: the numbers stand meanwhile."""
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    t = asked.targets[-1]
    model.set_compiled(t, answer(t, 25))
    assert model.update(elements=1_000_001)
    moved = asked.targets[-1]
    assert moved.elements == 1_000_001 and moved.config() == t.config()
    assert model.state.origin.kind == COMPILER and model.inputs.regs_per_thread == 25
    model.set_compiled(moved, answer(moved, 27))
    assert model.inputs.regs_per_thread == 27


def test_an_answer_for_an_older_launch_is_not_applied(model):
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    old = asked.targets[-1]
    model.update(block_size=2048)
    model.set_compiled(old, answer(old, 25))
    assert model.inputs.regs_per_thread == 0 and model.state.origin.kind == COMPILING
    assert model.update(block_size=1024) and model.inputs.regs_per_thread == 25  # remembered


def test_a_compile_error_is_one_line_with_its_log_and_the_launch_still_works(model):
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    t = asked.targets[-1]
    model.set_compiled(t, CompileError("add_fast_kernel does not compile: line 3: oops",
                                       "Traceback...\nthe whole output"))
    o = model.state.origin
    assert o.kind == FAILED and o.text.startswith("add_fast_kernel does not compile")
    assert "\n" not in o.text and "the whole output" in o.log
    assert model.update(elements=2_000_000)  # still usable
    model.request_compile()
    assert asked.targets[-1].elements == 2_000_000 and model.state.origin.kind == COMPILING


def test_registers_typed_in_are_set_by_hand_until_the_block_changes(model):
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    t = asked.targets[-1]
    model.set_compiled(t, answer(t, 25))
    assert model.update(regs_per_thread=64)
    assert model.state.origin == BY_HAND and model.inputs.regs_per_thread == 64
    n = len(asked.targets)
    assert model.update(elements=5_000_000) and model.state.origin == BY_HAND
    assert len(asked.targets) == n
    assert model.update(block_size=4096) and model.state.origin.kind == COMPILING


def test_bench_results_stand_in_while_compiling(model):
    model.set_measured_resources({"add_triton": (24, 0)})
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    assert model.inputs.regs_per_thread == 24 and "bench results" in model.state.origin.text
    t = asked.targets[-1]
    model.set_compiled(t, answer(t, 25))
    assert model.inputs.regs_per_thread == 25 and model.state.origin.kind == COMPILER


def test_a_custom_launch_asks_nothing(model):
    asked = Asked(model.compile_wanted)
    assert model.update(threads_per_block=512, regs_per_thread=40)
    assert not asked.targets and model.state.origin == BY_HAND


def test_a_triton_kernels_threads_curve_is_recompiled_per_warp_count(model):
    """Each point of the threads sweep has the registers the compiler gave that num_warps."""
    swept = Asked(model.sweep_wanted)
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_triton")
    t = asked.targets[-1]
    model.set_compiled(t, answer(t, 25))
    [s] = swept.targets
    assert "compiling" in model.curves.threads_note
    regs = {1: 40, 2: 32, 4: 25, 8: 20, 16: 18, 32: 16}
    model.set_sweep(s, {w: answer(s.with_block(num_warps=w), r) for w, r in regs.items()})
    xs, ys = model.curves.threads
    spec = model.state.spec
    assert list(xs) == [32 * w for w in regs]
    assert list(ys) == [occupancy(spec, 32 * w, r, 0).active_warps_per_sm for w, r in regs.items()]
    assert "recompiled at each warp count" in model.curves.threads_note
    n = len(asked.targets)
    assert model.update(threads_per_block=256)  # 8 warps: known from the sweep
    assert model.inputs.regs_per_thread == 20 and len(asked.targets) == n


def test_a_numba_kernels_registers_do_not_depend_on_its_block(model):
    swept = Asked(model.sweep_wanted)
    asked = Asked(model.compile_wanted)
    model.select_kernel("add_numba")
    t = asked.targets[-1]
    model.set_compiled(t, answer(t, 32, compiler="numba-cuda 0.30.4"))
    assert not swept.targets and model.curves.threads_note == ""
    assert t.block == {"threads": 256}


def test_a_2d_block_keeps_its_width():
    """The stencil's (32, 8) block: the threads box sets the rows."""
    from gui.models.compiled import numba_threads

    class Stencil:
        name, block = "stencil", {"threads": (32, 8)}

    assert numba_threads(Stencil, 256) == (32, 8) and numba_threads(Stencil, 1024) == (32, 32)
    with pytest.raises(ValueError, match="multiple of 32"):
        numba_threads(Stencil, 100)
