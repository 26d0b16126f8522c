"""Live measurements: what runs here, the results being shown, which kernels they draw, and what
the block scheduler predicts for each measured point.

`BenchModel` holds the results of sweeps, results files, correctness runs and the article's
experiments, and the state of the job running them; the views (gui/widgets/qt_sweep.py,
qt_experiments.py, qt_bandwidth.py) only draw what it says. Jobs run in a worker thread
(gui/jobs.py); their outcomes come back through `finish`.
"""

from __future__ import annotations

import html
from collections import deque
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

import numpy as np
from psygnal import Signal

from gui.models.kernel_rules import RulesPending
from sim.rules.devices import GpuSpec, measured_on
from sim.inputs.errors import UserError
from sim.model.launch_model import LaunchPrediction, predict_measured
from sim.model.throughput import MatmulPrediction, is_tiled_matmul, predict_matmul, tensor_tflops
from sim.inputs.units import parse_count_list

DEFAULT_TICKED = ("add_triton", "add_torch", "copy_torch")
DEFAULT_SHOWN = ("add_triton", "add_torch", "copy_torch", "add_numba_naive", "add_numba")
MAX_SHOWN = 6
LOG_LINES = 2000  # the log kept (and shown: gui.widgets.qt_bandwidth)


def parse_sizes(text: str) -> list[int]:
    """Element counts as sim.inputs.units reads them: "2^16..2^28 x4", "1e6, 2^20, 1048583"."""
    return parse_count_list(text, "sizes")


def parse_blocks(text: str) -> list[int] | None:
    text = text.strip()
    if not text or text.lower() == "default":
        return None
    return parse_count_list(text, "block sizes", upper=None)


@dataclass(frozen=True, slots=True)
class SweepRequest:
    kernels: tuple[str, ...]
    sizes: tuple[int, ...]
    blocks: tuple[int, ...] | None
    reps: int
    flush_l2: bool
    allow_cpu: bool


@dataclass(frozen=True)
class Series:
    """One kernel's curve on one plot: median with its p20-p80 band, the prediction, the points."""

    kernel: str
    label: str  # the legend's name
    x: np.ndarray
    median: np.ndarray
    p20: np.ndarray
    p80: np.ndarray
    predicted: np.ndarray  # in the plot's metric (GB/s or TFLOP/s); NaN where none is made
    tips: tuple[str, ...]
    points: tuple = field(repr=False)  # the Measurements drawn


EXPORT_HEADER = ["kernel", "backend", "elements", "block_size", "median_ms", "p20_ms", "p80_ms",
                 "bandwidth_gbps", "bandwidth_p20_gbps", "bandwidth_p80_gbps", "is_gpu_timing",
                 "grid_blocks", "waves", "occupancy", "limited_by", "predicted_gbps", "method",
                 "dims", "tflops", "predicted_tflops"]
GBPS, TFLOPS = "GB/s", "TFLOP/s"


@dataclass(frozen=True)
class Ceiling:
    """A horizontal reference line: what the measured kernels can hope for."""

    value: float
    label: str
    kind: str  # "measured" (copy, cuBLAS in the same run) or "spec" (the datasheet)


def result_gpu(result) -> GpuSpec | None:
    """The GPU a results file was measured on (sim.rules.devices.measured_on)."""
    return measured_on(result.device)


