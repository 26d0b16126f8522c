"""Compiles that several test files ask for, done once per test run: the xdist workers share one
disk cache (tests/conftest.py), and a lock there makes a second worker wait for the first one's
batch and read it from disk instead of compiling the same configurations beside it."""

from __future__ import annotations

import contextlib

from kernels.offline_compile.compile import cache_folder, resources_many

try:
    import fcntl
except ImportError:  # Windows: no lock, the workers may compile a batch twice (still right)
    fcntl = None


@contextlib.contextmanager
def _one_worker_at_a_time():
    folder = cache_folder().parent
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "compile.lock", "a+b") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def resources_once(requests: list) -> list:
    """kernels.offline_compile.compile.resources_many, one worker at a time (the next then hits the disk
    cache): on two busy cores two workers compiling the same batch doubled its cost."""
    with _one_worker_at_a_time():
        return resources_many(requests)
