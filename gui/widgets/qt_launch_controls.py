"""QtLaunchControls: the docked form that edits the LaunchModel and the SimulationOptions.

Every control writes to a model; the models' signals write back to the controls (with the
controls' own handlers muted), so the models stay the single source of truth. Number boxes act on
Enter or when they lose focus (not on every keystroke) and read what the command line reads.
"""

from __future__ import annotations

import math
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFrame,
                               QGroupBox, QHBoxLayout, QLabel, QScrollArea, QSlider, QVBoxLayout,
                               QWidget)

from gui import style
from gui.models.kernel_menu import AVAILABLE, Availability, menu_entry, status_note
from gui.models.launch import (CUSTOM_KERNEL, MAX_ELEMENTS, MAX_REGS, MAX_SMEM, LaunchModel,
                               LaunchState, launch_dims)
from gui.models.simulation import SimulationOptions
from gui.widgets.box_message import BoxMessage
from gui.widgets.number_box import NumberBox
from gui.widgets.launch_shape_boxes import LaunchShapeBoxes, RegisterCapBox
from gui.widgets.qt_kernel_source import QtKernelResources
from gui.widgets.scheduler_form import SchedulerForm, form_box, note

LOG_STEPS = 310  # elements slider: 10 steps per power of two, 2^0 .. 2^31
MAX_THREADS_BOX = 1 << 16  # the box takes more than any GPU allows, so the reason can be shown


def fmt_kib(n: int) -> str:
    """Bytes in KiB, as exact as a tenth: 32 KiB, 20.6 KiB."""
    return f"{n / 1024:,.1f}".rstrip("0").rstrip(".") + " KiB"


def elements_to_slider(n: int) -> int:
    return round(math.log2(max(1, n)) * 10)


