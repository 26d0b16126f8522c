"""The slider launches the kernel: each launch the user settles on (block size, elements) is run
and timed, and the measured time goes beside the model's prediction for that launch.

`SliderLaunchModel` holds what was measured (no Qt): the launch wanted, the one running, and every
`LaunchPoint` measured for the kernel, each with the prediction the window made for it
(gui.models.simulation.SimRun, the launch model's whole-launch time). `measure_launch` is the job:
it runs in the kernel host (gui.adapter.HostRunner) or a worker thread and times the launch with
kernels.measure.harness.measure, the harness `bench` and the Sweep tab use (on a GPU: device
events, the L2 flushed before each rep, the median of the reps; without one: the interpreter or
simulator at a small size, host-clocked and labelled as no GPU timing).
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import Signal

from gui.models.compiled import block_params

REPS = 20  # at least this many timed launches (the harness adds as many as fit in 100 ms)
CPU_ELEMENTS = 1024  # the CPU path's size: the interpreter and simulator are slow
CPU_SIDE = 64  # a matmul's side on the CPU path
NOT_GPU = "not a GPU timing"


@dataclass(frozen=True, slots=True)
class LaunchWanted:
    """One launch of a registry kernel, as the window's inputs name it."""

    kernel: str
    gpu: str
    elements: int
    threads_per_block: int
    block: tuple  # the kernel's block parameters, sorted (name, value) pairs
    files: tuple = ()  # (path, digest) of opened kernel files the host must open first

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.block)
        return f"{self.kernel} at {self.elements:,} elements, {params or f'{self.threads_per_block} threads'}"


def wanted_of(state, kernel, files: tuple = ()) -> LaunchWanted:
    """The launch the window shows (gui.models.launch.LaunchState) of registry kernel `kernel`."""
    inputs = state.inputs
    block = tuple(sorted(block_params(kernel, inputs).items()))
    return LaunchWanted(kernel.name, state.spec.name, inputs.elements, inputs.threads_per_block,
                        block, files)


@dataclass(frozen=True, slots=True)
class LaunchPoint:
    """A launch, measured; `predicted_us`: the window's prediction for it (None: none made)."""

    wanted: LaunchWanted
    median_us: float
    p20_us: float
    p80_us: float
    is_gpu_timing: bool
    method: str
    device: str
    elements_run: int  # the size launched (the CPU path's is small)
    predicted_us: float | None = None

    @property
    def error(self) -> float | None:
        """predicted / measured - 1 (GPU timings only)."""
        if not self.is_gpu_timing or not self.predicted_us or not self.median_us:
            return None
        return self.predicted_us / self.median_us - 1.0

    def text(self) -> str:
        w = self.wanted
        if not self.is_gpu_timing:
            return (f"{w.kernel} ran on the CPU ({self.device}) at {self.elements_run:,} elements: "
                    f"{self.median_us / 1e3:,.1f} ms, {NOT_GPU}")
        said = f"measured {self.median_us:,.1f} µs (p20-p80 {self.p20_us:,.1f}-{self.p80_us:,.1f})"
        if self.predicted_us is not None:
            said += f", predicted {self.predicted_us:,.1f} µs ({self.error:+.0%})"
        return f"{w.describe()} on {self.device}: {said}; {self.method}"


def measure_launch(wanted: LaunchWanted, ctx) -> dict:
    """The job: time `wanted` here (kernel host or worker thread). A plain dict of numbers and
    words back; UserError (one line) when the kernel cannot run here."""
    from kernels.declare.kernel_file import open_once
    from kernels.declare.registry import get_kernel
    from kernels.launching.device import detect_device
    from kernels.measure.harness import backend_status, measure

    for path, digest in wanted.files:
        open_once(path, digest)
    spec = get_kernel(wanted.kernel)
    status = backend_status(spec)
    gpu = detect_device()[0] if status.is_gpu else None
    n = wanted.elements
    if not status.is_gpu:  # the interpreter or simulator: a small launch, said as such
        n = min(n, CPU_SIDE if spec.is_matrix_product else CPU_ELEMENTS, spec.cpu_max_elements)
    if ctx is not None and ctx.cancelled():
        return {"cancelled": True}
    m = measure(spec, n, dict(wanted.block), reps=REPS, gpu=gpu, check=False,
                device_name=gpu.name if gpu is not None else status.mode)
    return {"median_us": m.median_ms * 1e3, "p20_us": m.p20_ms * 1e3, "p80_us": m.p80_ms * 1e3,
            "is_gpu_timing": m.is_gpu_timing, "method": m.method, "device": m.device,
            "elements_run": n}


class SliderLaunchModel:
    """What the slider's launches measured. Signals: `changed()`."""

    changed = Signal()

    def __init__(self) -> None:
        self.enabled = True
        self.points: dict[LaunchWanted, LaunchPoint] = {}
        self.latest: LaunchPoint | None = None
        self.status = ""  # what is happening, or why the slider cannot launch

    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        self.status = "" if on else "launching on slider moves is off"
        self.changed.emit()

    def say(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.changed.emit()

    def add(self, wanted: LaunchWanted, result: dict, predicted_us: float | None) -> LaunchPoint:
        fields = {k: result[k] for k in ("median_us", "p20_us", "p80_us", "is_gpu_timing", "method",
                                         "device", "elements_run")}
        point = LaunchPoint(wanted, predicted_us=predicted_us, **fields)
        self.points[wanted] = point
        self.latest = point
        self.status = point.text()
        self.changed.emit()
        return point

    def series(self, wanted: LaunchWanted | None) -> list[LaunchPoint]:
        """The points measured of `wanted`'s kernel at its size on its GPU, by threads per block."""
        if wanted is None:
            return []
        same = [p for w, p in self.points.items()
                if (w.kernel, w.gpu, w.elements) == (wanted.kernel, wanted.gpu, wanted.elements)]
        return sorted(same, key=lambda p: (p.wanted.threads_per_block, p.wanted.block))

    def verdict(self) -> str:
        """One line for the Verdicts: the latest launch measured, or why none can be."""
        return self.latest.text() if self.latest is not None else self.status
