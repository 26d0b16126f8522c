"""The wave-quantization experiment in the window: the sawtooth measured and predicted, and the
launch behind any point of it.

`WavesModel` holds the sweep (sim.traces.waves syntax), the GPU predicted for, the measured sweep (a
results file or a live run) and the predictions (sim.model.throughput, made by `job()` in a worker).
Choosing a point emits `launch_wanted(LaunchRequest)`: the window sets its launch (kernel, M, N,
K, block and resources) and the compute-bound model, so the SM view and the timeline animate that
very launch. Qt-free (tests/models/test_models_know_no_qt.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from psygnal import Signal

from gui.models.bench import Series
from sim.rules.devices import GpuSpec, preset, preset_for_device_name
from sim.inputs.errors import UserError, printable
from sim.model.throughput import MatmulPrediction, drops, predict_matmul, wave_multiples
from sim.traces.waves import (CUBLAS, DEFAULT_SWEEP, MeasuredSweep, dims_text, from_measurements,
                       load_matmul_run, parse_sweep, swept_axis)

MATMULS = ("matmul_tiled", "matmul_persistent", "matmul_stream_k")
TITLES = {"matmul_tiled": "tiled", "matmul_persistent": "persistent",
          "matmul_stream_k": "stream-K", CUBLAS: "cuBLAS"}


def matmul_kernels() -> list:
    """The registry's matmul declarations (reading the table imports no GPU library)."""
    from kernels.declare.registry import get_kernel

    return [get_kernel(name) for name in MATMULS]


def measure_job(dims_list: list, ctx):
    """The sweep measured on this machine's GPU: every matmul kernel and cuBLAS at every size.
    Runs in the kernel host (gui.adapter.HostRunner), which imports this by name."""
    from kernels.measure.bench import waves_sweep

    return waves_sweep(dims_list, ["matmul"], on_progress=ctx.progress,
                       should_cancel=ctx.cancelled, command="WarpScope GUI waves sweep")


@dataclass(frozen=True)
class LaunchRequest:
    """What the launch model must be set to for one point of the sweep."""

    kernel: str
    dims: str  # "M=..,N=..,K=.."
    threads_per_block: int
    block_size: int  # the kernel's sweep parameter (BLOCK_M)
    block_extra: str  # its other block parameters ("BLOCK_N=256,BLOCK_K=64,...")
    regs_per_thread: int
    smem_per_block: int
    gpu: str | None = None  # the measured sweep's GPU, when the launch must move to it

    def changes(self) -> dict:
        out = dict(kernel=self.kernel, dims=self.dims, threads_per_block=self.threads_per_block,
                   block_size=self.block_size, block_extra=self.block_extra,
                   regs_per_thread=self.regs_per_thread, smem_per_block=self.smem_per_block)
        return out if self.gpu is None else {**out, "gpu": self.gpu}


@dataclass(frozen=True)
class WavesRun:
    """Predictions of every matmul kernel at every size of a sweep, on one GPU."""

    key: tuple
    gpu: GpuSpec
    dims_list: tuple
    predictions: dict = field(repr=False)  # kernel -> [MatmulPrediction]

    @property
    def concurrent_tiles(self) -> int:
        return next(iter(self.predictions.values()))[0].concurrent_tiles

    @property
    def notes(self) -> list[str]:
        return sorted({p.note for ps in self.predictions.values() for p in ps if p.note})


def predict_sweep(key: tuple, gpu: GpuSpec, dims_list, kernels, resources: dict, dtype: str,
                  ctx=None) -> WavesRun:
    """Every kernel at every size (a worker thread runs this); `ctx` reports progress."""
    out: dict[str, list[MatmulPrediction]] = {}
    total = len(kernels) * len(dims_list)
    for i, k in enumerate(kernels):
        out[k.name] = []
        for j, dims in enumerate(dims_list):
            if ctx is not None:
                if ctx.cancelled():
                    raise UserError("cancelled")
                ctx.progress(i * len(dims_list) + j, total, f"{k.name} {dims_text(dims)}")
            out[k.name].append(predict_matmul(k, dims, gpu, dtype=dtype,
                                              resources=resources.get(k.name)))
    return WavesRun(key, gpu, tuple(dims_list), out)


