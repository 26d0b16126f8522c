"""A script of benchmarks/ as a module, loaded once per test process: the tests that ask a fit
script what it fitted on or held out, or score with its functions."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@functools.cache
def bench_script(name: str):
    """benchmarks/NAME.py, executed as a module named NAME."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
