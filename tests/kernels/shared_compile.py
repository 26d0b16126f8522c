"""Compiles that several test files ask for, done once per test run: the xdist workers share one
disk cache (tests/conftest.py), and a lock there makes a second worker wait for the first one's
batch and read it from disk instead of compiling the same configurations beside it."""

from __future__ import annotations

from kernels.offline_compile.compile import cache_folder, resources_many
from tests.run_once import one_worker_at_a_time


def resources_once(requests: list) -> list:
    """kernels.offline_compile.compile.resources_many, one worker at a time (the next then hits the disk
    cache): on two busy cores two workers compiling the same batch doubled its cost."""
    with one_worker_at_a_time(cache_folder().parent, "compile"):
        return resources_many(requests)
