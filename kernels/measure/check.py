"""Correctness of every registry kernel on whatever runs here: `python main.py check`.

On a GPU at each kernel's check sizes (by default the article's 1, 128, 1024, 1,048,583); on the
CPU path the same sizes, capped
per kernel where the simulator would take minutes (``KernelSpec.cpu_max_elements``). Fresh random
inputs every time, the output poisoned with NaN, compared with the float64 reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from sim.inputs.errors import UserError

from kernels.measure.harness import (backend_status, bind, compare, first_run, make_arrays, reference_of,
                      result_of)
from kernels.declare.registry import all_kernels, get_kernel
from kernels.declare.spec import KernelSpec

LANE_BLOCKS = (8, 250, 256, 1024)  # the article's hello block, idle lanes, full warps, the maximum


@dataclass(frozen=True, slots=True)
class CheckResult:
    kernel: str
    backend: str
    elements: int  # threads per block for the lanes kernel, grid programs for the trace
    status: str  # "OK", "FAIL" or "SKIP"
    where: str  # "gpu", "interpreter", "simulator", "cpu" or "unavailable"
    detail: str = ""
    max_abs_err: float | None = None

    @property
    def ok(self) -> bool:
        return self.status != "FAIL"


def _elementwise(spec: KernelSpec, n: int, on_gpu: bool, where: str, gpu=None) -> CheckResult:
    if spec.reference is None:
        return CheckResult(spec.name, spec.backend, n, "SKIP", where,
                           "no reference declared: nothing to check against")
    try:
        inputs, out = make_arrays(spec, n, on_gpu)
        launch = bind(spec, inputs, out, n, None, gpu)
        first_run(spec, launch)
        acc = compare(result_of(launch, out), reference_of(spec, inputs), rtol=spec.rtol,
                      atol=spec.atol)
    except UserError as exc:
        return CheckResult(spec.name, spec.backend, n, "FAIL", where, str(exc))
    return CheckResult(spec.name, spec.backend, n, "OK" if acc.ok else "FAIL", where, acc.detail,
                       acc.max_abs_err)


def _lanes(spec: KernelSpec, threads: int, where: str) -> CheckResult:
    from kernels.bodies import reference
    from kernels.bodies.numba_kernels import warp_lanes

    got, _ = warp_lanes(threads)
    want = reference.warp_lanes(threads)
    ok = got.shape == want.shape and bool(np.array_equal(got, want))
    detail = "" if ok else f"lanes {got.tolist()} != {want.tolist()}"
    return CheckResult(spec.name, spec.backend, threads, "OK" if ok else "FAIL", where, detail)


def _trace(spec: KernelSpec, where: str) -> list[CheckResult]:
    if where != "gpu":
        return [CheckResult(spec.name, spec.backend, 0, "SKIP", where,
                            "needs a GPU: %smid and %globaltimer are read through inline PTX, "
                            "which the interpreter cannot run")]
    from kernels.tracing.trace import check_trace, record_trace

    trace = record_trace(grid=None, num_warps=4, spin_us=20.0)
    problems = check_trace(trace)
    return [CheckResult(spec.name, spec.backend, len(trace.block), "FAIL" if problems else "OK",
                        where, "; ".join(problems))]


def run_checks(kernel_names: Iterable[str] | None = None, sizes: Iterable[int] | None = None,
               on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    specs = [get_kernel(n) for n in kernel_names] if kernel_names else all_kernels()
    gpu = None
    if any(backend_status(s).is_gpu for s in specs):
        from kernels.launching.device import detect_device

        gpu, _ = detect_device()
    results: list[CheckResult] = []

    def emit(r: CheckResult) -> None:
        results.append(r)
        if on_result:
            on_result(r)

    for spec in specs:
        status = backend_status(spec)
        if not status.ok:
            emit(CheckResult(spec.name, spec.backend, 0, "SKIP", status.mode, status.reason))
            continue
        if spec.kind == "trace":
            for r in _trace(spec, status.mode):
                emit(r)
            continue
        if spec.kind == "lanes":
            for threads in LANE_BLOCKS:
                emit(_lanes(spec, threads, status.mode))
            continue
        for n in sizes or spec.check_sizes:
            if not status.is_gpu and n > spec.cpu_max_elements:
                n = spec.cpu_max_elements  # the simulator would take minutes; say so in the row
                if any(r.kernel == spec.name and r.elements == n for r in results):
                    continue
            emit(_elementwise(spec, n, status.is_gpu, status.mode, gpu))
    return results


def format_table(results: list[CheckResult]) -> str:
    rows = [("kernel", "backend", "size", "result", "on", "max |err|", "detail")]
    for r in results:
        err = "" if r.max_abs_err is None else f"{r.max_abs_err:.1e}"
        rows.append((r.kernel, r.backend, f"{r.elements:,}", r.status, r.where, err, r.detail))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row[:6], widths)) + "  " + row[6] for row in rows)
    return "\n".join(line.rstrip() for line in lines)
