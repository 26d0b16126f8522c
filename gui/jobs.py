"""The window's background jobs: the live panel's sweeps, results files, correctness run and
experiments; opening a user's kernel file; compiling the selected kernel.

Each job is a plain function of a `TaskContext` (gui.adapter) built from `BandwidthJobs` or
`KernelJobs`, the injectable sets of work functions (the real ones import `kernels` only when
they run, so the window never imports torch/triton/numba itself). `BenchJobs` submits the bench
model's jobs to a TaskRunner and hands progress and outcomes to the BenchModel on the GUI thread;
`KernelFileJobs` opens files for the KernelFilesModel; `CompileJobs` answers the LaunchModel's
compile requests (the current launch, then a Triton kernel's threads sweep).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from gui.adapter import TaskOutcome, TaskRunner
from gui.models.bench import BenchModel, SweepRequest
from gui.models.compiled import CompileTarget
from gui.models.kernel_files import KernelFilesModel, OpenedFile
from gui.models.launch import LaunchModel
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


# -- kernel files and compiles -------------------------------------------------------------------

@dataclass
class KernelJobs:
    """What opening a kernel file and compiling call. Anything not given uses the kernels layer:
    open_file(path) -> OpenedFile; compile(spec, n, block, cc, should_cancel) ->
    LaunchResources (raises CompileError); compile_many(spec, n, blocks, cc, should_cancel) ->
    [LaunchResources or CompileError]."""

    open_file: Callable[[str], OpenedFile] | None = None
    compile: Callable[..., Any] | None = None
    compile_many: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) is None:
                setattr(self, f.name, _KERNEL_REAL[f.name])


def _open_file(path: str) -> OpenedFile:
    import os

    from kernels.kernel_file import open_kernel_file, split_path
    from kernels.registry import add_kernels

    specs = open_kernel_file(path)  # runs the user's file: only ever on their request
    add_kernels(specs)  # the sweeps and the correctness run find them by name
    file = os.path.abspath(split_path(path)[0])
    with open(file, encoding="utf-8", errors="replace") as fh:
        return OpenedFile(file, fh.read(), tuple(specs))


def _compile(spec, n, block, cc, should_cancel):
    from kernels.resources import launch_resources

    return launch_resources(spec, n, block, cc, should_cancel=should_cancel)


def _compile_many(spec, n, blocks, cc, should_cancel):
    from kernels.resources import launch_resources_many

    return launch_resources_many(spec, n, blocks, cc, should_cancel=should_cancel)


_KERNEL_REAL = {"open_file": _open_file, "compile": _compile, "compile_many": _compile_many}
SWEEP_WARPS = (1, 2, 4, 8, 16, 32)  # Triton's num_warps choices (kernels.spec.TRITON_WARPS)


def open_task(jobs: KernelJobs, path: str):
    def task(ctx):
        ctx.progress(0, 1, f"opening {path}")
        return jobs.open_file(path)
    return task


def compile_task(jobs: KernelJobs, target: CompileTarget):
    """The resources of one launch; a compile error (or a cancel) is the result, not a crash, so
    its whole compiler output reaches the log."""
    def task(ctx):
        ctx.progress(0, 1, f"compiling {target.kernel}, {target.describe()}")
        try:
            return jobs.compile(target.spec, target.elements, target.block, target.cc,
                                ctx.cancelled)
        except UserError as exc:
            return exc
    return task


def sweep_compile_task(jobs: KernelJobs, target: CompileTarget):
    """num_warps -> resources (or error) for a Triton kernel's threads-per-block sweep; None if
    cancelled."""
    def task(ctx):
        blocks = [{**target.block, "num_warps": w} for w in SWEEP_WARPS]
        ctx.progress(0, len(blocks), f"compiling {target.kernel} at {len(blocks)} warp counts")
        try:
            found = jobs.compile_many(target.spec, target.elements, blocks, target.cc,
                                      ctx.cancelled)
        except UserError:
            return None
        return dict(zip(SWEEP_WARPS, found))
    return task


class KernelFileJobs:
    """Opens kernel files on `runner` for the KernelFilesModel (one line on failure)."""

    def __init__(self, files: KernelFilesModel, runner: TaskRunner, jobs: KernelJobs | None = None):
        self.files, self.runner = files, runner
        self.jobs = jobs or KernelJobs()
        self._paths: dict[int, str] = {}
        runner.finished.connect(self._on_finished)

    def open(self, path: str) -> int:
        job = self.runner.submit(open_task(self.jobs, path), name="open kernel file")
        self._paths[job] = path
        return job

    def _on_finished(self, outcome: TaskOutcome) -> None:
        path = self._paths.pop(outcome.job_id, None)
        if path is None:
            return
        if outcome.ok:
            self.files.add(outcome.result)
        else:
            self.files.fail(path, outcome.error)


class CompileJobs:
    """Compiles what the LaunchModel asks for: the current launch on `runner` (a newer request
    cancels an older one), then a Triton kernel's threads sweep on `sweep_runner`. Failures go to
    the model (one line) and to `log` (the compiler's whole output)."""

    def __init__(self, model: LaunchModel, runner: TaskRunner, sweep_runner: TaskRunner,
                 jobs: KernelJobs | None = None, log: Callable[[str], None] | None = None):
        self.model, self.runner, self.sweep_runner = model, runner, sweep_runner
        self.jobs = jobs or KernelJobs()
        self.log = log or (lambda _line: None)
        self._targets: dict[int, CompileTarget] = {}
        self._sweeps: dict[int, CompileTarget] = {}
        model.compile_wanted.connect(self.compile)
        model.sweep_wanted.connect(self.sweep)
        runner.finished.connect(self._on_compiled)
        sweep_runner.finished.connect(self._on_swept)

    def compile(self, target: CompileTarget) -> int:
        self.runner.cancel()  # the launch on screen is what counts
        job = self.runner.submit(compile_task(self.jobs, target), name="compile")
        self._targets[job] = target
        return job

    def sweep(self, target: CompileTarget) -> int:
        self.sweep_runner.cancel()
        job = self.sweep_runner.submit(sweep_compile_task(self.jobs, target), name="compile sweep")
        self._sweeps[job] = target
        return job

    def busy(self) -> bool:
        return self.runner.busy()

    def cancel(self) -> None:
        """Stop compiling (the compiler process is ended); the model says so."""
        self.runner.cancel()
        self.sweep_runner.cancel()

    def _on_compiled(self, outcome: TaskOutcome) -> None:
        target = self._targets.pop(outcome.job_id, None)
        if target is None:
            return
        result = outcome.result if outcome.ok else UserError(outcome.error)
        if outcome.cancelled:
            result = UserError("compiling was cancelled: the registers and shared memory shown "
                               "are not this launch's")
        elif not hasattr(result, "regs_per_thread") and target == self.model.target:
            self.log(f"Compiling {target.kernel} ({target.describe()}) failed: {result}\n"
                     f"{getattr(result, 'log', '') or str(result)}")
        self.model.set_compiled(target, result)

    def _on_swept(self, outcome: TaskOutcome) -> None:
        target = self._sweeps.pop(outcome.job_id, None)
        if target is not None:  # cancelled or failed: {} (the curve keeps the launch's registers)
            self.model.set_sweep(target, outcome.result if outcome.ok and outcome.result else {})
