"""The window's background jobs: the live panel's sweeps, results files, correctness run and
experiments; opening a user's kernel file; compiling the selected kernel.

Each job is a plain module-level function whose last argument is a `TaskContext`; the window binds
the others with `functools.partial`, so a job pickles by import path and runs in the kernel host
process (gui.adapter.HostRunner, kernels.host.process) just as it runs in a thread (gui.adapter.TaskRunner).
The functions a job calls come from `BandwidthJobs` / `KernelJobs`, injectable for tests; the real
ones import `kernels` only when they run. This module imports no Qt (the host imports it to run
its jobs). `BenchJobs` submits the bench model's jobs to a runner and hands progress and outcomes
to the BenchModel; `KernelFileJobs` opens kernel files for the KernelFilesModel; `CompileJobs`
answers the LaunchModel's compile requests (the launch, then a Triton kernel's threads sweep) in
a host of their own, so a long sweep in the kernel host never delays them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from typing import TYPE_CHECKING, Any

from gui.models.bench import BenchModel, SweepRequest
from gui.models.compiled import MAX_REGISTERS, CompileFailed, CompileTarget
from gui.models.kernel_files import KernelFilesModel, OpenedFile
from gui.models.launch import LaunchModel
from sim.inputs.errors import UserError

if TYPE_CHECKING:
    from kernels.host.process import TaskContext, TaskOutcome

EXPERIMENTS = ("count_kernels", "launch_vs_finish", "square_host_steps")


class Cancelled(Exception):
    """Raised inside a job when the user pressed Cancel."""


# -- the real work (imports kernels, and with it torch/triton/numba, only where it runs) -----------

def _sweep(*a, **k):
    from kernels.measure.bench import sweep

    return sweep(*a, **k)


def _load(path):
    from kernels.measure.results import load_results

    return load_results(path)


def _checks(*a, **k):
    from kernels.measure.check import run_checks

    return run_checks(*a, **k)


def run_experiment(name: str):
    """One of the article's experiments (kernels.measure.experiments), on the calling thread: in the
    host that is its main thread, as on the command line."""
    from kernels.measure.experiments import EXPERIMENTS as RUN

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


# -- kernel files and compiles ---------------------------------------------------------------------

@dataclass(frozen=True)
class KernelRef:
    """A kernel as another process finds it: a built-in by name, or one of a file the user opened
    (with the digest of the version the window shows)."""

    name: str
    file: str | None = None
    digest: str | None = None


def _compile(ref: KernelRef, n, block, cc, should_cancel):
    """In the compiler host: the real compilers, never the interpreter or the simulator."""
    import os

    os.environ["TRITON_INTERPRET"] = "0"  # before triton is imported in this process
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    from kernels.offline_compile.resources import kernel_by_ref, launch_resources

    block = dict(block)
    cap = block.pop(MAX_REGISTERS, None)  # a compile option, not a block parameter
    return launch_resources(kernel_by_ref(ref.name, ref.file, ref.digest), n, block, cc,
                            should_cancel=should_cancel, max_registers=cap)


def _compile_many(ref: KernelRef, n, blocks, cc, should_cancel):
    import os

    os.environ["TRITON_INTERPRET"] = "0"
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    from kernels.offline_compile.resources import kernel_by_ref, launch_resources_many

    blocks = [dict(b) for b in blocks]
    caps = {b.pop(MAX_REGISTERS, None) for b in blocks}  # one target's sweep: one cap
    return launch_resources_many(kernel_by_ref(ref.name, ref.file, ref.digest), n, blocks, cc,
                                 should_cancel=should_cancel, max_registers=caps.pop())


def _open_file(path: str, should_cancel=None) -> OpenedFile:
    """In a thread of the window: the file's declarations, read in a process of the file's own
    (kernels.declare.declarations: the window's process never imports triton or numba, and the file runs
    under a time and a memory limit); the window evaluates their grid rules there. Each launchable
    kernel's grid rule is tried once here, off the GUI thread, so a rule that loops fails the
    open (one line) instead of stalling the window at its first call. Nothing is compiled or
    launched."""
    import os

    from gui.models.kernel_rules import answered_spec
    from kernels.declare.declarations import DeclarationProcess
    from kernels.declare.kernel_file import MAX_FILE_BYTES, file_digest, split_path
    from sim.inputs.files import read_user_bytes

    file = os.path.abspath(split_path(path)[0])
    digest = file_digest(file)  # also: one line if the file is missing or too big
    process = DeclarationProcess(file)
    try:
        specs = process.open(should_cancel)
        for spec in specs:
            if spec.launchable:
                _first_launch(process, spec, should_cancel)
        specs = [answered_spec(spec) for spec in specs]  # the window asks them off its GUI thread
        text = read_user_bytes(file, "kernel file", MAX_FILE_BYTES).decode("utf-8", errors="replace")
        return OpenedFile(file, text, tuple(specs), digest, process)
    except BaseException:
        process.close()
        raise


PROBE_ELEMENTS = 1 << 20  # any size will do: a grid rule that loops, loops at this one too


def _first_launch(process, spec, should_cancel) -> None:
    from kernels.declare.user_code import UserCodeError

    try:
        process.launch(spec.name, PROBE_ELEMENTS, None, None, 132, None,
                       timeout_s=min(process.limits.launch_s, 5 * process.limits.call_s),
                       should_cancel=should_cancel)
    except UserCodeError:
        if not process.alive():  # it hung or died: the open fails with that line
            raise
    except UserError:  # a rule that needs another size: shown when the window asks for it
        pass


@dataclass
class KernelJobs:
    """What opening a kernel file and compiling call. Anything not given uses the kernels layer:
    open_file(path) -> OpenedFile (a thread of the window); compile(ref, n, block, cc,
    should_cancel) -> LaunchResources, raising CompileError; compile_many(ref, n, blocks, cc,
    should_cancel) -> [LaunchResources or CompileError] (the compiler host: picklable)."""

    open_file: Callable[[str], OpenedFile] | None = None
    compile: Callable[..., Any] | None = None
    compile_many: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) is None:
                setattr(self, f.name, _KERNEL_REAL[f.name])


_KERNEL_REAL = {"open_file": _open_file, "compile": _compile, "compile_many": _compile_many}
SWEEP_WARPS = (1, 2, 4, 8, 16, 32)  # Triton's num_warps choices (kernels.declare.spec.TRITON_WARPS)


def _failed(exc: BaseException) -> CompileFailed:
    text = str(exc).strip().splitlines()
    return CompileFailed(text[0] if text else type(exc).__name__, getattr(exc, "log", "") or "",
                         type(exc).__name__ == "CompileCancelled")


def open_job(open_file, path: str, ctx: TaskContext):
    ctx.progress(0, 1, f"opening {path}")
    return open_file(path, ctx.cancelled)


def compile_job(compile, ref: KernelRef, n: int, block: dict, cc: tuple, ctx: TaskContext):
    """The resources of one launch; a compile error (or a cancel) is the result, a plain record
    with the compiler's whole output, not a crash."""
    ctx.progress(0, 1, f"compiling {ref.name}")
    try:
        return compile(ref, n, block, cc, ctx.cancelled)
    except UserError as exc:
        return _failed(exc)


