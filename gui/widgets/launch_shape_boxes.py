"""The launch form's block x · y · z and cluster boxes: a 2D/3D block (x fastest; the threads box
is their product) and the blocks of a thread-block cluster (compute capability 9.0+); and the
register cap (__launch_bounds__/-maxrregcount) of the resources form."""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QWidget

from gui.models.launch import CUSTOM_KERNEL, LaunchState
from gui.widgets.number_box import NumberBox
from sim.rules.block_shape import MAX_BLOCK_DIMS
from sim.rules.clusters import MAX_NON_PORTABLE, MIN_CC


class LaunchShapeBoxes:
    """Adds its rows to `form`; changes go to `push(**changes)` (the form's model update), bad
    text to `refused`, out-of-range numbers to `clamped`."""

    def __init__(self, form: QFormLayout, row: Callable[..., QWidget], push: Callable[..., None],
                 refused: Callable[[str], None], clamped: Callable[[str], None]) -> None:
        self._push = push
        self.xyz = [NumberBox(f"block_{a}", 1, top) for a, top in zip("xyz", MAX_BLOCK_DIMS)]
        for axis, box in zip("xyz", self.xyz):
            box.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)  # three fit a narrow dock
            box.setMinimumWidth(36)
            box.setToolTip(f"The block's {axis} extent. Threads are numbered x fastest "
                           "(id = x + y·Dx + z·Dx·Dy) and each 32 consecutive ids are one warp.")
            box.valueChanged.connect(self._on_xyz)
        form.addRow("Block x · y · z", row(*self.xyz))
        self.cluster = NumberBox("cluster_size", 1, MAX_NON_PORTABLE)
        self.cluster.setToolTip("Blocks per thread-block cluster (compute capability 9.0+): a "
                                "cluster's blocks run together on one GPC. 8 is portable, 16 needs "
                                "the non-portable opt-in.")
        self.cluster.valueChanged.connect(lambda _v: self._push(cluster_size=self.cluster.int_value()))
        form.addRow("Cluster", self.cluster)
        for box in (*self.xyz, self.cluster):
            box.refused.connect(refused)
            box.clamped.connect(clamped)

    def _on_xyz(self, _value: float) -> None:
        x, y, z = (box.int_value() for box in self.xyz)
        self._push(threads_per_block=x * y * z, block_y=y, block_z=z)

    def sync(self, state: LaunchState, set_box: Callable[[NumberBox, int], None]) -> None:
        """Show what the model holds (called while the form ignores its own signals)."""
        i, spec = state.inputs, state.spec
        dims = state.geometry.block_dims if state.geometry is not None else (i.threads_per_block, 1, 1)
        for box, value in zip(self.xyz, dims):
            set_box(box, value)
            box.setEnabled(i.kernel == CUSTOM_KERNEL)  # a kernel's declaration gives its shape
        set_box(self.cluster, i.cluster_size)
        self.cluster.setEnabled(spec.compute_capability >= MIN_CC or i.cluster_size > 1)


class RegisterCapBox(NumberBox):
    """Max registers per thread (0: no cap): a kernel is compiled with it (Triton maxnreg, Numba
    max_registers), so the registers shown are the compiler's; typed registers are held under it."""

    def __init__(self, form: QFormLayout, push: Callable[..., None], refused: Callable[[str], None],
                 clamped: Callable[[str], None]) -> None:
        super().__init__("max_registers", 0, 255)
        self.setToolTip("A cap on registers per thread, as __launch_bounds__ or -maxrregcount set "
                        "it (Triton maxnreg, Numba max_registers); 0: none. A kernel is recompiled "
                        "with it: fewer registers can mean more blocks per SM, and spills.")
        self.valueChanged.connect(lambda _v: push(max_registers=self.int_value()))
        self.refused.connect(refused)
        self.clamped.connect(clamped)
        form.addRow("Max registers", self)