def point_tip(m, predicted: LaunchPrediction | MatmulPrediction | None = None) -> str:
    """Tooltip for one measurement: its launch as sim predicts it, and how it was timed."""
    size = f"M, N, K = {m.dims}" if getattr(m, "dims", None) else f"{m.elements:,} elements"
    lines = [f"{m.kernel} [{m.backend}]", f"{size} · block {m.block_size or 'fixed'}"]
    if getattr(m, "flops", None):
        lo, hi = (m.flops / (ms * 1e-3) / 1e12 for ms in (m.p80_ms, m.p20_ms))
        lines.append(f"{m.tflops:,.1f} TFLOP/s (p20–p80 {lo:,.1f}–{hi:,.1f}) · median "
                     f"{m.median_ms * 1e3:,.2f} µs · {m.bandwidth_gbps:,.0f} GB/s")
    else:
        lines.append(f"{m.bandwidth_gbps:,.1f} GB/s (p20–p80 {m.bandwidth_p20_gbps:,.1f}–"
                     f"{m.bandwidth_p80_gbps:,.1f}) · median {m.median_ms * 1e3:,.2f} µs")
    grid = getattr(m, "grid_blocks", None)
    if grid is not None:
        lines.append(f"grid {grid:,} blocks × {m.threads_per_block or '?'} threads")
    waves, occ = getattr(m, "waves", None), getattr(m, "occupancy", None)
    if waves is not None or occ is not None:
        lim = ", ".join(getattr(m, "limited_by", ()) or ()) or "?"
        lines.append(f"waves {waves:,.2f} · occupancy {occ:.0%} · limited by {lim}"
                     if waves is not None and occ is not None else f"limited by {lim}")
    if m.regs_per_thread is not None:
        lines.append(f"{m.regs_per_thread} registers/thread · {m.smem_per_block_bytes or 0:,} B shared")
    if isinstance(predicted, MatmulPrediction):
        lines.append(f"simulator predicts {predicted.tflops:,.0f} TFLOP/s ({predicted.tflops / m.tflops:.0%} "
                     f"of measured; {predicted.tiles:,} tiles = {predicted.waves:.2f} waves, compute-bound)")
    elif predicted is not None:
        lines.append(f"simulator predicts {predicted.bandwidth_gbps:,.0f} GB/s "
                     f"({predicted.bandwidth_gbps / m.bandwidth_gbps:.0%} of measured; "
                     f"{predicted.bound}-bound)")
    lines.append(("GPU timing: " if m.is_gpu_timing else "NOT a GPU timing: ") + m.method)
    return "\n".join(lines)


