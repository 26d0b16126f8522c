"""QtBandwidth: live kernel bandwidth (sweeps in a worker thread) and the article's experiments.

Tab "Sweep": GB/s against size and against block size, median line with a p20–p80 band, the copy
ceiling and the theoretical peak as lines, a tooltip per point with its grid, waves, occupancy and
limiter. Results files written by `python main.py bench` open here too.
Tab "Experiments": eager vs fused add+ReLU (kernel count, trips, time), launch returned vs work
finished, and the square kernel's five host steps as a timeline.
Without a GPU the panel says why (kernels.available()) and offers the correctness run on the CPU.

The panel never imports torch/triton/numba itself: work functions are injected (`BandwidthJobs`)
and run by a TaskRunner that the main window owns.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetAction,
)

from gui import style
from sim.devices import GpuSpec, preset_for_device_name
from sim.errors import UserError
from sim.predict import Prediction, predict_bandwidth
from sim.units import parse_count_list
from gui.adapter import TaskOutcome, TaskRunner

CURVE_COLORS = [*style.HUES, "#d4a6c8", "#86bcb6"]


class Cancelled(Exception):
    """Raised inside a job when the user pressed Cancel."""


def parse_sizes(text: str) -> list[int]:
    """Element counts as sim.units reads them: "2^16..2^28 x4", "1e6, 2^20, 1048583"."""
    return parse_count_list(text, "sizes")


def parse_blocks(text: str) -> list[int] | None:
    text = text.strip()
    if not text or text.lower() == "default":
        return None
    return parse_count_list(text, "block sizes", upper=None)


@dataclass
class BandwidthJobs:
    """The functions the panel runs in its worker. Defaults import `kernels` lazily."""

    sweep: Callable[..., Any] | None = None
    load_results: Callable[[str], Any] | None = None
    run_checks: Callable[..., Any] | None = None
    count_kernels: Callable[..., Any] | None = None
    launch_vs_finish: Callable[..., Any] | None = None
    square_host_steps: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        """Anything not given uses the real kernels layer (imported only when it runs)."""
        real = None
        for name in (
            "sweep",
            "load_results",
            "run_checks",
            "count_kernels",
            "launch_vs_finish",
            "square_host_steps",
        ):
            if getattr(self, name) is None:
                real = real or BandwidthJobs._real_functions()
                setattr(self, name, real[name])

    @classmethod
    def real(cls) -> BandwidthJobs:
        return cls()

    @staticmethod
    def _real_functions() -> dict:
        def sweep(*a, **k):
            from kernels.bench import sweep as f

            return f(*a, **k)

        def load(path):
            from kernels.results import load_results

            return load_results(path)

        def checks(*a, **k):
            from kernels.check import run_checks

            return run_checks(*a, **k)

        # The experiments run in a child process (kernels.experiments.run_in_subprocess): inside
        # this worker thread torch.compile did not finish on the H200 and froze the window.
        def count():
            from kernels.experiments import run_in_subprocess

            return run_in_subprocess("count_kernels")

        def lvf():
            from kernels.experiments import run_in_subprocess

            return run_in_subprocess("launch_vs_finish")

        def square():
            from kernels.experiments import run_in_subprocess

            return run_in_subprocess("square_host_steps")

        return {
            "sweep": sweep,
            "load_results": load,
            "run_checks": checks,
            "count_kernels": count,
            "launch_vs_finish": lvf,
            "square_host_steps": square,
        }


def _plot(title: str, xlabel: str, ylabel: str, logx: bool = False) -> pg.PlotWidget:
    w = style.make_plot(title, xlabel, ylabel)
    pi = w.getPlotItem()
    if logx:
        pi.setLogMode(x=True, y=False)
    legend = pi.addLegend(labelTextSize="8pt", brush=pg.mkBrush(20, 22, 26, 200))
    legend.anchor(itemPos=(1, 1), parentPos=(1, 1), offset=(-8, -8))  # bottom right
    return w


def _tip(m, predicted: Prediction | None = None) -> str:
    """Tooltip for one measurement: its launch as sim predicts it, and how it was timed."""
    lines = [
        f"{m.kernel} [{m.backend}]",
        f"{m.elements:,} elements · block {m.block_size or 'fixed'}",
        (
            f"{m.bandwidth_gbps:,.1f} GB/s (p20–p80 {m.bandwidth_p20_gbps:,.1f}–"
            f"{m.bandwidth_p80_gbps:,.1f}) · median {m.median_ms * 1e3:,.2f} µs"
        ),
    ]
    grid = getattr(m, "grid_blocks", None)
    if grid is not None:
        lines.append(f"grid {grid:,} blocks × {m.threads_per_block or '?'} threads")
    waves = getattr(m, "waves", None)
    occ = getattr(m, "occupancy", None)
    if waves is not None or occ is not None:
        lim = ", ".join(getattr(m, "limited_by", ()) or ()) or "?"
        lines.append(
            f"waves {waves:,.2f} · occupancy {occ:.0%} · limited by {lim}"
            if waves is not None and occ is not None
            else f"limited by {lim}"
        )
    if m.regs_per_thread is not None:
        lines.append(
            f"{m.regs_per_thread} registers/thread · {m.smem_per_block_bytes or 0:,} B shared"
        )
    if predicted is not None:
        lines.append(
            f"simulator predicts {predicted.bandwidth_gbps:,.0f} GB/s "
            f"({predicted.bandwidth_gbps / m.bandwidth_gbps:.0%} of measured; {predicted.bound}-bound)"
        )
    lines.append(("GPU timing: " if m.is_gpu_timing else "NOT a GPU timing: ") + m.method)
    return "\n".join(lines)


def _result_gpu(result) -> GpuSpec | None:
    """The GPU a results file was measured on, as a spec (full spec saved by `bench`, or a preset
    matched by name for files that only carry the name)."""
    device = result.device if isinstance(result.device, dict) else {}
    try:
        return GpuSpec.from_dict(device)
    except (KeyError, TypeError, ValueError):
        return preset_for_device_name(device.get("name", ""), device.get("sm_count"))


class QtBandwidth(QWidget):
    """The live panel. `set_availability` decides what it offers; jobs run on `runner`."""

    status_message = Signal(str)
    result_loaded = Signal(object)

    def __init__(
        self, runner: TaskRunner, jobs: BandwidthJobs | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.jobs = jobs or BandwidthJobs.real()
        self.result = None  # BenchResult shown now
        self._predictions: dict = {}  # measured point -> the scheduler's Prediction (or None)
        self._result_spec: GpuSpec | None = None
        self.experiments: dict[str, Any] = {}
        self.checks: list = []
        self._job_kind: dict[int, str] = {}
        self._gpu_ok = False
        self._kernels: list = []

        self.setMinimumHeight(280)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.banner = QLabel("Checking which backends can run here…")
        self.banner.setProperty("role", "banner")
        self.banner.setWordWrap(True)
        outer.addWidget(self.banner)
        self.tabs = QTabWidget()
        outer.addWidget(self.tabs, 1)

        # ---- sweep tab -----------------------------------------------------------------------
        sweep_tab = QWidget()
        st = QVBoxLayout(sweep_tab)
        st.setContentsMargins(2, 2, 2, 2)
        st.setSpacing(3)
        row1 = QHBoxLayout()
        row1.setSpacing(6)
        self.kernel_list = QListWidget()
        self.kernel_list.setToolTip("Registry kernels to measure (tick several to compare).")
        self.kernel_list.setMinimumSize(320, 300)
        self.kernels_button = QToolButton()
        self.kernels_button.setText("Kernels ▾")
        self.kernels_button.setToolTip("Choose the registry kernels to measure.")
        self.kernels_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.kernels_button)
        wa = QWidgetAction(menu)
        wa.setDefaultWidget(self.kernel_list)
        menu.addAction(wa)
        self.kernels_button.setMenu(menu)
        self.kernel_list.itemChanged.connect(self._on_kernel_ticked)
        row1.addWidget(self.kernels_button)
        row1.addWidget(QLabel("sizes"))
        self.sizes = QLineEdit("2^16..2^28 x4")
        self.sizes.setToolTip(
            "Element counts: a list (1e6, 2^20, 1048583) or a range of powers "
            "of two (2^16..2^28, add 'x4' to take every second one)."
        )
        self.sizes.setMinimumWidth(110)
        row1.addWidget(self.sizes, 2)
        row1.addWidget(QLabel("blocks"))
        self.blocks = QLineEdit("default")
        self.blocks.setToolTip(
            "Block sizes to try: threads per block for Numba, BLOCK_SIZE for "
            "Triton; 'default' uses each kernel's own."
        )
        self.blocks.setMinimumWidth(90)
        row1.addWidget(self.blocks, 1)
        row1.addWidget(QLabel("reps"))
        self.reps = QSpinBox()
        self.reps.setRange(3, 500)
        self.reps.setValue(50)
        self.reps.setToolTip("Timed repetitions per point; the median and p20/p80 come from them.")
        row1.addWidget(self.reps)
        self.flush = QCheckBox("flush L2")
        self.flush.setChecked(True)
        self.flush.setToolTip(
            "Evict the L2 cache before each timed run; untick it to see the "
            "cache trap (numbers above DRAM speed on small sizes)."
        )
        row1.addWidget(self.flush)
        self.allow_cpu = QCheckBox("CPU path")
        self.allow_cpu.setToolTip(
            "Without a GPU, time the interpreter/simulator anyway; every "
            "point is labelled as not a GPU timing."
        )
        row1.addWidget(self.allow_cpu)
        st.addLayout(row1)
        row2 = QHBoxLayout()
        row2.setSpacing(6)
        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip(
            "Measure every ticked kernel at every size and block size, in the background."
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip(
            "Stop after the point being measured; what was measured stays."
        )
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.progress.setTextVisible(True)
        self.open_button = QPushButton("Open results…")
        self.open_button.setToolTip(
            "Plot a results file written by `python main.py bench` "
            "(JSON or CSV), e.g. from a GPU server."
        )
        self.check_button = QPushButton("Correctness run")
        self.check_button.setToolTip(
            "Run every registry kernel against its float64 reference on "
            "whatever runs here (the interpreter/simulator without a GPU)."
        )
        row2.addWidget(self.run_button)
        row2.addWidget(self.cancel_button)
        row2.addWidget(self.progress, 1)
        row2.addWidget(self.open_button)
        row2.addWidget(self.check_button)
        st.addLayout(row2)

        plots = QSplitter(Qt.Orientation.Horizontal)
        self._top = plots  # the plots are built on first use (keeps start-up fast)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setFont(style.monospace_font(8.5))
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log.setPlaceholderText(
            "Results of the correctness run and notes on loaded files appear here."
        )
        st.addWidget(plots, 1)
        self.tabs.addTab(sweep_tab, "Sweep")

        # ---- experiments tab -----------------------------------------------------------------
        exp_tab = QWidget()
        el = QVBoxLayout(exp_tab)
        el.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.exp_button = QPushButton("Run experiments")
        self.exp_button.setToolTip(
            "Count the kernels of eager vs fused add+ReLU, time launch vs "
            "finish, and time the square example's five host steps."
        )
        self.exp_note = QLabel("")
        self.exp_note.setProperty("role", "muted")
        self.exp_note.setWordWrap(True)
        row.addWidget(self.exp_button)
        row.addWidget(self.exp_note, 1)
        el.addLayout(row)
        eg = QHBoxLayout()
        self._eg = eg
        self._plots: dict[str, pg.PlotWidget] = {}
        el.addLayout(eg, 1)
        self.tabs.addTab(exp_tab, "Experiments")
        self.tabs.addTab(self.log, "Log")

        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.open_button.clicked.connect(self._on_open_clicked)
        self.check_button.clicked.connect(self._on_check_clicked)
        self.exp_button.clicked.connect(self._on_experiments_clicked)
        runner.progress.connect(self._on_progress)
        runner.finished.connect(self._on_finished)
        self._set_busy(False)

    # -- plots, built on first use ----------------------------------------------------------------
    def _ensure_plots(self) -> dict:
        if not self._plots:
            p = self._plots
            p["size"] = _plot("Bandwidth vs size", "elements (log)", "GB/s", logx=True)
            p["block"] = _plot(
                "Bandwidth vs block size (largest size)",
                "block size (Numba: threads, Triton: BLOCK_SIZE)",
                "GB/s",
                logx=True,
            )
            self._top.addWidget(p["size"])
            self._top.addWidget(p["block"])
            p["fused"] = _plot("add+ReLU: eager vs fused", "", "")
            p["launch"] = _plot("Launch returned vs work finished", "", "µs")
            p["steps"] = _plot("Square: the five host steps", "ms", "")
            for key in ("fused", "launch", "steps"):
                self._eg.addWidget(p[key])
        return self._plots

    size_plot = property(lambda self: self._ensure_plots()["size"])
    block_plot = property(lambda self: self._ensure_plots()["block"])
    fused_plot = property(lambda self: self._ensure_plots()["fused"])
    launch_plot = property(lambda self: self._ensure_plots()["launch"])
    steps_plot = property(lambda self: self._ensure_plots()["steps"])

    def showEvent(self, event) -> None:
        self._ensure_plots()
        super().showEvent(event)

    # -- availability -----------------------------------------------------------------------------
    def set_kernels(self, kernels: list) -> None:
        """Registry kernels (KernelSpec-like: name, backend, title, benchable)."""
        self._kernels = [k for k in kernels if getattr(k, "benchable", True)]
        self.kernel_list.clear()
        for i, k in enumerate(self._kernels):
            it = QListWidgetItem(f"{k.name}  [{k.backend}]")
            it.setData(Qt.ItemDataRole.UserRole, k.name)
            it.setToolTip(getattr(k, "description", "") or getattr(k, "title", ""))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(
                Qt.CheckState.Checked
                if k.name in ("add_triton", "add_torch", "copy_torch")
                else Qt.CheckState.Unchecked
            )
            self.kernel_list.addItem(it)
        self._on_kernel_ticked()

    def _on_kernel_ticked(self, _item=None) -> None:
        n = len(self.selected_kernels())
        self.kernels_button.setText(f"Kernels ({n}) ▾")
        if self.result is not None and _item is not None:
            self._redraw()

    _availability_known = False

    def set_availability(self, available: dict | None, error: str = "") -> None:
        """From kernels.available(): say why live timing is off, and what still works."""
        self._availability_known = True
        if available is None:
            self._gpu_ok = False
            self.banner.setText(
                f"Live kernels are unavailable: {error or 'kernels did not load'}. "
                "Everything simulated still works; results files still open."
            )
            self.banner.show()
            self._set_busy(False)
            return
        gpu = [n for n, a in available.items() if a.ok and a.is_gpu]
        self._gpu_ok = bool(gpu)
        if self._gpu_ok:
            self.banner.hide()
        else:
            reasons = "\n".join(f"{n}: {a.reason}" for n, a in available.items())
            first = next((a.reason for a in available.values() if a.reason), "")
            why = first.split(";")[0].split(":")[0].strip() or "no CUDA GPU"
            modes = " · ".join(f"{n}: {getattr(a, 'mode', 'cpu')}" for n, a in available.items())
            self.banner.setText(
                f"<b>No GPU here</b> ({html.escape(why)}), so nothing on this panel is a GPU "
                f"timing ({html.escape(modes)}). Run the correctness check, open a results file "
                "from <code>python main.py bench</code> on a GPU server, or tick <i>CPU path</i>."
            )
            self.banner.setTextFormat(Qt.TextFormat.RichText)
            self.banner.setToolTip(reasons)
            self.banner.show()
        self._set_busy(False)

    # -- running ----------------------------------------------------------------------------------
    def _set_busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.check_button.setEnabled(not busy)
        self.exp_button.setEnabled(not busy)
        self.open_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        if not busy:
            self.progress.setRange(0, 1)

    def selected_kernels(self) -> list[str]:
        out = []
        for i in range(self.kernel_list.count()):
            it = self.kernel_list.item(i)
            if it.checkState() == Qt.CheckState.Checked:
                out.append(it.data(Qt.ItemDataRole.UserRole))
        return out

    def _submit(self, kind: str, fn) -> int:
        job = self.runner.submit(fn, name=kind)
        self._job_kind[job] = kind
        self._set_busy(True)
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"{kind}: starting…")
        return job

    def start_sweep(self) -> int | None:
        """Validate the form and start a sweep; returns the job id, or None with a message."""
        try:
            names = self.selected_kernels()
            if not names:
                raise ValueError("tick at least one kernel")
            sizes = parse_sizes(self.sizes.text())
            blocks = parse_blocks(self.blocks.text())
        except ValueError as exc:
            self.status_message.emit(f"Sweep not started: {exc}")
            return None
        if not self._gpu_ok and not self.allow_cpu.isChecked():
            self.status_message.emit(
                "Sweep not started: no GPU here (tick 'allow the CPU path' to "
                "time the interpreter/simulator, labelled as such)"
            )
            return None
        flush, reps, allow_cpu = (
            self.flush.isChecked(),
            self.reps.value(),
            self.allow_cpu.isChecked(),
        )
        sweep = self.jobs.sweep

        def job(ctx):
            return sweep(
                names,
                sizes,
                blocks,
                flush_l2=flush,
                reps=reps,
                on_progress=ctx.progress,
                should_cancel=ctx.cancelled,
                allow_cpu=allow_cpu,
                command="WarpScope GUI sweep",
            )

        return self._submit("sweep", job)

    def start_checks(self) -> int:
        run_checks = self.jobs.run_checks
        total = 4 * max(1, len(self._kernels) + 2)

        def job(ctx):
            done = [0]
            lines = []

            def on_result(r):
                if ctx.cancelled():
                    raise Cancelled()
                done[0] += 1
                lines.append(r)
                ctx.progress(
                    done[0], max(total, done[0] + 1), f"{r.kernel} n={r.elements:,}: {r.status}"
                )

            try:
                return run_checks(None, None, on_result=on_result)
            except Cancelled:
                return lines

        self.log.appendPlainText(
            "Correctness run started (without a GPU this uses Triton's "
            "interpreter and numba-cuda's simulator; it takes a while)…"
        )
        self.tabs.setCurrentWidget(self.log)
        return self._submit("check", job)

    def start_experiments(self) -> int:
        jobs = self.jobs

        def job(ctx):
            out: dict[str, Any] = {}
            steps = (
                ("count_kernels", lambda: jobs.count_kernels()),
                ("launch_vs_finish", lambda: jobs.launch_vs_finish()),
                ("square_host_steps", lambda: jobs.square_host_steps()),
            )
            for i, (name, fn) in enumerate(steps):
                if ctx.cancelled():
                    break
                ctx.progress(i, len(steps), name)
                try:
                    out[name] = fn()
                except Exception as exc:  # noqa: BLE001 - each experiment reports its own failure
                    msg = str(exc).splitlines()[0] if str(exc) else ""
                    out[name] = (
                        msg
                        if isinstance(exc, ValueError) and msg
                        else f"{type(exc).__name__}: {msg}"
                    )
            ctx.progress(len(steps), len(steps), "done")
            return out

        return self._submit("experiments", job)

    def open_results(self, path: str) -> int:
        load = self.jobs.load_results
        return self._submit("load", lambda ctx: load(path))

    def cancel(self) -> None:
        self.runner.cancel()
        self.progress.setFormat("cancelling…")

    # -- handlers ---------------------------------------------------------------------------------
    def _on_run_clicked(self) -> None:
        self.start_sweep()

    def _on_cancel_clicked(self) -> None:
        self.cancel()

    def _on_check_clicked(self) -> None:
        self.start_checks()

    def _on_experiments_clicked(self) -> None:
        self.start_experiments()

    def _on_open_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open bench results", "", "Bench results (*.json *.csv);;All files (*)"
        )
        if path:
            self.open_results(path)

    def _on_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        if job_id not in self._job_kind:
            return
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(done, max(1, total)))
        self.progress.setFormat(f"{done}/{total}  {label}")

    def _on_finished(self, outcome: TaskOutcome) -> None:
        kind = self._job_kind.pop(outcome.job_id, None)
        if kind is None:
            return
        self._set_busy(False)
        self.progress.setValue(1)
        self.progress.setFormat(
            "cancelled" if outcome.cancelled else ("failed" if not outcome.ok else "done")
        )
        if not outcome.ok:
            self.status_message.emit(f"{kind} failed: {outcome.error}")
            self.log.appendPlainText(f"{kind} failed: {outcome.error}")
            return
        if kind in ("sweep", "load"):
            self.tabs.setCurrentIndex(0)
        if kind in ("sweep", "load"):
            self.show_result(outcome.result)
            n = len(outcome.result.measurements)
            extra = " (cancelled: showing what was measured)" if outcome.result.cancelled else ""
            self.status_message.emit(
                f"{'Sweep' if kind == 'sweep' else 'Loaded results'}: {n} measurements{extra}"
            )
        elif kind == "check":
            self.show_checks(outcome.result, cancelled=outcome.cancelled)
        elif kind == "experiments":
            self.show_experiments(outcome.result)

    # -- drawing ----------------------------------------------------------------------------------
    MAX_SHOWN = 6
    DEFAULT_SHOWN = ("add_triton", "add_torch", "copy_torch", "add_numba_naive", "add_numba")

    def shown_kernels(self) -> list[str]:
        """Kernels of the loaded result that the plots show: the ticked ones (the same list
        chooses what a sweep runs); else the usual comparison (Triton and Numba add against
        torch.add and the copy ceiling); else the first few."""
        if self.result is None:
            return []
        present = list(dict.fromkeys(m.kernel for m in self.result.measurements))
        ticked = [k for k in self.selected_kernels() if k in present]
        usual = [k for k in self.DEFAULT_SHOWN if k in present]
        return ticked or usual or present[: self.MAX_SHOWN]

    def show_result(self, result) -> None:
        self.result = result
        self._predictions = {}
        self._result_spec = _result_gpu(result)  # the GPU the predictions are made for
        ms = list(result.measurements)
        if not ms:
            self.log.appendPlainText("The results contain no measurements.")
        else:
            kernels = list(dict.fromkeys(m.kernel for m in ms))
            gpu_any = any(m.is_gpu_timing for m in ms)
            dev = (
                result.device.get("name", "?")
                if isinstance(result.device, dict)
                else str(result.device)
            )
            self.log.appendPlainText(
                f"{len(ms)} measurements of {len(kernels)} kernels on {dev}, {result.created}"
                + (" — GPU timings" if gpu_any else " — NOT GPU timings (CPU path)")
                + f"; method: {ms[0].method}. Tick kernels under 'Kernels' to choose the curves."
            )
        self._redraw()
        self.result_loaded.emit(result)

    def _redraw(self) -> None:
        result = self.result
        self._plotted = {"size": [], "block": []}
        for plot in (self.size_plot, self.block_plot):
            plot.getPlotItem().clear()
            plot.getPlotItem()._has_prediction_entry = False
            leg = plot.getPlotItem().legend
            if leg is not None:
                leg.clear()
        if result is None or not result.measurements:
            return
        ms = list(result.measurements)
        gpu_any = any(m.is_gpu_timing for m in ms)
        dev = result.device.get("name", "") if isinstance(result.device, dict) else ""
        tag = (f" · {dev}" if dev else "") if gpu_any else " — CPU path, NOT GPU timings"
        for plot, title in (
            (self.size_plot, "Bandwidth vs size"),
            (self.block_plot, "Bandwidth vs block size (largest size)"),
        ):
            color = style.FG if gpu_any else style.BAD
            plot.getPlotItem().setTitle(
                f"<span style='color:{color};font-size:10pt'>{title}{tag}</span>"
            )
        for ci, name in enumerate(self.shown_kernels()):
            color = CURVE_COLORS[ci % len(CURVE_COLORS)]
            rows = [m for m in ms if m.kernel == name]
            self._draw_vs_size(name, rows, color)
            self._draw_vs_block(name, rows, color)
        sizes = [m.elements for m in self._plotted["size"]]
        if sizes:  # label the log axis 2^k: pyqtgraph's own minor labels collide on short ranges
            lo, hi = math.floor(math.log2(min(sizes))), math.ceil(math.log2(max(sizes)))
            step = max(1, math.ceil((hi - lo + 1) / 7))
            ticks = [(k * math.log10(2), f"2^{k}") for k in range(lo, hi + 1, step)]
            self.size_plot.getPlotItem().getAxis("bottom").setTicks([ticks, []])
        for plot in (self.size_plot, self.block_plot):
            pi = plot.getPlotItem()
            if result.copy_ceiling_gbps:
                ln = pg.InfiniteLine(
                    pos=result.copy_ceiling_gbps,
                    angle=0,
                    pen=pg.mkPen(style.GOOD, width=1.2, style=Qt.PenStyle.DashLine),
                    label=f"copy ceiling {result.copy_ceiling_gbps:,.0f} GB/s",
                    labelOpts={"color": style.GOOD, "position": 0.08, "anchors": [(0, 0), (0, 0)]},
                )
                pi.addItem(ln)
            if result.peak_dram_gbps:
                ln = pg.InfiniteLine(
                    pos=result.peak_dram_gbps,
                    angle=0,
                    pen=pg.mkPen(style.BAD, width=1.2, style=Qt.PenStyle.DotLine),
                    label=f"theoretical peak {result.peak_dram_gbps:,.0f} GB/s",
                    labelOpts={"color": style.BAD, "position": 0.08, "anchors": [(0, 1), (0, 1)]},
                )
                pi.addItem(ln)
            pi.enableAutoRange()
            pi.autoRange()
        if gpu_any and not self._gpu_ok and self._availability_known:
            self.banner.setText(
                f"<b>No GPU here</b>, so a sweep run here would not be GPU timings. The curves "
                f"below <b>are</b> GPU timings: measured on {html.escape(dev or 'a GPU')} "
                f"({html.escape(str(result.created))}) and loaded from a results file."
            )

    def _best_block_rows(self, rows):
        """At each size, the kernel's default block (or the first one measured)."""
        by_size: dict[int, list] = {}
        for m in rows:
            by_size.setdefault(m.elements, []).append(m)
        out = []
        for n in sorted(by_size):
            group = by_size[n]
            out.append(max(group, key=lambda m: m.bandwidth_gbps) if len(group) > 1 else group[0])
        return out

    def predicted(self, m) -> Prediction | None:
        """What the block scheduler predicts for a measured point: only GPU timings of kernels
        whose grid and occupancy are known (torch peers choose their own grid)."""
        key = (m.kernel, m.elements, m.block_size, m.num_warps, m.median_ms)
        if key not in self._predictions:
            gpu = self._result_spec if m.is_gpu_timing else None
            prediction = None
            if gpu is not None and getattr(m, "grid_blocks", None) and getattr(m, "blocks_per_sm", None):
                try:
                    prediction = predict_bandwidth(gpu, m.grid_blocks, m.blocks_per_sm, m.bytes_moved,
                                                   self.result.copy_ceiling_gbps)
                except (ValueError, UserError):
                    prediction = None
            self._predictions[key] = prediction
        return self._predictions[key]

    def _draw_prediction(self, pi, x, pts, color) -> None:
        """The scheduler's prediction for these points, dashed in the curve's colour."""
        preds = [self.predicted(m) for m in pts]
        if not any(preds):
            return
        y = np.array([p.bandwidth_gbps if p else np.nan for p in preds])
        if not getattr(pi, "_has_prediction_entry", False):  # one neutral legend entry per plot
            pi.plot([], [], pen=pg.mkPen(style.FG, width=1.5, style=Qt.PenStyle.DashLine),
                    name="dashed: simulator's prediction")
            pi._has_prediction_entry = True
        pi.plot(x, y, pen=pg.mkPen(color, width=1.5, style=Qt.PenStyle.DashLine), connect="finite")

    def _draw_vs_size(self, name, rows, color) -> None:
        pi = self.size_plot.getPlotItem()
        pts = self._best_block_rows(rows)
        self._plotted["size"] += pts
        x = np.array([m.elements for m in pts], dtype=float)
        y = np.array([m.bandwidth_gbps for m in pts])
        lo = np.array([m.bandwidth_p20_gbps for m in pts])
        hi = np.array([m.bandwidth_p80_gbps for m in pts])
        lx = np.log10(x)
        c = QColor(color)
        band_lo = pg.PlotDataItem(lx, lo, pen=pg.mkPen(None))
        band_hi = pg.PlotDataItem(lx, hi, pen=pg.mkPen(None))
        band = pg.FillBetweenItem(
            band_lo, band_hi, brush=pg.mkBrush(c.red(), c.green(), c.blue(), 60)
        )
        pi.addItem(band)
        pi.plot(x, y, pen=pg.mkPen(color, width=2), name=name)
        self._draw_prediction(pi, x, pts, color)
        sc = pg.ScatterPlotItem(
            x=lx,
            y=y,
            size=8,
            brush=pg.mkBrush(color),
            pen=pg.mkPen("#000"),
            hoverable=True,
            data=[_tip(m, self.predicted(m)) for m in pts],
            tip=lambda x, y, data: data,
        )
        pi.addItem(sc)

    def _draw_vs_block(self, name, rows, color) -> None:
        blocks = [m for m in rows if m.block_size]
        if not blocks:
            return
        n = max(m.elements for m in blocks)
        pts = sorted((m for m in blocks if m.elements == n), key=lambda m: m.block_size)
        self._plotted["block"] += pts
        pi = self.block_plot.getPlotItem()
        x = np.array([m.block_size for m in pts], dtype=float)
        y = np.array([m.bandwidth_gbps for m in pts])
        lo = np.array([m.bandwidth_p20_gbps for m in pts])
        hi = np.array([m.bandwidth_p80_gbps for m in pts])
        c = QColor(color)
        lx = np.log10(x)
        band = pg.FillBetweenItem(
            pg.PlotDataItem(lx, lo),
            pg.PlotDataItem(lx, hi),
            brush=pg.mkBrush(c.red(), c.green(), c.blue(), 60),
        )
        pi.addItem(band)
        pi.plot(x, y, pen=pg.mkPen(color, width=2), name=f"{name} @ {n:,}")
        self._draw_prediction(pi, x, pts, color)
        pi.addItem(
            pg.ScatterPlotItem(
                x=lx,
                y=y,
                size=8,
                brush=pg.mkBrush(color),
                pen=pg.mkPen("#000"),
                hoverable=True,
                data=[_tip(m, self.predicted(m)) for m in pts],
                tip=lambda x, y, data: data,
            )
        )

    def show_checks(self, results, cancelled: bool = False) -> None:
        self.checks = list(results or [])
        ok = sum(1 for r in self.checks if r.status == "OK")
        fail = [r for r in self.checks if r.status == "FAIL"]
        for r in self.checks:
            err = "" if r.max_abs_err is None else f"  max|err| {r.max_abs_err:.1e}"
            self.log.appendPlainText(
                f"{r.status:4}  {r.kernel:24} {r.backend:6} n={r.elements:<10,} "
                f"on {r.where}{err}  {r.detail}".rstrip()
            )
        summary = (
            f"Correctness: {ok} OK, {len(fail)} FAIL, "
            f"{len(self.checks) - ok - len(fail)} skipped" + (" (cancelled)" if cancelled else "")
        )
        self.log.appendPlainText(summary)
        self.status_message.emit(summary)

    def show_experiments(self, out: dict) -> None:
        self.experiments = dict(out)
        notes = []
        for plot in (self.fused_plot, self.launch_plot, self.steps_plot):
            plot.getPlotItem().clear()
        # eager vs fused
        kc = out.get("count_kernels")
        pi = self.fused_plot.getPlotItem()
        if isinstance(kc, list) and kc:
            names = [k.variant.replace("add_relu_", "") for k in kc]
            x = np.arange(len(kc))
            pi.addItem(
                pg.BarGraphItem(
                    x=x - 0.2,
                    height=[k.count for k in kc],
                    width=0.2,
                    brush=style.ACCENT2,
                    name="kernels",
                )
            )
            pi.addItem(
                pg.BarGraphItem(
                    x=x, height=[k.trips for k in kc], width=0.2, brush=style.ACCENT, name="trips"
                )
            )
            pi.addItem(
                pg.BarGraphItem(
                    x=x + 0.2,
                    height=[k.total_gpu_us for k in kc],
                    width=0.2,
                    brush=style.GOOD,
                    name="GPU µs",
                )
            )
            pi.getAxis("bottom").setTicks([[(i, n) for i, n in enumerate(names)]])
            pi.setLabel("left", "kernels · trips · GPU µs")
            pi.autoRange()
        else:
            notes.append(f"kernel count: {kc}")
            self._text(
                pi,
                "eager: 2 kernels, 5 trips\nfused: 1 kernel, 3 trips\n\n"
                "(counting kernels needs a GPU)",
            )
        # launch vs finish
        lv = out.get("launch_vs_finish")
        pi = self.launch_plot.getPlotItem()
        if lv is not None and not isinstance(lv, str):
            pi.addItem(
                pg.BarGraphItem(
                    x=[0, 1],
                    height=[lv.launch_returned_us, lv.work_finished_us],
                    width=0.6,
                    brushes=[style.ACCENT2, style.ACCENT],
                )
            )
            pi.getAxis("bottom").setTicks([[(0, "launch returned"), (1, "work finished")]])
            pi.setXRange(-0.6, 1.6, padding=0)
            pi.setYRange(0, max(lv.work_finished_us, lv.launch_returned_us) * 1.15, padding=0)
            tag = "" if lv.is_gpu_timing else " · NOT a GPU timing"
            pi.setTitle(
                f"<span style='color:{style.FG};font-size:10pt'>{lv.kernel}, "
                f"{lv.elements:,}{tag}</span>"
            )
            self.launch_plot.setToolTip(
                f"{lv.launch_returned_us:,.1f} µs until the launch call "
                f"returned, {lv.work_finished_us:,.1f} µs until the work "
                f"was done. {lv.method}"
            )
        else:
            notes.append(f"launch vs finish: {lv}")
        # five host steps
        hs = out.get("square_host_steps")
        pi = self.steps_plot.getPlotItem()
        if hs is not None and not isinstance(hs, str):
            for i, s in enumerate(hs.steps):
                pi.addItem(
                    pg.BarGraphItem(
                        x0=[s.start_ms],
                        y=[i],
                        height=0.6,
                        width=[max(s.duration_ms, hs.total_ms * 0.002)],
                        brush=style.ACCENT if s.on_gpu else style.ACCENT2,
                    )
                )
            pi.getAxis("left").setTicks(
                [[(i, f"{s.name} {s.duration_ms:.3g} ms") for i, s in enumerate(hs.steps)]]
            )
            pi.invertY(True)
            pi.autoRange()
            tag = "" if hs.is_gpu_timing else " · NOT a GPU timing"
            pi.setTitle(
                f"<span style='color:{style.FG};font-size:10pt'>square, {hs.elements:,}{tag}</span>"
            )
            self.steps_plot.setToolTip(hs.method)
        else:
            notes.append(f"host steps: {hs}")
        self.exp_note.setText(" · ".join(notes) if notes else "Done.")

    @staticmethod
    def _text(pi, text: str) -> None:
        t = pg.TextItem(text, color=style.MUTED, anchor=(0.5, 0.5))
        pi.addItem(t)
        t.setPos(0.5, 0.5)
        pi.setXRange(0, 1)
        pi.setYRange(0, 1)

    # -- export -----------------------------------------------------------------------------------
    def export_items(self):
        from gui.export import ExportItem

        items = []
        if self.result is not None and self.result.measurements:
            hdr = [
                "kernel",
                "backend",
                "elements",
                "block_size",
                "median_ms",
                "p20_ms",
                "p80_ms",
                "bandwidth_gbps",
                "bandwidth_p20_gbps",
                "bandwidth_p80_gbps",
                "is_gpu_timing",
                "grid_blocks",
                "waves",
                "occupancy",
                "limited_by",
                "predicted_gbps",
                "method",
            ]

            def row(m):
                predicted = self.predicted(m)
                return [
                    m.kernel,
                    m.backend,
                    m.elements,
                    m.block_size,
                    m.median_ms,
                    m.p20_ms,
                    m.p80_ms,
                    m.bandwidth_gbps,
                    m.bandwidth_p20_gbps,
                    m.bandwidth_p80_gbps,
                    m.is_gpu_timing,
                    getattr(m, "grid_blocks", None),
                    getattr(m, "waves", None),
                    getattr(m, "occupancy", None),
                    " ".join(getattr(m, "limited_by", ()) or ()),
                    predicted.bandwidth_gbps if predicted else None,
                    m.method,
                ]

            plotted = getattr(self, "_plotted", {"size": [], "block": []})
            # each plot's CSV holds the points it draws; session.json keeps every measurement
            items.append(
                ExportItem(
                    "bandwidth_vs_size",
                    self.size_plot.getPlotItem(),
                    hdr,
                    [row(m) for m in plotted["size"]],
                )
            )
            items.append(
                ExportItem(
                    "bandwidth_vs_block",
                    self.block_plot.getPlotItem(),
                    hdr,
                    [row(m) for m in plotted["block"]],
                )
            )
        if self.experiments:
            kc = self.experiments.get("count_kernels")
            if isinstance(kc, list):
                items.append(
                    ExportItem(
                        "add_relu_eager_vs_fused",
                        self.fused_plot.getPlotItem(),
                        ["variant", "kernels", "trips", "gpu_us"],
                        [[k.variant, k.count, k.trips, k.total_gpu_us] for k in kc],
                    )
                )
            lv = self.experiments.get("launch_vs_finish")
            if lv is not None and not isinstance(lv, str):
                items.append(
                    ExportItem(
                        "launch_vs_finish",
                        self.launch_plot.getPlotItem(),
                        [
                            "kernel",
                            "elements",
                            "launch_returned_us",
                            "work_finished_us",
                            "is_gpu_timing",
                        ],
                        [
                            [
                                lv.kernel,
                                lv.elements,
                                lv.launch_returned_us,
                                lv.work_finished_us,
                                lv.is_gpu_timing,
                            ]
                        ],
                    )
                )
            hs = self.experiments.get("square_host_steps")
            if hs is not None and not isinstance(hs, str):
                items.append(
                    ExportItem(
                        "square_host_steps",
                        self.steps_plot.getPlotItem(),
                        ["step", "start_ms", "duration_ms", "on_gpu"],
                        [[s.name, s.start_ms, s.duration_ms, s.on_gpu] for s in hs.steps],
                    )
                )
        return items

    def session_dict(self) -> dict:
        out: dict[str, Any] = {}
        if self.result is not None:
            try:
                from kernels.results import to_dict

                out["bench"] = to_dict(self.result)
            except Exception:  # noqa: BLE001 - a fake result in tests, or kernels missing
                from dataclasses import asdict, is_dataclass

                out["bench"] = (
                    asdict(self.result) if is_dataclass(self.result) else str(self.result)
                )
        if self.checks:
            from dataclasses import asdict

            out["checks"] = [asdict(r) for r in self.checks]
        if self.experiments:
            from dataclasses import asdict, is_dataclass

            exp = {}
            for k, v in self.experiments.items():
                if isinstance(v, list):
                    exp[k] = [asdict(x) for x in v]
                elif is_dataclass(v):
                    exp[k] = asdict(v)
                else:
                    exp[k] = str(v)
            out["experiments"] = exp
        return out
