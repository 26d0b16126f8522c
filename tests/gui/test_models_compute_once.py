"""The window's models work out what is shown once per change, and only when a view asks: a tab
behind another predicts nothing (Two GPUs: two whole launches; the Verdicts' next steps: three
or four), a launch seen before is not predicted again, and a simulation made on the GUI thread
(an export, a screenshot) is not made a second time by the debounced worker."""

from __future__ import annotations

from gui.models import next_step
from tests.gui.conftest import drawn


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_hidden_views_predict_nothing_until_drawn(win, monkeypatch):
    import gui.models.compare_gpus as compare_gpus

    sides = _counting(monkeypatch, compare_gpus, "side_of")
    steps = _counting(monkeypatch, next_step, "next_steps")
    next_step._steps.cache_clear()
    w = win("H200", 3_000_001, 256, regs=40)  # the shared window is never shown
    w.model.update(elements=3_000_002)
    assert not sides and not steps
    view = drawn(w.teach.compare_view)
    assert len(sides) == 2 and "H200" in view.sides[0].title.text()
    drawn(view)
    assert len(sides) == 2  # drawn again, nothing changed: nothing predicted again
    assert "Next step" in drawn(w.teach.verdicts_view).list.toPlainText()
    assert len(steps) == 1
    w.model.update(elements=3_000_001)
    w.model.update(elements=3_000_002)  # back to the launch the steps were found for
    drawn(w.teach.verdicts_view)
    assert len(steps) == 1


def test_a_simulation_made_here_is_not_made_again_by_the_worker(win, qtbot, monkeypatch):
    import gui.models.simulation as simulation

    w = win("L40S", 1_000_000, 256)
    runs = _counting(monkeypatch, simulation, "run_simulation")
    shown = []
    w.simulation.changed.connect(lambda run, _msg: shown.append(run))
    w.model.update(elements=2_000_000)  # asks the debounced worker for a run
    run = w.simulate_now()  # and an export needs it now
    qtbot.wait(100)  # the debounce's 5 ms, and any worker run, are over
    assert run is not None and w.simulation.run is run and w.simulation.is_current()
    assert len(runs) == 1 and shown == [run]