class BenchModel:
    """Signals: `kernels_changed()`, `result_changed(result)`, `shown_changed()`, `availability_changed()`,
    `checks_changed(list, cancelled)`, `experiments_changed(dict)`, `busy_changed(kind or "")`,
    `progress_changed(done, total, label)`, `log(line)`, `message(text)`."""

    kernels_changed = Signal()
    result_changed = Signal(object)
    shown_changed = Signal()
    availability_changed = Signal()
    checks_changed = Signal(list, bool)
    experiments_changed = Signal(dict)
    busy_changed = Signal(str)
    progress_changed = Signal(int, int, str)
    log = Signal(str)
    message = Signal(str)

    def __init__(self) -> None:
        self.kernels: list = []  # benchable registry kernels
        self._ticked: tuple[str, ...] = ()
        self.available: dict | None = None
        self.load_error = "Checking which backends can run here…"
        self.result = None
        self.result_spec: GpuSpec | None = None
        self._predictions: dict = {}
        self.checks: list = []
        self.experiments: dict[str, Any] = {}
        self.busy = ""
        self.progress = (0, 1, "idle")
        # every line logged, for a log view made after some were (gui.panels.LaterPanels)
        self.log_lines: deque[str] = deque(maxlen=LOG_LINES)
        self.log.connect(self._keep_line)

    def _keep_line(self, line: str) -> None:
        self.log_lines.append(line)

    # -- what can run here ----------------------------------------------------------------------
    def set_kernels(self, kernels) -> None:
        self.kernels = [k for k in kernels if getattr(k, "benchable", True)]
        names = [k.name for k in self.kernels]
        self._ticked = tuple(n for n in DEFAULT_TICKED if n in names)
        self.kernels_changed.emit()
        self.shown_changed.emit()

    def set_availability(self, available: dict | None, error: str = "") -> None:
        """From kernels.available() (None: kernels did not load, and why)."""
        self.available, self.load_error = available, error
        self.availability_changed.emit()

    @property
    def gpu_ok(self) -> bool:
        return bool(self.available) and any(a.ok and a.is_gpu for a in self.available.values())

    def banner(self) -> tuple[str, str]:
        """(rich text, tooltip) for the panel's banner; ("", "") when there is nothing to warn of.
        It describes the curves actually drawn, so it changes with every result."""
        if self.gpu_ok:
            return "", ""
        shown = self.result is not None and self.result.measurements
        gpu_curves = shown and any(m.is_gpu_timing for m in self.result.measurements)
        if self.available is None:
            why = self.load_error or "kernels did not load"
            head = (why if why.endswith("…") else
                    f"Live kernels are unavailable: {html.escape(why)}. Everything simulated still works")
        else:
            head = "<b>No GPU here</b>: a sweep run here is not a GPU timing"
        if gpu_curves:
            dev = self.result.device.get("name", "") if isinstance(self.result.device, dict) else ""
            created = html.escape(str(self.result.created)[:10])
            tail = (f". The curves below <b>are</b> GPU timings, measured on "
                    f"{html.escape(dev or 'a GPU')} ({created}), from a results file.")
        elif shown:
            tail = ". The curves below are the <b>CPU path: NOT GPU timings</b>."
        else:
            tail = (". Open a results file from <code>python main.py bench</code>, tick <i>CPU "
                    "path</i>, or run the correctness checks.")
        tip = "\n".join(f"{n}: {a.reason} ({getattr(a, 'mode', '')})"
                        for n, a in (self.available or {}).items())
        return head + tail, tip

    # -- which kernels -------------------------------------------------------------------------
    @property
    def ticked(self) -> tuple[str, ...]:
        return self._ticked

    def set_ticked(self, names) -> None:
        """The kernels a sweep measures; among a result's kernels, also the curves drawn."""
        names = tuple(names)
        if names != self._ticked:
            self._ticked = names
            self.shown_changed.emit()

    def shown_kernels(self) -> list[str]:
        """Kernels of the result that the plots show: the ticked ones; else the usual comparison
        (Triton and Numba add against torch.add and the copy ceiling); else the first few."""
        if self.result is None:
            return []
        present = list(dict.fromkeys(m.kernel for m in self.result.measurements))
        ticked = [k for k in self._ticked if k in present]
        usual = [k for k in DEFAULT_SHOWN if k in present]
        return ticked or usual or present[:MAX_SHOWN]

    # -- results -------------------------------------------------------------------------------
    def set_result(self, result) -> None:
        self.result, self._predictions = result, {}
        self.result_spec = result_gpu(result)  # the GPU the predictions are made for
        ms = list(result.measurements)
        if not ms:
            self.log.emit("The results contain no measurements.")
        else:
            dev = result.device.get("name", "?") if isinstance(result.device, dict) else str(result.device)
            gpu = any(m.is_gpu_timing for m in ms)
            kernels = len(set(m.kernel for m in ms))
            self.log.emit(f"{len(ms)} measurements of {kernels} kernels on {dev}, {result.created}"
                          + (" — GPU timings" if gpu else " — NOT GPU timings (CPU path)")
                          + f"; method: {ms[0].method}. Tick kernels under 'Kernels' to choose the curves.")
        self.result_changed.emit(result)

    def measured_us(self, gpu: GpuSpec, kernel: str, elements: int, threads_per_block: int) -> float | None:
        """The results' GPU timing of this launch (the median of the medians where it was measured
        more than once), None where the results hold none: another GPU, kernel, size or block."""
        from sim.rules.physics import same_gpu

        if self.result is None or self.result_spec is None or not same_gpu(self.result_spec.name, gpu):
            return None
        found = sorted(m.median_ms * 1e3 for m in self.result.measurements
                       if m.is_gpu_timing and m.kernel == kernel and m.elements == elements
                       and m.threads_per_block == threads_per_block)
        return float(np.median(found)) if found else None

    @property
    def gpu_timings_shown(self) -> bool:
        return self.result is not None and any(m.is_gpu_timing for m in self.result.measurements)

    def measured_resources(self) -> dict[str, tuple[int, int]]:
        """Registers and shared memory of each compiled kernel in the result."""
        found: dict[str, tuple[int, int]] = {}
        for m in (self.result.measurements if self.result is not None else ()):
            if m.regs_per_thread is not None and m.kernel not in found:
                found[m.kernel] = (int(m.regs_per_thread), int(m.smem_per_block_bytes or 0))
        return found

    def metric(self) -> str:
        """TFLOP/s when every kernel drawn is compute-bound (declares its FLOPs: the matmuls and
        their torch peers), else GB/s."""
        shown = set(self.shown_kernels())
        ms = [m for m in (self.result.measurements if self.result else ()) if m.kernel in shown]
        return TFLOPS if ms and all(getattr(m, "flops", None) for m in ms) else GBPS

    def value(self, m, which: str = "median") -> float:
        """A measurement in the plot's metric: its median, or the p20 / p80 of the metric (from
        the p80 / p20 time)."""
        if self.metric() == TFLOPS:
            ms = {"median": m.median_ms, "p20": m.p80_ms, "p80": m.p20_ms}[which]
            return m.flops / (ms * 1e-3) / 1e12
        return {"median": m.bandwidth_gbps, "p20": m.bandwidth_p20_gbps,
                "p80": m.bandwidth_p80_gbps}[which]

    def predicted_value(self, m) -> float:
        p = self.predicted(m)
        if p is None:
            return np.nan
        return p.tflops if isinstance(p, MatmulPrediction) else p.bandwidth_gbps

    def ceilings(self) -> list[Ceiling]:
        """The lines a plot draws beside the curves, in its metric: the copy ceiling and the DRAM
        peak for GB/s; cuBLAS measured in the same run and the datasheet's tensor peak for TFLOP/s."""
        r = self.result
        if r is None:
            return []
        if self.metric() == GBPS:
            return ([Ceiling(r.copy_ceiling_gbps, f"copy {r.copy_ceiling_gbps:,.0f} GB/s", "measured")]
                    if r.copy_ceiling_gbps else []) + \
                   ([Ceiling(r.peak_dram_gbps, f"peak {r.peak_dram_gbps:,.0f} GB/s", "spec")]
                    if r.peak_dram_gbps else [])
        out = []
        cublas = getattr(r, "compute_ceiling_tflops", None)
        if cublas:
            out.append(Ceiling(cublas, f"cuBLAS {cublas:,.0f} TFLOP/s", "measured"))
        if self.result_spec is not None:
            try:
                peak = tensor_tflops(self.result_spec, "float16")
                out.append(Ceiling(peak, f"spec {peak:,.0f} TFLOP/s", "spec"))
            except UserError:
                pass
        return out

    def _kernel_spec(self, name: str):
        return next((k for k in self.kernels if k.name == name), None)

    def predicted(self, m) -> LaunchPrediction | MatmulPrediction | None:
        """What the block scheduler predicts for a measured point: only GPU timings of kernels
        whose grid and occupancy are known (torch peers choose their own grid). A tiled matmul
        goes through the compute-bound model (sim.model.throughput), the rest the memory-bound one."""
        key = (m.kernel, m.elements, m.block_size, m.num_warps, m.median_ms, getattr(m, "dims", None))
        if key not in self._predictions:
            try:
                self._predictions[key] = self._predict(m)
            except RulesPending:  # a user's rule, never asked on the GUI thread: no prediction
                return None
        return self._predictions[key]

    def _predict(self, m) -> LaunchPrediction | MatmulPrediction | None:
        gpu = self.result_spec if m.is_gpu_timing else None
        spec = self._kernel_spec(m.kernel)
        if gpu is not None and spec is not None and is_tiled_matmul(spec):
            return self._predict_matmul(spec, m, gpu)
        if gpu is not None and getattr(m, "grid_blocks", None) and getattr(m, "blocks_per_sm", None):
            try:
                trips = (spec.loop_trips(m.elements, m.grid_blocks, m.threads_per_block)
                         if spec is not None and getattr(m, "threads_per_block", None) else 1)
            except (ValueError, UserError):
                return None
            return predict_measured(gpu, m, trips, self.result.copy_ceiling_gbps)
        return None

    def _predict_matmul(self, spec, m, gpu) -> MatmulPrediction | None:
        from sim.traces.waves import dims_of

        dims = dims_of(m.dims) if getattr(m, "dims", None) else spec.size_dims(m.elements)
        block = {spec.sweep: m.block_size} if spec.sweep and m.block_size else None
        if block is not None and m.num_warps:
            block["num_warps"] = m.num_warps
        res = ((m.regs_per_thread, m.smem_per_block_bytes or 0)
               if m.regs_per_thread is not None else None)
        try:
            return predict_matmul(spec, dims, gpu, block, resources=res)
        except (ValueError, UserError):
            return None

    def points(self, plot: str, kernel: str) -> list:
        """The measurements one plot draws for a kernel: "size" the best block at each size,
        "block" every block size at the largest size measured."""
        rows = [m for m in self.result.measurements if m.kernel == kernel]
        if plot == "size":
            by_size: dict[int, list] = {}
            for m in rows:
                by_size.setdefault(m.elements, []).append(m)
            return [max(by_size[n], key=lambda m: self.value(m)) for n in sorted(by_size)]
        sized = [m for m in rows if m.block_size]
        if not sized:
            return []
        n = max(m.elements for m in sized)
        return sorted((m for m in sized if m.elements == n), key=lambda m: m.block_size)

    def series(self, plot: str) -> list[Series]:
        """Every shown kernel's curve on `plot` ("size" or "block")."""
        out = []
        for name in self.shown_kernels():
            pts = self.points(plot, name)
            if not pts:
                continue
            preds = [self.predicted(m) for m in pts]
            out.append(Series(
                name, name,
                np.array([m.elements if plot == "size" else m.block_size for m in pts], dtype=float),
                np.array([self.value(m) for m in pts]),
                np.array([self.value(m, "p20") for m in pts]),
                np.array([self.value(m, "p80") for m in pts]),
                np.array([self.predicted_value(m) for m in pts]),
                tuple(point_tip(m, p) for m, p in zip(pts, preds)), tuple(pts)))
        return out

    def export_rows(self, plot: str) -> tuple[list[str], list[list]]:
        """The points a plot draws, with the prediction: its CSV."""
        rows = []
        for s in self.series(plot):
            for m in s.points:
                p = self.predicted(m)
                matmul = isinstance(p, MatmulPrediction)
                rows.append([m.kernel, m.backend, m.elements, m.block_size, m.median_ms, m.p20_ms,
                             m.p80_ms, m.bandwidth_gbps, m.bandwidth_p20_gbps, m.bandwidth_p80_gbps,
                             m.is_gpu_timing, getattr(m, "grid_blocks", None), getattr(m, "waves", None),
                             getattr(m, "occupancy", None), " ".join(getattr(m, "limited_by", ()) or ()),
                             p.bandwidth_gbps if p is not None and not matmul else None, m.method,
                             getattr(m, "dims", None), getattr(m, "tflops", None),
                             p.tflops if matmul else None])
        return list(EXPORT_HEADER), rows

    # -- checks and experiments ----------------------------------------------------------------
    def set_checks(self, results, cancelled: bool = False) -> None:
        self.checks = list(results or [])
        for r in self.checks:
            err = "" if r.max_abs_err is None else f"  max|err| {r.max_abs_err:.1e}"
            self.log.emit(f"{r.status:4}  {r.kernel:24} {r.backend:6} n={r.elements:<10,} "
                          f"on {r.where}{err}  {r.detail}".rstrip())
        ok = sum(1 for r in self.checks if r.status == "OK")
        fail = sum(1 for r in self.checks if r.status == "FAIL")
        summary = (f"Correctness: {ok} OK, {fail} FAIL, {len(self.checks) - ok - fail} skipped"
                   + (" (cancelled)" if cancelled else ""))
        self.log.emit(summary)
        self.message.emit(summary)
        self.checks_changed.emit(self.checks, cancelled)

    def set_experiments(self, out: dict) -> None:
        self.experiments = dict(out)
        self.experiments_changed.emit(self.experiments)

    # -- jobs ----------------------------------------------------------------------------------
    def sweep_request(self, sizes: str, blocks: str, reps: int, flush_l2: bool,
                      allow_cpu: bool) -> SweepRequest:
        """The sweep form, checked; UserError (one line) with what to fix."""
        if not self._ticked:
            raise UserError("tick at least one kernel")
        wanted = tuple(parse_sizes(sizes))
        if not self.gpu_ok and not allow_cpu:
            raise UserError("no GPU here (tick 'CPU path' to time the interpreter/simulator, "
                            "labelled as such)")
        if not self.gpu_ok:
            wanted = self._cpu_sizes(wanted)
        return SweepRequest(self._ticked, wanted,
                            None if (b := parse_blocks(blocks)) is None else tuple(b),
                            int(reps), bool(flush_l2), bool(allow_cpu))

    def _cpu_sizes(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        """The CPU path times the interpreter/simulator, which refuses sizes past the ticked
        kernels' `cpu_max_elements` (minutes each): the default 2^16..2^28 keeps the sizes that
        run, and says so, instead of failing at once."""
        caps = [c for n in self._ticked if (c := getattr(self._kernel_spec(n), "cpu_max_elements", None))]
        cap = min(caps) if caps else None
        if cap is None or max(sizes) <= cap:
            return sizes
        kept = tuple(n for n in sizes if n <= cap)
        if not kept:
            raise UserError(f"on the CPU path these kernels run at most {cap:,} elements; "
                            f"give sizes up to {cap:,}")
        self.message.emit(f"CPU path: sizes above {cap:,} elements left out (the "
                          "interpreter/simulator would take minutes each)")
        return kept

    def begin(self, kind: str) -> None:
        self.busy, self.progress = kind, (0, 0, f"{kind}: starting…")
        self.busy_changed.emit(kind)
        self.progress_changed.emit(*self.progress)

    def progressed(self, done: int, total: int, label: str) -> None:
        self.progress = (done, total, label)
        self.progress_changed.emit(done, total, label)

    def finish(self, kind: str, ok: bool, cancelled: bool, result, error: str = "") -> None:
        self.busy = ""
        self.progress = (1, 1, "cancelled" if cancelled else ("done" if ok else "failed"))
        self.busy_changed.emit("")
        self.progress_changed.emit(*self.progress)
        if not ok:
            self.message.emit(f"{kind} failed: {error}")
            self.log.emit(f"{kind} failed: {error}")
        elif kind in ("sweep", "load"):
            self.set_result(result)
            extra = " (cancelled: showing what was measured)" if result.cancelled else ""
            what = "Sweep" if kind == "sweep" else "Loaded results"
            self.message.emit(f"{what}: {len(result.measurements)} measurements{extra}")
        elif kind == "check":
            self.set_checks(result, cancelled)
        elif kind == "experiments":
            self.set_experiments(result)

    # -- export --------------------------------------------------------------------------------
    def session_dict(self) -> dict:
        out: dict[str, Any] = {}
        if self.result is not None:
            try:
                from kernels.measure.results import to_dict

                out["bench"] = to_dict(self.result)
            except Exception:  # noqa: BLE001 - a fake result in tests, or kernels missing
                out["bench"] = asdict(self.result) if is_dataclass(self.result) else str(self.result)
        if self.checks:
            out["checks"] = [asdict(r) for r in self.checks]
        if self.experiments:
            out["experiments"] = {
                k: [asdict(x) for x in v] if isinstance(v, list)
                else asdict(v) if is_dataclass(v) else str(v)
                for k, v in self.experiments.items()}
        return out
