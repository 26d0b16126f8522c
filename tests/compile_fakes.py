"""Stand-ins for the compilers in the window's tests. Module-level functions (bound with
functools.partial), so they pickle by import path and run in the compiler host like the real
ones (gui.jobs.KernelJobs)."""

from __future__ import annotations

import time

from kernels.offline_compile.compile import CompileCancelled
from kernels.offline_compile.resources import LaunchResources


def resources(ref, n, block, cc, regs: int, stack: int = 0, smem: int = 16) -> LaunchResources:
    return LaunchResources(ref.name, tuple(cc), dict(block), n, regs, smem, stack,
                           "triton 3.7.1", "12.8.93")


def fixed(regs: int, stack: int, ref, n, block, cc, should_cancel):
    """Every launch compiles to `regs` registers and `stack` bytes of spills."""
    return resources(ref, n, block, cc, regs, stack)


def by_warps(table: dict, ref, n, blocks, cc, should_cancel):
    """A threads sweep: the registers `table` gives each num_warps."""
    return [resources(ref, n, b, cc, table[b["num_warps"]]) for b in blocks]


def no_sweep(ref, n, blocks, cc, should_cancel):
    return []


def until_cancelled(ref, n, block, cc, should_cancel):
    """A compile that only ends when it is cancelled."""
    end = time.monotonic() + 60
    while not should_cancel() and time.monotonic() < end:
        time.sleep(0.01)
    raise CompileCancelled("compiling was cancelled")
