"""`check` and `bench` with `--kernel-file`: the whole run in a kernel host (kernels/host/process.py), the
child process the window runs its kernel jobs in, never in the command's own process.

The host opens the files (kernels.declare.kernel_file, each function guarded by kernels.declare.user_code) under
the memory limit of kernels.declare.declarations.Limits, then checks or measures and sends back plain
records (CheckResult, BenchResult). The command prints what the host reports as it goes; the
host's own stdout and stderr are kept, not shown, unless it fails. A file that loops at import,
allocates past the limit, crashes or calls os._exit is one line and exit status 1; so is a run
that reports nothing for its limit (Limits: loading the libraries, the files' own code, the run).

    results = run_in_host(partial(check_job, files, names, sizes), on_progress=print_line)
"""

from __future__ import annotations

import os
import pickle
import queue
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial

from sim.inputs.errors import UserError

from kernels.declare.declarations import Limits
from kernels.declare.user_code import UserCodeError

LOADED = "libraries loaded"  # progress labels: the file's own code starts (Limits.open_s) ...
OPENED = "kernel files opened"  # ... and ends (the run's own limit, Limits.compile_s, follows)


def _address_space() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def memory_limit(extra_bytes: int):
    """At most `extra_bytes` more address space (RLIMIT_AS) while the block runs; the earlier
    limit afterwards. A CUDA process reserves far more address space than it uses, so the limit
    counts from what this process already holds."""
    try:
        import resource

        old = resource.getrlimit(resource.RLIMIT_AS)
        soft = _address_space() + extra_bytes
        if old[1] >= 0:
            soft = min(soft, old[1])
        resource.setrlimit(resource.RLIMIT_AS, (soft, old[1]))
    except (ImportError, OSError, ValueError):  # no /proc, no resource: no limit
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)


def open_files(paths, limits: Limits, ctx=None) -> list:
    """In the host: the kernels of each file ("FILE.py" or "FILE.py:NAME": that declaration
    only) (torch peers included), guarded, in its registry. `ctx`: told LOADED when the files'
    own code starts."""
    from kernels.launching.backends import available
    from kernels.declare.kernel_file import load_libraries, open_kernel_file
    from kernels.declare.registry import add_kernels

    available()  # torch, triton, numba and the CPU fallbacks, before the limit
    for path in paths:
        load_libraries(path)
    if ctx is not None:
        ctx.progress(0, 0, LOADED)
    found = []
    for path in paths:
        try:
            with memory_limit(limits.memory_bytes):
                specs = open_kernel_file(path)
        except MemoryError:
            raise UserCodeError(f"{path}: importing it raised MemoryError") from None
        except UserError as exc:
            hint = (f" (a kernel file may take {limits.memory_bytes >> 20:,} MB: "
                    "WARPSCOPE_USER_CODE_MEMORY_MB)" if "MemoryError" in str(exc) else "")
            raise UserCodeError(f"{exc}{hint}") from None
        add_kernels(specs)
        found += [s for s in specs if s not in found]
    return found


def check_job(files, names, sizes, limits: Limits, ctx):
    from kernels.measure.check import run_checks

    specs = open_files(files, limits, ctx)
    ctx.progress(0, 0, OPENED)
    names = list(names or []) + [s.name for s in specs]
    return run_checks(names, sizes, on_result=lambda r: ctx.progress(
        0, 0, f"  {r.status:4} {r.kernel} n={r.elements:,} ({r.where})"))


def bench_job(files, names, sizes, blocks, options: dict, limits: Limits, ctx):
    from kernels.measure.bench import sweep

    specs = open_files(files, limits, ctx)
    ctx.progress(0, 0, OPENED)
    kernels = list(dict.fromkeys(list(names) + [s.name for s in specs]))
    return sweep(kernels, sizes, blocks, on_progress=ctx.progress, **options)


def run_in_host(job: Callable, on_progress: Callable[[int, int, str], None] | None = None,
                limits: Limits | None = None, files=()):
    """`job(ctx)` in a fresh kernel host; its result, or one UserError line (UserCodeError, status
    1, when the user's code failed or the host ended, hung or blew its memory)."""
    from kernels.host.process import HostProcess, TaskOutcome

    limits = limits or Limits.from_env()
    inbox: queue.Queue = queue.Queue()
    host = HostProcess(inbox.put, lambda why: inbox.put(("exit", why)), echo_stderr=False)
    phase = "loading"
    what = ", ".join(files) or "the kernel files"
    waits = {"loading": (limits.libraries_s, f"while loading torch, triton or numba for {what}"),
             "importing": (limits.open_s, f"while importing {what}"),
             "running": (limits.compile_s, f"while running {what}")}
    try:
        host.send("run", 1, "kernel files", pickle.dumps(job))
        while True:
            wait, doing = waits[phase]
            try:
                msg = inbox.get(timeout=wait)
            except queue.Empty:
                raise UserCodeError(f"no answer {doing} within {wait:g} s (a loop, or waiting "
                                    "on something? WARPSCOPE_USER_CODE_TIMEOUT_S); its process "
                                    "was stopped") from None
            if msg[0] == "progress":
                _, _, done, total, label = msg
                if label in (LOADED, OPENED):
                    phase = "importing" if label == LOADED else "running"
                elif on_progress is not None:
                    on_progress(done, total, label)
            elif msg[0] == "done":
                outcome: TaskOutcome = msg[1]
                if outcome.ok:
                    return outcome.result
                bad_input = getattr(outcome, "exit_status", 1) == 2  # else the file or the run failed
                raise (UserError if bad_input else UserCodeError)(outcome.error)
            elif msg[0] == "exit":
                doing = "running" if phase == "running" else "importing"
                raise UserCodeError(f"the process {doing} {what} ended ({msg[1]})")
            elif msg[0] == "undecodable":
                raise UserCodeError(f"the kernel host sent back what this process cannot read "
                                    f"({msg[1]})")
    finally:
        host.kill()


def check_in_host(files, names, sizes, on_progress=None):
    limits = Limits.from_env()
    return run_in_host(partial(check_job, tuple(files), names, sizes, limits), on_progress,
                       limits, files)


def bench_in_host(files, names, sizes, blocks, options: dict, on_progress=None):
    limits = Limits.from_env()
    return run_in_host(partial(bench_job, tuple(files), tuple(names), sizes, blocks, options,
                               limits), on_progress, limits, files)
