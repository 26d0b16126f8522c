"""The Verdicts' next step: the register step of the issue's example, and "try it" moving the
launch (and with it the sliders) to the step's value."""

from __future__ import annotations

from PySide6.QtCore import QUrl

from gui.models.next_step import steps_for
from tests.gui.conftest import drawn


def test_try_it_sets_the_register_step_on_the_launch(win):
    w = win("H200", 2**24, 1024, regs=40)
    view = drawn(w.teach.verdicts_view)
    text = view.list.toPlainText()
    assert "Next step" in text
    assert "40 -> 32 registers per thread gives 2 blocks per SM instead of 1" in text
    # the view's lines are the model's steps: one source
    first = steps_for(w.model.state)
    assert [s.change for s, _ in view._steps] == [s.change for s in first]
    i = next(i for i, (s, _) in enumerate(view._steps) if s.lever == "registers")
    view.list.anchorClicked.emit(QUrl(f"try:{i}"))
    assert w.model.state.inputs.regs_per_thread == 32
    assert w.model.state.occ.blocks_per_sm == 2
    assert w.controls.regs_slider.value() == 32  # the slider moved with the launch


def test_the_next_steps_time_is_the_verdicts_whole_launch_time(win):
    from sim.inputs.units import fmt_us

    w = win("H200", 2**24, 1024, regs=40)
    view = drawn(w.teach.verdicts_view)
    step = view._steps[0][0]
    text = view.list.toPlainText()
    assert f"Whole launch, predicted: {fmt_us(step.before.time_us)}" in text
    assert f"instead of {step.before.time_us:,.1f} us" in text


def test_matmul_auto_in_the_verdicts_shows_its_candidates(win):
    from kernels.declare.registry import matmul_choice
    from kernels.declare.registry import KERNELS

    w = win("H200")
    w.model.set_kernels([k for k in KERNELS if k.group == "matmul"])
    assert w.model.select_kernel("matmul_auto")  # a matmul picked starts at 4096^3, not 10^18
    assert w.model.update(kernel="matmul_auto", dims="M=1024,N=4352,K=8192")
    text = drawn(w.teach.verdicts_view).list.toPlainText()
    choice = matmul_choice(dict(M=1024, N=4352, K=8192), w.model.state.spec)
    assert "matmul_auto chose" in text and choice.why() in text
    assert text.count("stream-K") >= 3  # every candidate is listed, not only the winner
    assert w.model.state.blocks == choice.chosen.programs  # the grid is the chosen candidate's
    w.model.update(kernel="custom", dims="")
