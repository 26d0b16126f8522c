"""The live panel's jobs: sweeps, results files, the correctness run and the article's experiments.

Each job is a plain function of a `TaskContext` (gui.adapter) built from `BandwidthJobs`, the
injectable set of work functions (the real ones import `kernels` only when they run, so the
window never imports torch/triton/numba itself). `BenchJobs` submits them to a TaskRunner and hands
progress and outcomes to the BenchModel on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from gui.adapter import TaskOutcome, TaskRunner
from gui.models.bench import BenchModel, SweepRequest
from sim.errors import UserError

EXPERIMENTS = ("count_kernels", "launch_vs_finish", "square_host_steps")


class Cancelled(Exception):
    """Raised inside a job when the user pressed Cancel."""


@dataclass
class BandwidthJobs:
    """The functions the jobs call. Anything not given uses the real kernels layer."""

    sweep: Callable[..., Any] | None = None
    load_results: Callable[[str], Any] | None = None
    run_checks: Callable[..., Any] | None = None
    count_kernels: Callable[..., Any] | None = None
    launch_vs_finish: Callable[..., Any] | None = None
    square_host_steps: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) is None:
                setattr(self, f.name, _REAL[f.name])


def _sweep(*a, **k):
    from kernels.bench import sweep

    return sweep(*a, **k)


def _load(path):
    from kernels.results import load_results

    return load_results(path)


def _checks(*a, **k):
    from kernels.check import run_checks

    return run_checks(*a, **k)


def _experiment(name):
    # In a child process (kernels.experiments.run_in_subprocess): inside a worker thread
    # torch.compile did not finish on the H200 and froze the window.
    def run():
        from kernels.experiments import run_in_subprocess

        return run_in_subprocess(name)

    return run


_REAL = {"sweep": _sweep, "load_results": _load, "run_checks": _checks,
         **{name: _experiment(name) for name in EXPERIMENTS}}


# -- the jobs ------------------------------------------------------------------------------------

def sweep_task(jobs: BandwidthJobs, request: SweepRequest):
    def task(ctx):
        return jobs.sweep(list(request.kernels), list(request.sizes),
                          None if request.blocks is None else list(request.blocks),
                          flush_l2=request.flush_l2, reps=request.reps, on_progress=ctx.progress,
                          should_cancel=ctx.cancelled, allow_cpu=request.allow_cpu,
                          command="WarpScope GUI sweep")
    return task


def load_task(jobs: BandwidthJobs, path: str):
    return lambda ctx: jobs.load_results(path)


def checks_task(jobs: BandwidthJobs, expected: int):
    """Every kernel against its float64 reference; a cancelled run keeps what it checked."""
    def task(ctx):
        seen: list = []

        def on_result(r):
            if ctx.cancelled():
                raise Cancelled()
            seen.append(r)
            ctx.progress(len(seen), max(expected, len(seen) + 1), f"{r.kernel} n={r.elements:,}: {r.status}")

        try:
            return jobs.run_checks(None, None, on_result=on_result)
        except Cancelled:
            return seen
    return task


def experiments_task(jobs: BandwidthJobs):
    """The three experiments; each reports its own failure as text."""
    def task(ctx):
        out: dict[str, Any] = {}
        for i, name in enumerate(EXPERIMENTS):
            if ctx.cancelled():
                break
            ctx.progress(i, len(EXPERIMENTS), name)
            try:
                out[name] = getattr(jobs, name)()
            except Exception as exc:  # noqa: BLE001 - shown beside the experiment
                msg = str(exc).splitlines()[0] if str(exc) else ""
                out[name] = msg if isinstance(exc, ValueError) and msg else f"{type(exc).__name__}: {msg}"
        ctx.progress(len(EXPERIMENTS), len(EXPERIMENTS), "done")
        return out
    return task


class BenchJobs:
    """Runs the bench model's jobs on `runner` and reports back to the model (GUI thread)."""

    def __init__(self, model: BenchModel, runner: TaskRunner, jobs: BandwidthJobs | None = None):
        self.model, self.runner = model, runner
        self.jobs = jobs or BandwidthJobs()
        self._kinds: dict[int, str] = {}
        runner.progress.connect(self._on_progress)
        runner.finished.connect(self._on_finished)

    def _submit(self, kind: str, task) -> int:
        job = self.runner.submit(task, name=kind)
        self._kinds[job] = kind
        self.model.begin(kind)
        return job

    def start_sweep(self, sizes: str, blocks: str, reps: int, flush_l2: bool, allow_cpu: bool) -> int | None:
        """Check the form and start a sweep; None (and a message) if the form is wrong."""
        try:
            request = self.model.sweep_request(sizes, blocks, reps, flush_l2, allow_cpu)
        except UserError as exc:
            self.model.message.emit(f"Sweep not started: {exc}")
            return None
        return self._submit("sweep", sweep_task(self.jobs, request))

    def open_results(self, path: str) -> int:
        return self._submit("load", load_task(self.jobs, path))

    def start_checks(self) -> int:
        self.model.log.emit("Correctness run started (without a GPU this uses Triton's interpreter "
                            "and numba-cuda's simulator; it takes a while)…")
        return self._submit("check", checks_task(self.jobs, 4 * max(1, len(self.model.kernels) + 2)))

    def start_experiments(self) -> int:
        return self._submit("experiments", experiments_task(self.jobs))

    def cancel(self) -> None:
        self.runner.cancel()
        self.model.progressed(*self.model.progress[:2], "cancelling…")

    def _on_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        if job_id in self._kinds:
            self.model.progressed(done, total, label)

    def _on_finished(self, outcome: TaskOutcome) -> None:
        kind = self._kinds.pop(outcome.job_id, None)
        if kind is not None:
            self.model.finish(kind, outcome.ok, outcome.cancelled, outcome.result, outcome.error)
