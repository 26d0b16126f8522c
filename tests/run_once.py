"""What several xdist workers need, made by one of them per test run. The workers share the run's
folder (tests/conftest.py, WARPSCOPE_TEST_RUN_CACHE); a lock there makes a second worker wait for
the first and read its result instead of computing the same thing beside it, which on two busy
cores doubled the cost."""

from __future__ import annotations

import contextlib
import os
import pickle
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock, two workers may both compute (still right)
    fcntl = None


@contextlib.contextmanager
def one_worker_at_a_time(folder: Path, name: str):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.lock", "a+b") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def once(name: str, make):
    """`make()`, computed by the first worker that asks and read back from disk by the others."""
    folder = Path(os.environ["WARPSCOPE_TEST_RUN_CACHE"]) / "once"
    path = folder / f"{name}.pickle"
    with one_worker_at_a_time(folder, name):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = make()
        path.write_bytes(pickle.dumps(value))
        return value
