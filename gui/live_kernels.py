"""The window's live kernels: the kernel host is started after the first paint, imports
torch/triton/numba and detects the device (`kernels.host.process.describe`); what it learned goes
to the launch, the bench model, the Waves tab and the kernel source panel, and the status bar says
it. This process never imports torch, triton or numba.

`LiveKernels(window)` holds the loading job and the `KernelsInfo`; main_window.py makes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from gui.adapter import TaskOutcome
from gui.models.kernel_menu import Availability
from kernels.host.process import describe

LOAD_TIMEOUT_S = 180  # torch/triton/numba and the device took 7.4 s on the H200; a stuck CUDA init is killed


@dataclass(frozen=True)
class KernelsInfo:
    """What the kernel host learned about `kernels` (immutable)."""

    available: dict | None
    kernels: tuple
    device: Any
    device_reason: str
    error: str = ""


def kernels_info_of(outcome: TaskOutcome) -> KernelsInfo:
    """The host's `describe` job (kernels.host.process.HostInfo) with the kernel table, which is plain
    declarations and is read here: this process never imports torch, triton or numba."""
    info = outcome.result if outcome.ok else None
    if info is None or info.error or info.available is None:
        return KernelsInfo(None, (), None, "", outcome.error if info is None else info.error)
    from kernels.declare.registry import KERNELS

    return KernelsInfo(info.available, tuple(KERNELS), info.device, info.device_reason)


class LiveKernels(QObject):
    """Loads the live kernels in `window`'s kernel host and applies what it learned.
    `prefer_detected`: show the detected GPU once it is known; `wanted_gpu`: re-select a saved
    detected GPU when it is detected again."""

    def __init__(self, window, prefer_detected: bool, wanted_gpu: str | None) -> None:
        super().__init__(window)
        self.window = window
        self.prefer_detected, self.wanted_gpu = prefer_detected, wanted_gpu
        self.info: KernelsInfo | None = None
        self._job: int | None = None
        self.label = QLabel("live kernels: not loaded")
        self.label.setProperty("role", "muted")
        runner = window.live_runner
        runner.finished.connect(self._on_finished)
        runner.progress.connect(self._on_progress)
        runner.host_changed.connect(self._on_host_changed)
        window.bench.result_changed.connect(self._on_bench_result)

    def list_declared(self) -> None:
        """The kernel declarations (plain data) in the Kernel menu at once, marked loading until
        the kernel host has imported torch/triton/numba."""
        from kernels.declare.registry import KERNELS

        self.window.model.set_kernels(KERNELS)

    def load(self) -> None:
        """Start the kernel host; it imports torch/triton/numba and detects the device."""
        if self._job is None:
            self.label.setText("live kernels: starting the kernel host…")
            self._job = self.window.live_runner.submit(describe, "load kernels",
                                                       timeout_s=LOAD_TIMEOUT_S)

    def _on_progress(self, job_id: int, _done: int, _total: int, label: str) -> None:
        if job_id == self._job and self.info is None:
            self.label.setText(f"live kernels: {label}")

    def _on_finished(self, outcome: TaskOutcome) -> None:
        if outcome.job_id == self._job:
            self.apply(kernels_info_of(outcome))

    def _on_host_changed(self, state: str) -> None:
        if state.startswith("stopped") and not self.window.live_runner.busy():  # a job would say it itself
            self.window.show_message(f"The kernel host {state}; the next live job starts it again",
                                     error=True)

    def apply(self, info: KernelsInfo) -> None:
        w = self.window
        self.info = info
        if info.error or info.available is None:
            self.label.setText("live kernels: unavailable")
            w.controls.set_availability(Availability(None, info.error or "no answer", False))
            w.bench.set_availability(None, info.error)
            return
        w.controls.set_availability(Availability(info.available, "", False))
        if info.device is not None:
            w.user_kernels.source.set_gpu_present(True)  # "Trace on the GPU"
            label = w.model.add_detected_spec(info.device)
            if self.prefer_detected or self.wanted_gpu == label:
                w.model.update(gpu=label)
        w.model.set_kernels(info.kernels)
        w.bench.set_kernels(info.kernels)
        w.bench.set_availability(info.available)
        w.waves_panel.set_availability(info.available)
        self.label.setText("live kernels: " + ", ".join(f"{n} {a.mode}"
                                                        for n, a in info.available.items()))

    def _on_bench_result(self, _result) -> None:
        """Real kernels report their registers and shared memory: use them for the launch."""
        w = self.window
        found = w.bench.measured_resources()
        if found:
            w.model.set_measured_resources(found)
            w.show_message(f"Registers and shared memory of {len(found)} compiled kernel(s) taken "
                           "from the measurements; pick one under Kernel to use them.")
