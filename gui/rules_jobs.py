"""Asks a user's kernel file for the launch's grid, bytes and sizes off the GUI thread.

The LaunchModel says which launch it needs (`rules_wanted(RulesRequest)`, gui/models/launch.py);
`RulesJobs` works that launch out on a worker thread of the window (a gui.adapter.TaskRunner),
where each of the file's rules is asked of its process (kernels/declare/declarations.py) and kept
(gui/models/kernel_rules.py), then tells the model (`rules_answered`), which takes the answers
from there on the GUI thread. A newer launch stops the work before its next call; an error or a
timeout is one line. No Qt here: the runner is given.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from gui.models.compare_gpus import CompareGpusModel
from gui.models.kernel_rules import RulesRequest, Superseded, answering
from gui.models.launch import LaunchModel, compute_state

if TYPE_CHECKING:
    from kernels.host.process import TaskContext, TaskOutcome


def rules_job(request: RulesRequest, ctx: TaskContext) -> str:
    """The launch worked out with the file's answers (kept where the model finds them): "" or
    the one line that stopped it."""
    ctx.progress(0, 1, request.text)
    with answering(ctx.cancelled):
        state = compute_state(request.inputs, request.spec, request.kernel)
    return state.error


class RulesJobs:
    """Answers `model`'s `rules_wanted` on `runner` (the LaunchModel's, or the second GPU's of
    gui/models/compare_gpus.py): a new request stops the one running and replaces the one
    waiting."""

    def __init__(self, model: LaunchModel | CompareGpusModel, runner) -> None:
        self.model, self.runner = model, runner
        self._requests: dict[int, RulesRequest] = {}
        self._started: int | None = None  # the job on the worker now
        model.rules_wanted.connect(self.ask)
        runner.started.connect(self._on_started)
        runner.finished.connect(self._on_finished)

    def ask(self, request: RulesRequest) -> int:
        self.runner.cancel()  # the running one stops before its next call; the waiting one goes
        self._requests = {j: r for j, r in self._requests.items() if j == self._started}
        job = self.runner.submit(partial(rules_job, request), name="kernel rules")
        self._requests[job] = request
        return job

    def busy(self) -> bool:
        return bool(self._requests)

    def shutdown(self) -> None:
        """The window is closing: a question in flight ends within Limits.call_s, unanswered."""
        self._requests.clear()
        self.runner.shutdown()

    def _on_started(self, job: int, _name: str) -> None:
        self._started = job

    def _on_finished(self, outcome: TaskOutcome) -> None:
        self._started = None
        request = self._requests.pop(outcome.job_id, None)
        if request is None or outcome.cancelled or outcome.error == Superseded.__name__:
            return
        self.model.rules_answered(request, outcome.result if outcome.ok else outcome.error)