def sweep_compile_job(compile_many, ref: KernelRef, n: int, block: dict, cc: tuple,
                      ctx: TaskContext):
    """num_warps -> resources (or CompileFailed) for a Triton kernel's threads sweep."""
    blocks = [{**block, "num_warps": w} for w in SWEEP_WARPS]
    ctx.progress(0, len(blocks), f"compiling {ref.name} at {len(blocks)} warp counts")
    try:
        found = compile_many(ref, n, blocks, cc, ctx.cancelled)
    except UserError as exc:
        return _failed(exc)
    return {w: r if hasattr(r, "regs_per_thread") else _failed(r)
            for w, r in zip(SWEEP_WARPS, found)}


def with_kernel_files(files: tuple, work, *args, **kwargs):
    """`work` (a sweep, the correctness run) in the kernel host, after the kernel files the user
    opened are opened there too: the host may have started after they were, or again."""
    from kernels.declare.kernel_file import open_once

    for path, digest in files:
        open_once(path, digest)
    return work(*args, **kwargs)


def ref_of(spec, files: KernelFilesModel) -> KernelRef:
    opened = files.files.get(spec.origin)
    if opened is None:
        return KernelRef(spec.name)
    return KernelRef(spec.name, opened.path, opened.digest)


class KernelFileJobs:
    """Opens kernel files for the KernelFilesModel, each on a runner of its own (`make_runner()`,
    a thread of the window), so a file that hangs delays no other and none is dropped; a path
    already opening is not opened twice."""

    def __init__(self, files: KernelFilesModel, make_runner, jobs: KernelJobs | None = None):
        self.files, self.make_runner = files, make_runner
        self.jobs = jobs or KernelJobs()
        self.opening: dict[str, Any] = {}  # path -> its runner

    def open(self, path: str) -> bool:
        """Start opening `path`; False if it is being opened already."""
        if path in self.opening:
            return False
        runner = self.make_runner()
        self.opening[path] = runner
        runner.finished.connect(partial(self._on_finished, path, runner))
        runner.submit(partial(open_job, self.jobs.open_file, path), name="open kernel file")
        return True

    def runners(self) -> list:
        return list(self.opening.values())

    def cancel(self, path: str) -> bool:
        """Stop opening `path` (its file's process is killed); False if it is not opening."""
        runner = self.opening.pop(path, None)
        if runner is None:
            return False
        runner.shutdown()
        runner.deleteLater()
        return True

    def shutdown(self) -> None:
        for runner in list(self.opening.values()):
            runner.shutdown()  # the open is cancelled: its file's process is killed
        self.opening.clear()

    def _on_finished(self, path: str, runner, outcome: TaskOutcome) -> None:
        if self.opening.get(path) is runner:
            del self.opening[path]
        runner.shutdown()
        runner.deleteLater()
        if outcome.ok:
            self.files.add(outcome.result)
        elif not outcome.cancelled:
            self.files.fail(path, outcome.error)


