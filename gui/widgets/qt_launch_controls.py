"""QtLaunchControls: the docked form that edits the LaunchModel.

Every control writes to the model through one handler; the model's `changed` signal writes back to
the controls (with signals blocked), so the model stays the single source of truth.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gui.model import CUSTOM_KERNEL, MAX_ELEMENTS, MAX_REGS, MAX_SMEM, LaunchModel, LaunchState
from gui.simrun import COST_MODELS, PLACEMENTS
from sim.errors import UserError
from sim.units import parse_count

LOG_STEPS = 310  # elements slider: 10 steps per power of two, 2^0 .. 2^31


def elements_to_slider(n: int) -> int:
    return round(math.log2(max(1, n)) * 10)


def slider_to_elements(v: int) -> int:
    n = round(2 ** (v / 10))
    if v % 10 == 0:
        return 2 ** (v // 10)
    # round to 3 significant figures so the numbers read well (1,000,000 not 1,048,576 off by one)
    digits = max(0, len(str(n)) - 3)
    return max(1, min(MAX_ELEMENTS, round(n, -digits)))


class CountSpinBox(QDoubleSpinBox):
    """A whole-number box (past QSpinBox's 2^31 - 1) that reads what the command line reads:
    1000000, 1e6, 2^20, 4M. A number out of range goes to the nearest end; anything else is
    left as typed until Enter or leaving the box puts back the last good value."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(0)

    def _parse(self, text: str) -> int | None:
        text = text.strip().replace(self.locale().groupSeparator(), "")
        try:
            return parse_count(text)
        except UserError:
            return None

    def validate(self, text: str, pos: int):
        v = self._parse(text)
        ok = v is not None and self.minimum() <= v <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def fixup(self, text: str) -> str:
        v = self._parse(text)
        if v is None:
            return text  # not a number: the box puts back the last good value
        return self.textFromValue(float(min(max(v, self.minimum()), self.maximum())))

    def valueFromText(self, text: str) -> float:
        v = self._parse(text)
        return self.value() if v is None else float(min(max(v, self.minimum()), self.maximum()))


def _form_box(title: str) -> tuple[QGroupBox, QFormLayout]:
    """A titled group of labelled rows, laid out the same way in every section."""
    box = QGroupBox(title)
    form = QFormLayout(box)
    form.setVerticalSpacing(4)
    form.setContentsMargins(6, 4, 6, 4)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
    return box, form


def _row(*widgets) -> QWidget:
    w = QWidget()
    lay = QHBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(6)
    for x in widgets:
        lay.addWidget(x)
    return w


class QtLaunchControls(QWidget):
    """GPU, kernel, elements, threads per block, registers, shared memory, carveout."""

    simulation_options_changed = Signal(str, str)  # cost model, placement

    def __init__(self, model: LaunchModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._syncing = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 4, 6, 4)
        outer.setSpacing(2)

        # -- device and kernel --------------------------------------------------------------------
        box, form = _form_box("Device and kernel")
        self.gpu = QComboBox()
        self.gpu.setToolTip(
            "The GPU to model: a detected device is listed first, then every preset."
        )
        self.kernel = QComboBox()
        self.kernel.setToolTip(
            "A kernel from the registry (sets the block parameter), or 'custom' "
            "to set registers and shared memory by hand."
        )
        self.kernel_note = QLabel("")
        self.kernel_note.setWordWrap(True)
        self.kernel_note.setProperty("role", "muted")
        self.gpu_note = QLabel("")
        self.gpu_note.setWordWrap(True)
        self.gpu_note.setProperty("role", "muted")
        form.addRow("GPU", self.gpu)
        form.addRow("", self.gpu_note)
        form.addRow("Kernel", self.kernel)
        form.addRow("", self.kernel_note)
        outer.addWidget(box)

        # -- launch -------------------------------------------------------------------------------
        box, form = _form_box("Launch")
        self.elements_slider = QSlider(Qt.Orientation.Horizontal)
        self.elements_slider.setRange(0, LOG_STEPS)
        self.elements_slider.setToolTip("Number of array elements, on a log scale from 1 to 2^31.")
        self.elements = CountSpinBox()  # QSpinBox stops at 2^31 - 1; we go to 2^31
        self.elements.setRange(1, MAX_ELEMENTS)
        self.elements.setGroupSeparatorShown(True)
        self.elements.setToolTip(
            "Exact number of elements the kernel processes (1 to 2^31): 1000000, 1e6, 2^20 or 4M."
        )
        self.elements.setMinimumWidth(120)
        form.addRow("Elements", _row(self.elements_slider, self.elements))

        self.threads_slider = QSlider(Qt.Orientation.Horizontal)
        self.threads_slider.setRange(1, 1024)
        self.threads_slider.setToolTip(
            "Threads per block (1 to 1024); the hardware runs them in warps of 32."
        )
        self.threads = QSpinBox()
        self.threads.setRange(1, 1024)
        self.threads.setToolTip(
            "Exact threads per block; sizes that are not a multiple of 32 leave "
            "lanes of the last warp idle."
        )
        self.snap = QCheckBox("snap to multiples of 32")
        self.snap.setChecked(True)
        self.snap.setToolTip(
            "Round the slider to whole warps; untick it to try odd sizes and see the idle lanes."
        )
        form.addRow("Threads / block", _row(self.threads_slider, self.threads))
        form.addRow("", self.snap)
        self.ept_note = QLabel("")
        self.ept_note.setProperty("role", "muted")
        self.ept_note.setWordWrap(True)
        form.addRow("", self.ept_note)
        outer.addWidget(box)

        # -- resources ----------------------------------------------------------------------------
        box, form = _form_box("Resources per thread / block")
        self.regs_slider = QSlider(Qt.Orientation.Horizontal)
        self.regs_slider.setRange(0, 255)
        self.regs_slider.setToolTip(
            "Registers each thread uses (0 = ignore registers); more "
            "registers can mean fewer blocks per SM."
        )
        self.regs = QSpinBox()
        self.regs.setRange(0, MAX_REGS)
        self.regs.setToolTip(
            "Exact registers per thread, as the compiler reports them "
            "(Triton n_regs, Numba get_regs_per_thread)."
        )
        form.addRow("Registers", _row(self.regs_slider, self.regs))
        self.smem_slider = QSlider(Qt.Orientation.Horizontal)
        self.smem_slider.setRange(0, 228)
        self.smem_slider.setToolTip("Shared memory per block in KiB, static plus dynamic.")
        self.smem = QSpinBox()
        self.smem.setRange(0, MAX_SMEM)
        self.smem.setSingleStep(1024)
        self.smem.setSuffix(" B")
        self.smem.setGroupSeparatorShown(True)
        self.smem.setToolTip(
            "Exact shared memory per block in bytes (static plus dynamic); the "
            "driver adds its own per-block reserve."
        )
        self.smem.setMinimumWidth(120)
        form.addRow("Shared mem", _row(self.smem_slider, self.smem))
        self.carveout = QComboBox()
        self.carveout.setToolTip(
            "How much of the SM's L1/shared storage is set aside as shared "
            "memory; 'driver default' lets the driver take the maximum."
        )
        form.addRow("Carveout", self.carveout)
        outer.addWidget(box)

        # -- simulation ---------------------------------------------------------------------------
        box, form = _form_box("Scheduler model")
        self.cost = QComboBox()
        self.cost.addItems(list(COST_MODELS))
        self.cost.setToolTip(
            "How long each block runs: all the same (uniform), or its bytes over "
            "its share of DRAM bandwidth (memory-bound)."
        )
        self.placement = QComboBox()
        self.placement.addItems(list(PLACEMENTS))
        self.placement.setToolTip(
            "Which free SM takes the next block: SM 0, 1, 2… in order, or "
            "spread over TPCs and GPCs as recorded on an H200."
        )
        form.addRow("Block cost", self.cost)
        form.addRow("Placement", self.placement)
        outer.addWidget(box)

        self.error = QLabel("")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        outer.addWidget(self.error)
        outer.addStretch(1)

        self._populate_gpus()
        self._populate_kernels()
        self._on_model_changed(model.state)

        # model -> view
        model.changed.connect(self._on_model_changed)
        model.rejected.connect(self._on_model_rejected)
        model.specs_changed.connect(self._populate_gpus)
        model.kernels_changed.connect(self._populate_kernels)
        # view -> model
        self.gpu.currentTextChanged.connect(self._on_gpu_selected)
        self.kernel.currentIndexChanged.connect(self._on_kernel_selected)
        self.elements_slider.valueChanged.connect(self._on_elements_slider)
        self.elements.valueChanged.connect(self._on_elements_spin)
        self.threads_slider.valueChanged.connect(self._on_threads_slider)
        self.threads.valueChanged.connect(self._on_threads_spin)
        self.snap.toggled.connect(self._on_snap_toggled)
        self.regs_slider.valueChanged.connect(self._on_regs_slider)
        self.regs.valueChanged.connect(self._on_regs_spin)
        self.smem_slider.valueChanged.connect(self._on_smem_slider)
        self.smem.valueChanged.connect(self._on_smem_spin)
        self.carveout.currentIndexChanged.connect(self._on_carveout_selected)
        self.cost.currentTextChanged.connect(self._on_sim_options)
        self.placement.currentTextChanged.connect(self._on_sim_options)

    # -- model -> controls ------------------------------------------------------------------------
    def _populate_gpus(self) -> None:
        self._syncing = True
        self.gpu.clear()
        self.gpu.addItems(self.model.gpu_names())
        self.gpu.setCurrentText(self.model.inputs.gpu)
        self._syncing = False

    def _populate_kernels(self) -> None:
        self._syncing = True
        self.kernel.clear()
        for k in self.model.kernels():
            label = (
                "custom (set resources by hand)"
                if k.name == CUSTOM_KERNEL
                else f"{k.name}  [{k.backend}]"
            )
            self.kernel.addItem(label, k.name)
            self.kernel.setItemData(
                self.kernel.count() - 1, k.description or k.title, Qt.ItemDataRole.ToolTipRole
            )
        idx = self.kernel.findData(self.model.inputs.kernel)
        self.kernel.setCurrentIndex(max(0, idx))
        self._syncing = False

    def _populate_carveout(self, state: LaunchState) -> None:
        spec = state.spec
        self.carveout.clear()
        self.carveout.addItem("driver default (max shared)", None)
        for kib in spec.smem_carveout_steps_kib:
            # floor: the driver rounds a preferred percentage *up* to the next step, so the
            # percentage just under this step's share selects exactly this step
            pct = (kib * 1024 * 100) // spec.smem_per_sm_bytes if spec.smem_per_sm_bytes else 0
            self.carveout.addItem(f"{kib} KiB shared ({pct}%)", pct)
        idx = self.carveout.findData(state.inputs.carveout_percent)
        if idx < 0 and state.inputs.carveout_percent is not None:
            # a percentage picked on another GPU (or typed elsewhere) that is none of this GPU's
            # steps: show it as it is used, not as "driver default"
            pct = state.inputs.carveout_percent
            got = (
                f" → {state.occ.smem_per_sm_config_bytes // 1024} KiB shared"
                if state.occ is not None and state.occ.smem_per_sm_config_bytes
                else ""
            )
            self.carveout.addItem(f"{pct}% preferred{got}", pct)
            idx = self.carveout.count() - 1
        self.carveout.setCurrentIndex(max(0, idx))

    def _on_model_changed(self, state: LaunchState) -> None:
        self._syncing = True
        try:
            i, spec = state.inputs, state.spec
            if self.gpu.currentText() != i.gpu:
                self.gpu.setCurrentText(i.gpu)
            idx = self.kernel.findData(i.kernel)
            if idx >= 0 and idx != self.kernel.currentIndex():
                self.kernel.setCurrentIndex(idx)
            k = self.model.kernel(i.kernel)
            note = (
                k.description
                if k.name != CUSTOM_KERNEL
                else "Registers and shared memory below are yours to set."
            )
            measured = self.model.measured_resources(k.name)
            if measured is not None:
                note += (
                    f" Compiled: {measured[0]} registers/thread, {measured[1]:,} B shared "
                    "(from bench results)."
                )
            self.kernel_note.setText(note)
            self.gpu_note.setText(
                f"cc {spec.cc_string} · "
                f"{spec.sm_count} SMs · {spec.max_warps_per_sm} warp slots/SM · "
                f"{spec.peak_dram_gbps:,.0f} GB/s" + (" · detected" if spec.detected else "")
            )
            # only on a real change: rewriting a box mid-typing moves the cursor (1,234,567 typed
            # became 1,235,467)
            if self.elements.value() != i.elements:
                self.elements.setValue(float(i.elements))
            self.elements_slider.setValue(elements_to_slider(i.elements))
            self.threads.setMaximum(max(1024, spec.max_threads_per_block))
            self.threads_slider.setMaximum(spec.max_threads_per_block)
            if self.threads.value() != i.threads_per_block:
                self.threads.setValue(i.threads_per_block)
            self.threads_slider.setValue(i.threads_per_block)
            if i.threads_per_block % 32 and self.snap.isChecked():
                self.snap.setChecked(False)  # an odd size came from elsewhere: show it as it is
                self.threads_slider.setSingleStep(1)
            self.regs_slider.setMaximum(spec.max_regs_per_thread)
            if self.regs.value() != i.regs_per_thread:
                self.regs.setValue(i.regs_per_thread)
            self.regs_slider.setValue(min(i.regs_per_thread, spec.max_regs_per_thread))
            self.smem_slider.setMaximum(spec.smem_per_block_optin_bytes // 1024)
            if self.smem.value() != i.smem_per_block:
                self.smem.setValue(i.smem_per_block)
            self.smem_slider.setValue(i.smem_per_block // 1024)
            self._populate_carveout(state)
            if i.elements_per_thread > 1:
                self.ept_note.setText(
                    f"Triton program: BLOCK_SIZE = {i.elements_per_thread * i.threads_per_block:,} "
                    f"elements run by {i.threads_per_block} threads ({math.ceil(i.threads_per_block / 32)} "
                    f"warps), {i.elements_per_thread} elements per thread."
                )
                self.ept_note.show()
            else:
                self.ept_note.hide()
            msg = state.message()
            self.error.setText(msg)
        finally:
            self._syncing = False

    def _on_model_rejected(self, message: str) -> None:
        self.error.setText(message)
        # put the controls back to what the model holds
        self._on_model_changed(self.model.state)
        self.error.setText(message)

    # -- controls -> model ------------------------------------------------------------------------
    def _push(self, **changes) -> None:
        if not self._syncing:
            self.model.update(**changes)

    def _on_gpu_selected(self, name: str) -> None:
        if name and not self._syncing:
            self.model.update(gpu=name)

    def _on_kernel_selected(self, index: int) -> None:
        if self._syncing or index < 0:
            return
        self.model.select_kernel(self.kernel.itemData(index))

    def _on_elements_slider(self, v: int) -> None:
        self._push(elements=slider_to_elements(v))

    def _on_elements_spin(self, v: int) -> None:
        self._push(elements=round(v))

    def _snap(self, v: int) -> int:
        if self.snap.isChecked():
            return max(32, min(self.threads_slider.maximum(), round(v / 32) * 32))
        return v

    def _on_threads_slider(self, v: int) -> None:
        if self._syncing:
            return
        snapped = self._snap(v)
        if snapped != v:
            self.threads_slider.blockSignals(True)
            self.threads_slider.setValue(snapped)
            self.threads_slider.blockSignals(False)
        self._push(threads_per_block=snapped)

    def _on_threads_spin(self, v: int) -> None:
        self._push(threads_per_block=int(v))  # typed values are taken as typed (odd sizes allowed)

    def _on_snap_toggled(self, on: bool) -> None:
        self.threads_slider.setSingleStep(32 if on else 1)
        self.threads_slider.setPageStep(128 if on else 32)
        if on:
            self._push(threads_per_block=self._snap(self.model.inputs.threads_per_block))

    def _on_regs_slider(self, v: int) -> None:
        self._push(regs_per_thread=int(v))

    def _on_regs_spin(self, v: int) -> None:
        self._push(regs_per_thread=int(v))

    def _on_smem_slider(self, v: int) -> None:
        self._push(smem_per_block=int(v) * 1024)

    def _on_smem_spin(self, v: int) -> None:
        self._push(smem_per_block=int(v))

    def _on_carveout_selected(self, index: int) -> None:
        if self._syncing or index < 0:
            return
        self.model.update(carveout_percent=self.carveout.itemData(index))

    def _on_sim_options(self, _text: str) -> None:
        self.simulation_options_changed.emit(self.cost.currentText(), self.placement.currentText())

    def set_sim_options(self, cost: str, placement: str) -> None:
        if cost in COST_MODELS:
            self.cost.setCurrentText(cost)
        if placement in PLACEMENTS:
            self.placement.setCurrentText(placement)