def read_measured(path: str) -> MeasuredSweep:
    """A warpscope-matmul/1 run (its sawtooth) or a warpscope-bench/1 file from
    `bench --waves-sweep`; UserError (one line) otherwise. Pure: the window runs it in a worker."""
    try:
        return load_matmul_run(path)
    except UserError as first:
        try:
            from kernels.measure.results import load_results

            result = load_results(path)
        except UserError:
            raise first from None
    device = result.device.get("name", "?") if isinstance(result.device, dict) else "?"
    return from_measurements(result.measurements, path, device)


class WavesModel:
    """Signals: `changed()` (sweep, measured or predictions), `selection_changed(kernel, index)`,
    `wanted()` (predictions are stale: run `job()`), `launch_wanted(LaunchRequest)`,
    `message(text)`."""

    changed = Signal()
    selection_changed = Signal(str, int)
    wanted = Signal()
    launch_wanted = Signal(object)
    message = Signal(str)

    def __init__(self, gpu: GpuSpec | None = None) -> None:
        self._launch_gpu = gpu or preset("H200")
        self.sweep_text = DEFAULT_SWEEP
        self.dims_list = parse_sweep(DEFAULT_SWEEP)
        self.measured: MeasuredSweep | None = None
        self.run: WavesRun | None = None
        self.selected: tuple[str, int] | None = None
        self._kernels: list | None = None

    # -- what is predicted -----------------------------------------------------------------------
    @property
    def kernels(self) -> list:
        if self._kernels is None:
            self._kernels = matmul_kernels()
        return self._kernels

    @property
    def gpu(self) -> GpuSpec:
        """The measured sweep's GPU when one is shown (predicted beside it), else the launch's."""
        if self.measured is not None:
            found = preset_for_device_name(self.measured.device)
            if found is not None:
                return found
        return self._launch_gpu

    @property
    def dtype(self) -> str:
        return self.measured.dtype if self.measured is not None else "float16"

    def key(self) -> tuple:
        res = tuple(sorted((self.measured.resources if self.measured else {}).items()))
        return (self.gpu, tuple(dims_text(d) for d in self.dims_list), res, self.dtype)

    def is_current(self) -> bool:
        return self.run is not None and self.run.key == self.key()

    def job(self) -> Callable | None:
        """`(ctx) -> WavesRun` for the current sweep and GPU, or None when the run is current."""
        if self.is_current():
            return None
        key, gpu, dims, kernels = self.key(), self.gpu, list(self.dims_list), self.kernels
        resources = dict(self.measured.resources) if self.measured else {}
        dtype = self.dtype
        return lambda ctx=None: predict_sweep(key, gpu, dims, kernels, resources, dtype, ctx)

    def run_now(self) -> WavesRun | None:
        job = self.job()
        if job is not None:
            self.accept(job())
        return self.run

    def accept(self, run: WavesRun) -> bool:
        if run.key != self.key():
            return False
        self.run = run
        if self.selected is not None and self.selected[1] >= len(self.dims_list):
            self.selected = None
        self.changed.emit()
        return True

    # -- changing --------------------------------------------------------------------------------
    def set_launch_gpu(self, gpu: GpuSpec) -> None:
        if gpu != self._launch_gpu:
            self._launch_gpu = gpu
            self._stale()

    def set_sweep(self, text: str) -> bool:
        """A new sweep (sim.traces.waves syntax); a message and False if it cannot be read."""
        try:
            dims = parse_sweep(text)
        except UserError as exc:
            self.message.emit(f"Sweep not changed: {exc}")
            return False
        if self.measured is not None and dims != self.measured.dims_list:
            self.measured = None  # the measured points belong to the old sweep
        self.sweep_text, self.dims_list, self.selected = text.strip(), dims, None
        self._stale()
        return True

    def set_measured(self, measured: MeasuredSweep) -> None:
        """Measured points (a file or a live run): the sweep becomes theirs."""
        dims = measured.dims_list
        if not dims:
            raise UserError(f"{measured.source} holds no measured sizes")
        self.measured, self.dims_list, self.selected = measured, dims, None
        axis = swept_axis(dims)
        fixed = ",".join(f"{d}={dims[0][d]}" for d in "MNK" if d != axis)
        step = dims[1][axis] - dims[0][axis] if len(dims) > 1 else dims[0][axis]
        self.sweep_text = f"{fixed},{axis}={dims[0][axis]}..{dims[-1][axis]}x{step}"
        self.message.emit(printable(f"Measured sweep: {len(dims)} sizes on {measured.device} "
                                    f"from {measured.source}"))
        self._stale()

    def open_file(self, path: str) -> None:
        """Read `path` (read_measured) on this thread and show it."""
        self.set_measured(read_measured(path))

    def measured_result(self, result, source: str = "live run") -> None:
        device = result.device.get("name", "?") if isinstance(result.device, dict) else "?"
        self.set_measured(from_measurements(result.measurements, source, device))

    def _stale(self) -> None:
        self.changed.emit()
        self.wanted.emit()

    # -- choosing a point --------------------------------------------------------------------------
    def select(self, kernel: str, index: int) -> LaunchRequest | None:
        """Show the launch of `kernel` at point `index` (emits launch_wanted)."""
        if kernel not in MATMULS or not 0 <= index < len(self.dims_list):
            return None
        self.selected = (kernel, index)
        self.selection_changed.emit(kernel, index)
        request = self.launch_request(kernel, index)
        if request is not None:
            self.launch_wanted.emit(request)
        return request

    def launch_request(self, kernel: str, index: int) -> LaunchRequest | None:
        pred = self.prediction(kernel, index)
        if pred is None:
            return None
        regs, smem = ((self.measured.resources.get(kernel) if self.measured else None)
                      or _estimated_resources(pred))
        extra = ",".join(f"{k}={v}" for k, v in pred.params.items() if k not in ("BLOCK_M", "num_warps"))
        return LaunchRequest(kernel, dims_text(self.dims_list[index]),
                             32 * int(pred.params.get("num_warps", 4)), int(pred.params["BLOCK_M"]),
                             extra, int(regs), int(smem),
                             self.gpu.name if self.gpu is not self._launch_gpu else None)

    def prediction(self, kernel: str, index: int) -> MatmulPrediction | None:
        if not self.is_current() or kernel not in self.run.predictions:
            return None
        preds = self.run.predictions[kernel]
        return preds[index] if 0 <= index < len(preds) else None

    # -- what the view draws -----------------------------------------------------------------------
    @property
    def axis(self) -> str:
        return swept_axis(self.dims_list)

    def x(self) -> np.ndarray:
        return np.array([d[self.axis] for d in self.dims_list], dtype=float)

    def series(self) -> list[Series]:
        """One curve per kernel: measured TFLOP/s (median, p20-p80) where measured, and the
        prediction (NaN where none); cuBLAS measured only."""
        if not self.is_current():
            return []
        x, out = self.x(), []
        for name in (*MATMULS, CUBLAS):
            preds = self.run.predictions.get(name)
            meas = self.measured.points.get(name) if self.measured else None
            if preds is None and not meas:
                continue
            n = len(x)
            med, lo, hi = (np.full(n, np.nan) for _ in range(3))
            for i, p in enumerate((meas or [])[:n]):
                med[i], lo[i], hi[i] = p.tflops(), p.tflops(p.p80_ms), p.tflops(p.p20_ms)
            pred = np.array([p.tflops for p in preds]) if preds else np.full(n, np.nan)
            tips = tuple(self.point_tip(name, i) for i in range(n))
            out.append(Series(name, TITLES[name], x, med, lo, hi, pred, tips, tuple(meas or ())))
        return out

    def point_tip(self, kernel: str, index: int) -> str:
        dims = self.dims_list[index]
        lines = [f"{TITLES[kernel]} · M={dims['M']:,} N={dims['N']:,} K={dims['K']:,}"]
        pred = self.prediction(kernel, index)
        if pred is not None:
            lines.append(f"{pred.tiles:,} tiles on {pred.concurrent_tiles:,} at once = "
                         f"{pred.waves:.2f} waves; {pred.programs:,} programs")
            lines.append(f"predicted {pred.time_us:,.1f} µs = {pred.tflops:,.0f} TFLOP/s")
        meas = self.measured.points.get(kernel) if self.measured else None
        if meas and index < len(meas):
            m = meas[index]
            lines.append(f"measured {m.median_ms * 1e3:,.1f} µs = {m.tflops():,.0f} TFLOP/s")
            if pred is not None:
                lines.append(f"prediction {pred.tflops / m.tflops() - 1:+.0%} of measured")
        if kernel in MATMULS:
            lines.append("click: show this launch in the SM view and the timeline")
        return "\n".join(lines)

    def wave_marks(self) -> list[tuple[float, str]]:
        """(x, tiles) where the tiles reach a multiple of SMs x tiles per SM (the tiled kernel's):
        one size more and a new, nearly empty wave starts."""
        if not self.is_current() or not self.dims_list:
            return []
        preds = self.run.predictions[MATMULS[0]]
        conc = preds[0].concurrent_tiles
        tiles = np.array([p.tiles for p in preds])
        x, out = self.x(), []
        for k in wave_multiples(conc, int(tiles.max())):
            i = int(np.searchsorted(tiles, k))  # the first size with at least k tiles
            if i < len(x) and tiles[i] >= k:
                exact = x[i] if tiles[i] == k else np.interp(k, tiles, x)
                out.append((float(exact), f"{k:,}"))
        return out

    def drops(self) -> dict[str, tuple[list[float], list[float]]]:
        """Per kernel: (x of measured drops, x of predicted drops) of more than 10%."""
        out = {}
        x = self.x()
        for s in self.series():
            meas = [float(x[i]) for i in drops(s.median)] if np.isfinite(s.median).any() else []
            pred = [float(x[i]) for i in drops(s.predicted)] if np.isfinite(s.predicted).any() else []
            out[s.kernel] = (meas, pred)
        return out

    def describe_selection(self) -> str:
        """A line about the chosen launch: its tiles, waves, and what the last wave holds."""
        if self.selected is None:
            return "Click a point to see that launch in the SM view and the timeline."
        kernel, i = self.selected
        pred = self.prediction(kernel, i)
        if pred is None:
            return ""
        d = self.dims_list[i]
        conc, tiles, programs = pred.concurrent_tiles, pred.tiles, pred.programs
        rounds, extra = divmod(tiles, programs)
        if kernel == "matmul_tiled":
            waves = math.ceil(tiles / conc)
            how = f"{waves} wave{'s' if waves > 1 else ''}, the last holds {tiles - (waves - 1) * conc} of {conc} tiles"
        elif kernel == "matmul_persistent":
            how = (f"{programs} programs loop over them: {rounds} each"
                   + (f", {extra} take one more" if extra else ""))
        else:
            how = (f"{programs} programs: {rounds} whole tile{'s' if rounds != 1 else ''} each"
                   + (f", then the K-iterations of the last {extra} split over all of them" if extra else ""))
        return (f"{TITLES[kernel]} at M={d['M']:,} N={d['N']:,} K={d['K']:,}: {tiles:,} tiles, "
                f"{how}; predicted {pred.tflops:,.0f} TFLOP/s on {pred.gpu}")


def _estimated_resources(pred: MatmulPrediction) -> tuple[int, int]:
    from sim.model.throughput import estimated_registers, pipeline_smem_bytes

    return (estimated_registers(pred.params),
            pipeline_smem_bytes(pred.params, pred.problem.itemsize))
