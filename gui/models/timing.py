"""One launch timed several ways (kernels.measure.timing_methods), and which traps are shown beside the
honest timing. No Qt here.

The records come from a latency run's `methods` (the H200's is checked in) or from a live run
(`timing_task`, in the window's worker thread). Each toggle lays one trap beside the honest
timing (device events with the L2 flushed): the curves and what each really measures are the
records' own words (kernels.measure.timing_methods.METHODS).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from psygnal import Signal

HONEST = "events_flushed"


@dataclass(frozen=True, slots=True)
class Toggle:
    key: str
    title: str  # the checkbox
    methods: tuple[str, ...]  # the curves it shows


TOGGLES = (
    Toggle("l2", "L2 not flushed", ("events_no_flush",)),
    Toggle("clock", "host timer, no sync", ("host_launch_returned",)),
    Toggle("launches", "lone vs back-to-back", ("events_lone_launch", "events_back_to_back")),
)
LIVE_SIZES = (2**16, 2**20, 2**24, 2**26)
LIVE_KERNELS = ("add_triton", "add_torch", "add_numba_naive")


@dataclass(frozen=True)
class MethodSeries:
    kernel: str
    method: str
    label: str
    measures: str
    elements: np.ndarray
    gbps: np.ndarray
    gbps_p20: np.ndarray
    gbps_p80: np.ndarray
    is_gpu_timing: bool
    note: str  # why points are missing or not GPU timings ("" for GPU timings)


class TimingModel:
    """Signals: `changed()` when the records or the toggles changed."""

    changed = Signal()

    def __init__(self) -> None:
        self._records: tuple = ()
        self._source = ""
        self._kernel = ""
        self._on = {t.key: False for t in TOGGLES}

    # -- reading ---------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        return self._source

    @property
    def kernel(self) -> str:
        return self._kernel

    def kernels(self) -> list[str]:
        return list(dict.fromkeys(r.kernel for r in self._records))

    def is_on(self, key: str) -> bool:
        return self._on[key]

    def shown_methods(self) -> list[str]:
        out = [HONEST]
        for t in TOGGLES:
            if self._on[t.key]:
                out += [m for m in t.methods if m not in out]
        return out

    def series(self) -> list[MethodSeries]:
        """The shown methods' curves for the chosen kernel, GB/s against size."""
        out = []
        for method in self.shown_methods():
            rows = sorted((r for r in self._records
                           if r.kernel == self._kernel and r.method == method),
                          key=lambda r: r.elements)
            if not rows:
                continue
            timed = [r for r in rows if r.median_us]
            x = np.array([r.elements for r in timed], dtype=float)
            gbps = np.array([r.bandwidth_gbps for r in timed], dtype=float)
            moved = gbps * np.array([r.median_us for r in timed])  # GB/s x us = kB
            lo = moved / np.array([r.p80_us for r in timed]) if timed else gbps
            hi = moved / np.array([r.p20_us for r in timed]) if timed else gbps
            notes = sorted({r.note for r in rows if r.note})
            out.append(MethodSeries(self._kernel, method, rows[0].label, rows[0].measures, x, gbps,
                                    lo, hi, all(r.is_gpu_timing for r in timed) and bool(timed),
                                    "; ".join(notes)))
        return out

    def export_rows(self) -> tuple[list[str], list[list]]:
        header = ["kernel", "method", "label", "elements", "median_us", "p20_us", "p80_us",
                  "bandwidth_gbps", "is_gpu_timing", "note", "measures"]
        rows = [[r.kernel, r.method, r.label, r.elements, r.median_us, r.p20_us, r.p80_us,
                 r.bandwidth_gbps, r.is_gpu_timing, r.note, r.measures]
                for r in self._records if r.kernel == self._kernel
                and r.method in self.shown_methods()]
        return header, rows

    # -- changing --------------------------------------------------------------------------------
    def set_records(self, records, source: str) -> None:
        self._records, self._source = tuple(records), source
        kernels = self.kernels()
        if self._kernel not in kernels:
            self._kernel = kernels[0] if kernels else ""
        self.changed.emit()

    def set_kernel(self, kernel: str) -> None:
        if kernel != self._kernel and kernel in self.kernels():
            self._kernel = kernel
            self.changed.emit()

    def set_toggle(self, key: str, on: bool) -> None:
        if self._on[key] != bool(on):
            self._on[key] = bool(on)
            self.changed.emit()


def timing_task(kernels=LIVE_KERNELS, sizes=LIVE_SIZES):
    """A job for the window's kernel host (a partial of a module-level function, so it pickles):
    every method for each kernel and size on that machine (kernels.measure.timing_methods; without a GPU
    the device-event methods say why they are empty)."""
    return partial(timing_job, tuple(kernels), tuple(sizes))


def timing_job(kernels, sizes, ctx):
    """Runs in the kernel host. Returns (records as sim.traces.latency_data.MethodRow, plain records the
    window can read without importing any GPU library; kernels that cannot run here, each with
    its reason)."""
    from kernels.measure.timing_methods import time_kernel_methods
    from sim.inputs.errors import UserError
    from sim.traces.latency_data import MethodRow

    records, skipped = [], []
    total = len(kernels) * len(sizes)
    for i, kernel in enumerate(kernels):
        for j, n in enumerate(sizes):
            if ctx.cancelled():
                return records, skipped
            ctx.progress(i * len(sizes) + j, total, f"{kernel} at {n:,}")
            try:
                found = time_kernel_methods(kernel, n)
            except UserError as exc:
                skipped.append(f"{kernel}: {exc}")
                break
            records += [MethodRow(r.kernel, r.elements, r.method, r.label, r.measures, r.median_us,
                                  r.p20_us, r.p80_us, r.bandwidth_gbps, r.is_gpu_timing, r.note)
                        for r in found]
    ctx.progress(total, total, "done")
    return records, skipped