COMPILE_TIMEOUT_S = 600  # one configuration; a huge tile can keep LLVM busy for minutes


class CompileJobs:
    """Compiles what the LaunchModel asks for on `runner` (the compiler host): the launch (a newer
    request cancels older ones), then a Triton kernel's threads sweep. Failures go to the model
    (one line) and to `log` (the compiler's whole output)."""

    def __init__(self, model: LaunchModel, files: KernelFilesModel, runner,
                 jobs: KernelJobs | None = None, log: Callable[[str], None] | None = None):
        self.model, self.files, self.runner = model, files, runner
        self.jobs = jobs or KernelJobs()
        self.log = log or (lambda _line: None)
        self._targets: dict[int, CompileTarget] = {}
        self._sweeps: dict[int, CompileTarget] = {}
        model.compile_wanted.connect(self.compile)
        model.sweep_wanted.connect(self.sweep)
        runner.finished.connect(self._on_finished)

    def _submit(self, fn, target: CompileTarget, name: str) -> int:
        task = partial(fn, ref_of(target.spec, self.files), target.elements, target.block,
                       tuple(target.cc))
        return self.runner.submit(task, name=name, timeout_s=COMPILE_TIMEOUT_S)

    def compile(self, target: CompileTarget) -> int:
        self.cancel()  # the launch on screen is what counts
        job = self._submit(partial(compile_job, self.jobs.compile), target, "compile")
        self._targets[job] = target
        return job

    def sweep(self, target: CompileTarget) -> int:
        for job in list(self._sweeps):
            self.runner.cancel(job)
        job = self._submit(partial(sweep_compile_job, self.jobs.compile_many), target,
                           "compile sweep")
        self._sweeps[job] = target
        return job

    def busy(self) -> bool:
        return bool(self._targets or self._sweeps)

    def cancel(self) -> None:
        """Stop compiling; the model hears it from the cancelled jobs."""
        for job in list(self._targets) + list(self._sweeps):
            self.runner.cancel(job)

    def _on_finished(self, outcome: TaskOutcome) -> None:
        target = self._targets.pop(outcome.job_id, None)
        if target is not None:
            result = outcome.result if outcome.ok else CompileFailed(outcome.error)
            if outcome.cancelled or getattr(result, "cancelled", False):
                result = CompileFailed("compiling was cancelled: the registers and shared "
                                       "memory shown are not this launch's", cancelled=True)
            elif not hasattr(result, "regs_per_thread") and target == self.model.target:
                self.log(f"Compiling {target.kernel} ({target.describe()}) failed: {result}\n"
                         f"{getattr(result, 'log', '') or result}")
            self.model.set_compiled(target, result)
            return
        target = self._sweeps.pop(outcome.job_id, None)
        if target is not None:  # cancelled or failed: {} (the curve keeps the launch's registers)
            ok = outcome.ok and isinstance(outcome.result, dict)
            self.model.set_sweep(target, outcome.result if ok else {})