def slider_to_elements(v: int) -> int:
    if v % 10 == 0:
        return 2 ** (v // 10)
    n = round(2 ** (v / 10))
    # round to 3 significant figures so the numbers read well (1,000,000 not 1,048,576 off by one)
    return max(1, min(MAX_ELEMENTS, round(n, -max(0, len(str(n)) - 3))))


def _row(*widgets) -> QWidget:
    w = QWidget()
    lay = QHBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(6)
    for x in widgets:
        lay.addWidget(x)
    return w


class QtLaunchControls(QWidget):
    """GPU, kernel, elements, block, registers, shared memory, carveout, and the scheduler model.
    A message shows beside the control that caused it (gui.widgets.box_message), moving
    nothing, and clears once the input is valid."""

    def __init__(self, model: LaunchModel, options: SimulationOptions,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model, self.options = model, options
        self._syncing = False
        self.availability = Availability()  # the kernel host's answer: loading until it comes
        self._events, self._mark, self._clamp_note = 0, -1, ""  # the message a typed edit leaves
        lay = self._build_scroll_form()
        lay.addWidget(self._build_device_group(model))
        lay.addWidget(self._build_launch_group())
        lay.addWidget(self._build_resources_group())
        self.scheduler = SchedulerForm(model, options)
        self.cost, self.placement, self.schedule, self.wait = self.scheduler.combos()
        self.schedule_note = self.scheduler.schedule_note
        lay.addWidget(self.scheduler.box)
        lay.addStretch(1)
        self._size_controls()

        self._populate_gpus()
        self._populate_kernels()
        self._on_model_changed(model.state)

        self._connect_model(model, options)
        self._connect_controls()

    def _build_scroll_form(self) -> QVBoxLayout:
        """The scroll area the sections sit in, with the message that floats over it."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        form_widget = QWidget()
        lay = QVBoxLayout(form_widget)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(2)
        scroll = QScrollArea()
        scroll.setWidget(form_widget)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(scroll, 1)
        self.scroll = scroll
        self.error = BoxMessage(form_widget, scroll)  # over the form, beside the box it is about
        self._source: QWidget | None = None  # the control the user changed last
        return lay

    def _build_device_group(self, model: LaunchModel) -> QGroupBox:
        """GPU, kernel and the kernel's resources."""
        box, form = form_box("Device and kernel")
        self.gpu = QComboBox()
        self.gpu.setToolTip("The GPU to model: a detected device is listed first, then every preset.")
        self.kernel = QComboBox()
        self.kernel.setToolTip("A kernel from the registry or from a file you opened (File ▸ Open "
                               "kernel…): its own grid rule sets the grid and its compiler the "
                               "registers. 'custom': set registers and shared memory by hand.")
        self.gpu_note, self.kernel_note = note(), note()
        self.resources = QtKernelResources(model)
        form.addRow("GPU", self.gpu)
        form.addRow(self.gpu_note)
        form.addRow("Kernel", self.kernel)
        form.addRow(self.kernel_note)
        form.addRow(self.resources)
        return box

    def _build_launch_group(self) -> QGroupBox:
        """Elements, threads per block, block shape and cluster, BLOCK_SIZE."""
        box, form = form_box("Launch")
        self.elements_slider = QSlider(Qt.Orientation.Horizontal)
        self.elements_slider.setRange(0, LOG_STEPS)
        self.elements_slider.setToolTip("Number of array elements, on a log scale from 1 to 2^31.")
        self.elements = NumberBox("elements", 1, MAX_ELEMENTS)
        self.elements.setToolTip("Exact number of elements the kernel processes (1 to 2^31): "
                                 "1000000, 1e6, 2^20 or 4M. Enter applies it.")
        self.elements_label = QLabel("Elements")  # "Size n" for a kernel of named sizes (a matmul)
        form.addRow(self.elements_label, _row(self.elements_slider, self.elements))
        self.threads_slider = QSlider(Qt.Orientation.Horizontal)
        self.threads_slider.setRange(1, 1024)
        self.threads_slider.setToolTip("Threads per block (1 to 1024); the hardware runs them in warps of 32.")
        self.threads = NumberBox("threads_per_block", 1, MAX_THREADS_BOX)
        self.threads.setToolTip("Exact threads per block; sizes that are not a multiple of 32 leave "
                                "lanes of the last warp idle. Enter applies it.")
        self.snap = QCheckBox("slider snaps to warps (32)")
        self.snap.setChecked(True)
        self.snap.setToolTip("Round the slider to whole warps; typed sizes are always taken as "
                             "typed, to show idle lanes.")
        form.addRow("Threads / block", _row(self.threads_slider, self.threads))
        form.addRow(self.snap)
        self.shape = LaunchShapeBoxes(form, _row, self._push, self._on_model_rejected,
                                      self._on_box_clamped)  # block x · y · z, cluster
        self.block_size = NumberBox("block_size", 1, 1 << 17)
        self.block_size.setToolTip("A Triton program's BLOCK_SIZE: elements one program (block) "
                                   "handles; a power of two.")
        self.block_size_label = QLabel("BLOCK_SIZE")
        form.addRow(self.block_size_label, self.block_size)
        self.ept_note = note()
        form.addRow(self.ept_note)
        return box

    def _build_resources_group(self) -> QGroupBox:
        """Registers, shared memory, carveout and the register cap."""
        box, form = form_box("Resources per thread / block")
        self.regs_slider = QSlider(Qt.Orientation.Horizontal)
        self.regs_slider.setRange(0, 255)
        self.regs_slider.setToolTip("Registers each thread uses (0 = ignore registers); more "
                                    "registers can mean fewer blocks per SM.")
        self.regs = NumberBox("regs_per_thread", 0, MAX_REGS)
        self.regs.setToolTip("Exact registers per thread, as the compiler reports them "
                             "(Triton n_regs, Numba get_regs_per_thread).")
        form.addRow("Registers", _row(self.regs_slider, self.regs))
        self.smem_slider = QSlider(Qt.Orientation.Horizontal)
        self.smem_slider.setRange(0, 228)
        self.smem_slider.setToolTip("Shared memory per block in KiB, static plus dynamic.")
        self.smem = NumberBox("smem_per_block", 0, MAX_SMEM, " B")
        self.smem.setSingleStep(1024)
        self.smem.setToolTip("Exact shared memory per block (static plus dynamic): 49152, 48K or "
                             "48KiB; the driver adds its own per-block reserve.")
        form.addRow("Shared mem", _row(self.smem_slider, self.smem))
        self.carveout = QComboBox()
        self.carveout.setToolTip("How much of the SM's L1/shared storage is set aside as shared "
                                 "memory; 'driver default' lets the driver take the maximum.")
        self.carveout_note = note()
        form.addRow("Carveout", self.carveout)
        self.max_regs = RegisterCapBox(form, self._push, self._on_model_rejected, self._on_box_clamped)
        form.addRow(self.carveout_note)
        return box

    def _size_controls(self) -> None:
        """Minimum widths, so the controls fit a narrow dock."""
        for w in (self.elements, self.smem):  # stepping a million elements by one helps nobody
            w.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)
            w.setMinimumWidth(100)  # 2,147,483,648 and 1,048,576 B fit
        for w in (self.threads, self.regs, self.block_size):
            w.setMinimumWidth(76)
        for w in (self.elements_slider, self.threads_slider, self.regs_slider, self.smem_slider):
            w.setMinimumWidth(40)
        for w in (self.gpu, self.kernel, self.carveout, self.cost, self.placement, self.schedule,
                  self.wait):
            # a long entry is elided in a narrow dock instead of widening the whole panel
            w.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(8)

    def _connect_model(self, model: LaunchModel, options: SimulationOptions) -> None:
        """Model -> view."""
        model.changed.connect(self._on_model_changed)
        model.rejected.connect(self._on_model_rejected)
        model.specs_changed.connect(self._populate_gpus)
        model.kernels_changed.connect(self._populate_kernels)

    def _connect_controls(self) -> None:
        """View -> model; first, which control a message will be about."""
        for slider, box in ((self.elements_slider, self.elements), (self.threads_slider, self.threads),
                            (self.regs_slider, self.regs), (self.smem_slider, self.smem)):
            slider.valueChanged.connect(partial(self._note_source, box))
        shape_boxes = (*self.shape.xyz, self.shape.cluster, self.max_regs)  # they push themselves
        for box in (self.elements, self.threads, self.regs, self.smem, self.block_size, *shape_boxes):
            box.lineEdit().textEdited.connect(partial(self._note_source, box))
            box.valueChanged.connect(partial(self._note_source, box))
        for combo in (self.gpu, self.kernel, self.carveout):
            combo.activated.connect(partial(self._note_source, combo))
        self.gpu.currentTextChanged.connect(self._on_gpu_selected)
        self.kernel.currentIndexChanged.connect(self._on_kernel_selected)
        self.elements_slider.valueChanged.connect(self._on_elements_slider)
        self.threads_slider.valueChanged.connect(self._on_threads_slider)
        self.snap.toggled.connect(self._on_snap_toggled)
        self._on_snap_toggled(self.snap.isChecked())  # arrows move a warp (a step of 1 snapped back)
        self.regs_slider.valueChanged.connect(self._on_regs_slider)
        self.smem_slider.valueChanged.connect(self._on_smem_slider)
        for box in (self.elements, self.threads, self.regs, self.smem, self.block_size):
            box.valueChanged.connect(self._on_box_changed)
            box.refused.connect(self._on_model_rejected)
            box.clamped.connect(self._on_box_clamped)
            box.lineEdit().textEdited.connect(self._on_box_edited)
            box.editingFinished.connect(self._on_box_done)
        for box in shape_boxes:
            box.lineEdit().textEdited.connect(self._on_box_edited)
            box.editingFinished.connect(self._on_box_done)
        self.carveout.currentIndexChanged.connect(self._on_carveout_selected)

    def sizeHint(self):
        """As tall as the whole form (the dock shows it all when there is room)."""
        hint = super().sizeHint()
        inner = self.scroll.widget().sizeHint()
        hint.setHeight(inner.height())
        return hint

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
        self.kernel.addItem("custom (by hand)", CUSTOM_KERNEL)
        yours = False
        for k in self.model.kernels():
            if k.origin != "built-in" and not yours:  # opened from a file: after the built-ins
                self.kernel.insertSeparator(self.kernel.count())
                yours = True
            label, tip, status = menu_entry(k, self.availability)
            self.kernel.addItem(label, k.name)
            self.kernel.setItemData(self.kernel.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            if status != AVAILABLE:  # listed at once, greyed until the kernel host says
                self.kernel.setItemData(self.kernel.count() - 1, QColor(style.MUTED),
                                        Qt.ItemDataRole.ForegroundRole)
        self.kernel.setCurrentIndex(max(0, self.kernel.findData(self.model.inputs.kernel)))
        self._syncing = False

    def _populate_carveout(self, state: LaunchState) -> None:
        spec, pct_now = state.spec, state.inputs.carveout_percent
        self.carveout.clear()
        self.carveout.addItem("driver default (max)", None)
        for kib in spec.smem_carveout_steps_kib:
            # floor: the driver rounds a preferred percentage *up* to the next step, so the
            # percentage just under this step's share selects exactly this step
            pct = (kib * 1024 * 100) // spec.smem_per_sm_bytes if spec.smem_per_sm_bytes else 0
            self.carveout.addItem(f"{kib} KiB shared ({pct}%)", pct)
        idx = self.carveout.findData(pct_now)
        if idx < 0 and pct_now is not None:
            # a percentage picked on another GPU that is none of this GPU's steps: show it as used
            self.carveout.addItem(f"{pct_now}% preferred", pct_now)
            idx = self.carveout.count() - 1
        self.carveout.setCurrentIndex(max(0, idx))
        occ = state.occ
        if occ is not None and occ.carveout_raised:
            self.carveout_note.setText(
                f"The driver uses {fmt_kib(occ.smem_per_sm_config_bytes)} of shared memory per SM, "
                f"more than the {fmt_kib(occ.smem_per_sm_preferred_bytes)} asked for: one block "
                f"needs {fmt_kib(occ.smem_allocated_per_block_bytes)}.")
        elif occ is not None and occ.smem_per_sm_config_bytes:
            self.carveout_note.setText(f"Shared memory per SM: {fmt_kib(occ.smem_per_sm_config_bytes)}.")
        else:
            self.carveout_note.setText("")

    @staticmethod
    def _set_box(box: NumberBox, value: int) -> None:
        # only on a real change: rewriting a box the user is in moves the cursor
        if box.int_value() != value:
            box.setValue(float(value))

    def _on_model_changed(self, state: LaunchState) -> None:
        self._syncing = True
        try:
            i, spec = state.inputs, state.spec
            if self.gpu.currentText() != i.gpu:
                self.gpu.setCurrentText(i.gpu)
            idx = self.kernel.findData(i.kernel)
            if idx >= 0 and idx != self.kernel.currentIndex():
                self.kernel.setCurrentIndex(idx)
            self._show_kernel_note(state)
            self.gpu_note.setText(f"cc {spec.cc_string} · {spec.sm_count} SMs · {spec.max_warps_per_sm} "
                                  f"warp slots/SM · {spec.peak_dram_gbps:,.0f} GB/s"
                                  + (" · detected" if spec.detected else ""))
            self._set_box(self.elements, i.elements)
            self.elements_slider.setValue(elements_to_slider(i.elements))
            self.threads_slider.setMaximum(spec.max_threads_per_block)
            self._set_box(self.threads, i.threads_per_block)
            self.shape.sync(state, self._set_box)
            self._set_box(self.max_regs, i.max_registers)
            self.threads_slider.setValue(min(i.threads_per_block, spec.max_threads_per_block))
            self.regs_slider.setMaximum(spec.max_regs_per_thread)
            self._set_box(self.regs, i.regs_per_thread)
            self.regs_slider.setValue(min(i.regs_per_thread, spec.max_regs_per_thread))
            self.smem_slider.setMaximum(spec.smem_per_block_optin_bytes // 1024)
            self._set_box(self.smem, i.smem_per_block)
            self.smem_slider.setValue(i.smem_per_block // 1024)
            self._populate_carveout(state)
            self.scheduler.show_launch(state)
            triton = i.block_size is not None
            self.block_size.setVisible(triton)
            self.block_size_label.setVisible(triton)
            if triton:
                self._set_box(self.block_size, i.block_size)
            self._name_size_boxes(state)
            self._events += 1
            self._show_error(_refusal(state) or self._clamp_note)
        finally:
            self._syncing = False

    def _name_size_boxes(self, state: LaunchState) -> None:
        """The boxes say what they set: a matmul's size n is M = N = K, its block parameter BLOCK_M."""
        if state.asking:  # the kernel's sizes are being asked: the boxes keep their names
            return
        k = self.model.launched_kernel()  # matmul_auto: the candidate it launches, BLOCK_M
        sizes = state.geometry.sizes if state.geometry is not None else ()
        self.elements_label.setText("Size n" if sizes else "Elements")
        self.elements_label.setToolTip(f"{' = '.join(n for n, _ in sizes)} = n (a point of the Waves "
                                       "tab sets them apart)" if sizes else "")
        param = k.sweep if k is not None and k.sweep else "BLOCK_SIZE"
        self.block_size_label.setText(param)
        self.block_size.setToolTip(
            f"A Triton program's {param}: elements one program (block) handles; a power of two."
            if param == "BLOCK_SIZE" else f"The kernel's block parameter {param} (a power of two): "
            "with the others it sets the tile each program computes.")

    def set_availability(self, availability: Availability) -> None:
        """What the kernel host said about the backends (gui/live_kernels.py): the menu's marks."""
        self.availability = availability
        self._populate_kernels()
        self._show_kernel_note(self.model.state)

    def _show_kernel_note(self, state: LaunchState) -> None:
        k, i, g = self.model.kernel(), state.inputs, state.geometry
        note = ((k.description or k.title) if k is not None
                else "Registers and shared memory below are yours to set.")
        status = status_note(k, self.availability) if k is not None else ""
        self.kernel_note.setText(f"{note}\n{status}" if status else note)
        if state.asking:  # the kernel's file is working out its grid (gui/models/kernel_rules.py)
            self.ept_note.setText(state.asking)
            self.ept_note.show()
            return
        if g is None or k is None:
            self.ept_note.hide()
            return
        warps = math.ceil(i.threads_per_block / 32)
        dims = k.size_dims(i.elements, launch_dims(i))
        if {"M", "N", "K"} <= set(dims):  # a matmul: programs own tiles of C, not elements
            text = (f"C = A @ B with M = {dims['M']:,}, N = {dims['N']:,}, K = {dims['K']:,}: "
                    f"{g.blocks:,} programs of {i.threads_per_block} threads, each on "
                    "BLOCK_M x BLOCK_N tiles of C.")
        elif state.elements_per_block is None:
            size = ("" if set(dims) == {"n"} else
                    " (" + ", ".join(f"{d} = {v:,}" for d, v in dims.items()) + ")")
            text = (f"Its own grid rule: {g.blocks:,} blocks of {i.threads_per_block} threads "
                    f"for {i.elements:,} elements{size}.")
        elif i.block_size is not None:
            text = (f"Triton program: BLOCK_SIZE = {i.block_size:,} elements run by "
                    f"{i.threads_per_block} threads ({warps} warps), {g.elements_per_thread} per thread.")
        else:
            text = (f"{g.elements_per_thread} element{'s' if g.elements_per_thread > 1 else ''} per "
                    f"thread: {state.elements_per_block:,} per block, so {g.blocks:,} blocks.")
        self.ept_note.setText(text)
        self.ept_note.show()

    def _note_source(self, control: QWidget, *_signal_args) -> None:
        if not self._syncing:  # the user's change, not the controls following the model
            self._source = control

    def _show_error(self, message: str) -> None:
        self.error.show_for(message, self._source)

    def _on_box_clamped(self, message: str) -> None:
        self._clamp_note, self._events = message, self._events + 1
        self._show_error(message)

    def _on_box_edited(self, _text: str) -> None:
        self._mark = self._events

    def _on_box_done(self) -> None:
        """An edit that changed nothing (the value it already had) clears an earlier box's message."""
        if self._mark == self._events:
            self._show_error(_refusal(self.model.state))
        self._clamp_note, self._mark = "", -1

    def _on_model_rejected(self, message: str) -> None:
        self._on_model_changed(self.model.state)  # put the controls back to what the model holds
        self._show_error(message)

    # -- controls -> models -----------------------------------------------------------------------
    def _push(self, **changes) -> None:
        if not self._syncing:
            self.model.update(**changes)

    def _on_gpu_selected(self, name: str) -> None:
        if name and not self._syncing:
            self.model.update(gpu=name)

    def _on_kernel_selected(self, index: int) -> None:
        if not self._syncing and index >= 0:
            self.model.select_kernel(self.kernel.itemData(index))

    def _on_elements_slider(self, v: int) -> None:
        self._push(elements=slider_to_elements(v))

    def _on_box_changed(self, _value: float) -> None:
        box = self.sender()
        self._push(**{box.field: box.int_value()})

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

    def _on_snap_toggled(self, on: bool) -> None:
        self.threads_slider.setSingleStep(32 if on else 1)
        self.threads_slider.setPageStep(128 if on else 32)

    def _on_regs_slider(self, v: int) -> None:
        self._push(regs_per_thread=int(v))

    def _on_smem_slider(self, v: int) -> None:
        self._push(smem_per_block=int(v) * 1024)

    def _on_carveout_selected(self, index: int) -> None:
        if not self._syncing and index >= 0:
            self.model.update(carveout_percent=self.carveout.itemData(index))


def _refusal(state: LaunchState) -> str:
    """What the form shows over its boxes: why the launch cannot run ("" while its kernel's
    file is asked for the grid: that is no mistake of the user's)."""
    return "" if state.asking else state.message()


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_launch_controls [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("controls"))
