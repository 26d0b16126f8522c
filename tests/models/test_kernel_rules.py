"""A user's kernel rules are asked off the GUI thread (gui/models/kernel_rules.py): on the main
thread the launch model never calls one it has no answer for; it shows "grid: asking FILE…",
takes the worker's answer, drops one for a launch replaced since, goes back to the launch before
on an error, and never asks in a loop. No Qt: the worker is a plain thread here."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from gui.models.kernel_rules import Answered, RulesPending, answering
from gui.models.launch import LaunchInputs, LaunchModel, compute_state
from sim.inputs.errors import UserError
from tests.models.fakes import Recorder


def _rule(n, BLOCK_SIZE):  # a declaration's parameters are its block's names
    if n > 1 << 30:
        raise UserError("mine.py: k's 'grid' raised ValueError: too big")
    return -(-n // BLOCK_SIZE) + 1  # one spare program: not what cdiv alone would give


@pytest.fixture
def mine():
    from kernels.declare.registry import get_kernel

    asked: list = []

    def counted(n, BLOCK_SIZE):
        asked.append(threading.current_thread() is threading.main_thread())
        return _rule(n, BLOCK_SIZE)

    spec = replace(get_kernel("add_triton"), name="k", origin="/home/me/mine.py",
                   grid=Answered(counted, "mine.py"))
    return spec, asked


def _model(spec):
    model = LaunchModel(LaunchInputs(gpu="H200", elements=1_000_000))
    model.add_opened_kernels([spec])
    wanted = Recorder(model.rules_wanted)
    return model, wanted


def _work_out(request):
    """What gui/rules_jobs.py does, on a thread of its own."""
    out = []
    worker = threading.Thread(target=lambda: out.append(_asked(request)))
    worker.start()
    worker.join()
    return out[0]


def _asked(request):
    with answering():
        return compute_state(request.inputs, request.spec, request.kernel).error


def test_the_main_thread_asks_a_worker_and_takes_its_answer(mine):
    spec, asked = mine
    model, wanted = _model(spec)
    assert model.select_kernel("k")
    st = model.state
    assert st.asking == "grid: asking mine.py…" and st.geometry is None and not st.ok
    assert st.message() == "grid: asking mine.py…"
    [(request,)] = wanted.calls
    assert request.inputs == st.inputs
    assert _work_out(request) == ""
    model.rules_answered(request)
    st = model.state
    assert st.ok and not st.asking and st.geometry.blocks == -(-1_000_000 // 1024) + 1
    assert asked == [False]  # asked once, by the worker
    # the same launch again: at hand, no worker
    assert model.update(elements=2_000_000) and model.state.asking
    assert model.update(elements=1_000_000) and model.state.ok and len(wanted.calls) == 2


def test_an_answer_for_a_launch_replaced_since_is_dropped(mine):
    spec, _ = mine
    model, wanted = _model(spec)
    model.select_kernel("k")
    assert model.update(elements=3_000_000)
    first, second = (c[0] for c in wanted.calls)
    _work_out(first)
    model.rules_answered(first)
    assert model.state.asking and model.state.inputs.elements == 3_000_000  # still the newer one
    _work_out(second)
    model.rules_answered(second)
    assert model.state.ok and model.state.geometry.blocks == -(-3_000_000 // 1024) + 1


def test_an_error_is_one_line_and_the_launch_before_stays(mine):
    spec, _ = mine
    model, wanted = _model(spec)
    model.select_kernel("k")
    _work_out(wanted.calls[-1][0])
    model.rules_answered(wanted.calls[-1][0])
    before = model.state
    rejected = Recorder(model.rejected)
    assert model.update(elements=1 << 31) and model.state.asking
    request = wanted.calls[-1][0]
    error = _work_out(request)
    assert error == "mine.py: k's 'grid' raised ValueError: too big"
    model.rules_answered(request, error)
    assert model.state == before and rejected.calls == [(error,)]
    # asked again, the same line at once: the file is not asked twice
    assert not model.update(elements=1 << 31) and rejected.calls[-1] == (error,)


def test_an_answer_not_kept_is_not_asked_for_in_a_loop(mine):
    spec, _ = mine
    model, wanted = _model(spec)
    model.select_kernel("k")
    request = wanted.calls[-1][0]
    _work_out(request)
    spec.grid._answers.clear()  # as if the answer could not be kept
    rejected = Recorder(model.rejected)
    model.rules_answered(request)
    line = "mine.py gave no answer the window can keep"
    assert len(wanted.calls) == 1 and rejected.calls == [(line,)]
    assert not model.state.asking


def test_on_the_main_thread_a_new_question_is_never_asked(mine):
    spec, asked = mine
    with pytest.raises(RulesPending, match="asking mine.py"):
        spec.launch_shape(5_000, {"BLOCK_SIZE": 1024, "num_warps": 4}, 132)
    assert asked == []
