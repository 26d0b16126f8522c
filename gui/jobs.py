"""The live panel's jobs: sweeps, results files, the correctness run and the article's experiments.

Each job is a plain module-level function whose last argument is a `TaskContext`; the window binds
the others with `functools.partial`, so a job pickles by import path and runs in the kernel host
process (gui.adapter.HostRunner, kernels.host) just as it runs in a thread (gui.adapter.TaskRunner).
The functions a job calls come from `BandwidthJobs`, injectable for tests; the real ones import
`kernels` only when they run. This module imports no Qt (the host imports it to run its jobs).
`BenchJobs` submits the jobs to a runner and hands progress and outcomes to the BenchModel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from typing import TYPE_CHECKING, Any

from gui.models.bench import BenchModel, SweepRequest
from sim.errors import UserError

if TYPE_CHECKING:
    from kernels.host import TaskContext, TaskOutcome

EXPERIMENTS = ("count_kernels", "launch_vs_finish", "square_host_steps")


class Cancelled(Exception):
    """Raised inside a job when the user pressed Cancel."""


# -- the real work (imports kernels, and with it torch/triton/numba, only where it runs) -----------

def _sweep(*a, **k):
    from kernels.bench import sweep

    return sweep(*a, **k)


def _load(path):
    from kernels.results import load_results

    return load_results(path)


def _checks(*a, **k):
    from kernels.check import run_checks

    return run_checks(*a, **k)


def run_experiment(name: str):
    """One of the article's experiments (kernels.experiments), on the calling thread: in the
    host that is its main thread, as on the command line."""
    from kernels.experiments import EXPERIMENTS as RUN

    return RUN[name]()


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


_REAL = {"sweep": _sweep, "load_results": _load, "run_checks": _checks,
         **{name: partial(run_experiment, name) for name in EXPERIMENTS}}


# -- the jobs: module-level, the context last ------------------------------------------------------

def sweep_job(sweep, request: SweepRequest, ctx: TaskContext):
    return sweep(list(request.kernels), list(request.sizes),
                 None if request.blocks is None else list(request.blocks),
                 flush_l2=request.flush_l2, reps=request.reps, on_progress=ctx.progress,
                 should_cancel=ctx.cancelled, allow_cpu=request.allow_cpu,
                 command="WarpScope GUI sweep")


def load_job(load_results, path: str, ctx: TaskContext):
    return load_results(path)


def checks_job(run_checks, expected: int, ctx: TaskContext):
    """Every kernel against its float64 reference; a cancelled run keeps what it checked."""
    seen: list = []

    def on_result(r):
        if ctx.cancelled():
            raise Cancelled()
        seen.append(r)
        ctx.progress(len(seen), max(expected, len(seen) + 1), f"{r.kernel} n={r.elements:,}: {r.status}")

    try:
        return run_checks(None, None, on_result=on_result)
    except Cancelled:
        return seen


def experiments_job(experiments: dict[str, Callable[[], Any]], ctx: TaskContext):
    """The experiments in order; each reports its own failure as text."""
    out: dict[str, Any] = {}
    for i, (name, run) in enumerate(experiments.items()):
        if ctx.cancelled():
            break
        ctx.progress(i, len(experiments), name)
        try:
            out[name] = run()
        except Exception as exc:  # noqa: BLE001 - shown beside the experiment
            msg = str(exc).splitlines()[0] if str(exc) else ""
            out[name] = msg if isinstance(exc, ValueError) and msg else f"{type(exc).__name__}: {msg}"
    ctx.progress(len(experiments), len(experiments), "done")
    return out


def sweep_task(jobs: BandwidthJobs, request: SweepRequest):
    return partial(sweep_job, jobs.sweep, request)


def load_task(jobs: BandwidthJobs, path: str):
    return partial(load_job, jobs.load_results, path)


def checks_task(jobs: BandwidthJobs, expected: int):
    return partial(checks_job, jobs.run_checks, expected)


def experiments_task(jobs: BandwidthJobs):
    return partial(experiments_job, {name: getattr(jobs, name) for name in EXPERIMENTS})


class BenchJobs:
    """Runs the bench model's jobs on `runner` and reports back to the model (GUI thread)."""

    def __init__(self, model: BenchModel, runner, jobs: BandwidthJobs | None = None):
        """`runner`: a gui.adapter HostRunner (the window) or TaskRunner (tests with fakes)."""
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
        self.model.progressed(*self.model.progress[:2], "cancelling…")
        for job_id in list(self._kinds):  # only ours: the runner may hold other clients' jobs
            self.runner.cancel(job_id)

    def _on_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        if job_id in self._kinds:
            self.model.progressed(done, total, label)

    def _on_finished(self, outcome: TaskOutcome) -> None:
        kind = self._kinds.pop(outcome.job_id, None)
        if kind is not None:
            self.model.finish(kind, outcome.ok, outcome.cancelled, outcome.result, outcome.error)
