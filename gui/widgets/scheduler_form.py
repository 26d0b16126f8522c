"""The launch form's "Scheduler model" section: block cost, warps, placement and schedule, which
edit the SimulationOptions (and follow them back), and the form's shared section and note styles.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel

from gui.models.launch import LaunchModel, LaunchState
from gui.models.simulation import SimulationOptions


def form_box(title: str) -> tuple[QGroupBox, QFormLayout]:
    """A titled group of labelled rows, laid out the same way in every section."""
    box = QGroupBox(title)
    form = QFormLayout(box)
    form.setVerticalSpacing(4)
    form.setContentsMargins(6, 4, 6, 4)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    return box, form


def note() -> QLabel:
    label = QLabel("")
    label.setWordWrap(True)
    label.setProperty("role", "muted")
    return label


def _combo(entries, tip: str) -> QComboBox:
    combo = QComboBox()
    for pid, title in entries:
        combo.addItem(title, pid)
    combo.setToolTip(tip)
    return combo


class SchedulerForm:
    """The section (`box`) and its combos; the options are its single source of truth."""

    def __init__(self, model: LaunchModel, options: SimulationOptions) -> None:
        self.model, self.options = model, options
        self._syncing = False
        self.box, form = form_box("Scheduler model")
        self.cost = _combo(options.costs(), "How long each block runs: all the same (uniform), or "
                           "its bytes over its share of DRAM bandwidth (memory-bound).")
        self.placement = _combo(options.placements(), "Which free SM takes the next block: SM 0, "
                                "1, 2… in order, or spread over TPCs and GPCs as recorded on an "
                                "H200.")
        self.schedule = _combo(
            options.schedules(),
            "Calibrated: blocks reach the SMs as measured on the GPU (busy warps slow the arrival "
            "of new blocks: the dispatch model, main.py calibrate). Ideal: the textbook, a block "
            "starts the moment a slot frees. The residency curve shows the other one dashed.")
        self.wait = _combo(options.waits(), "What a uniform block's warps do while resident: "
                           "busy-spin (on the H200 this holds new blocks back), or wait (sleep, "
                           "memory): blocks arrive as in the textbook.")
        self.schedule_note = note()
        form.addRow("Block cost", self.cost)
        form.addRow("Warps", self.wait)
        form.addRow("Placement", self.placement)
        form.addRow("Schedule", self.schedule)
        form.addRow(self.schedule_note)
        self._on_options_changed(options.cost, options.placement)
        options.changed.connect(self._on_options_changed)
        for combo in self.combos():
            combo.currentIndexChanged.connect(self._on_picked)

    def combos(self) -> tuple[QComboBox, QComboBox, QComboBox, QComboBox]:
        return self.cost, self.placement, self.schedule, self.wait

    def show_launch(self, state: LaunchState) -> None:
        """What the launch allows ('compute-bound' times the tiles a kernel declares, a matmul:
        not offered without) and whose dispatch model the schedule uses."""
        item = self.cost.model().item(self.cost.findData("compute"))
        item.setEnabled(state.work is not None)
        item.setToolTip("" if state.work is not None else "Needs a kernel that declares its "
                        "tiles' work (a matmul); this launch has none.")
        self._show_schedule_note(state)

    def _on_options_changed(self, cost: str, placement: str) -> None:
        self._syncing = True
        self.cost.setCurrentIndex(max(0, self.cost.findData(cost)))
        self.placement.setCurrentIndex(max(0, self.placement.findData(placement)))
        self.schedule.setCurrentIndex(max(0, self.schedule.findData(self.options.schedule)))
        self.wait.setCurrentIndex(max(0, self.wait.findData(self.options.wait)))
        self.wait.setEnabled(cost == "uniform")
        self._syncing = False
        self._show_schedule_note(self.model.state)

    def _show_schedule_note(self, state: LaunchState) -> None:
        """Whose dispatch model the calibrated schedule uses: measured, or assumed."""
        from sim.schedule.dispatch_profile import profile_for

        if self.options.schedule != "calibrated":
            self.schedule_note.setText("Textbook: a block starts the moment a slot frees.")
            return
        self.schedule_note.setText(f"Dispatch model {profile_for(state.spec.name).label}.")

    def _on_picked(self, _index: int) -> None:
        if not self._syncing:
            self.options.set(self.cost.currentData(), self.placement.currentData(),
                             self.schedule.currentData(), self.wait.currentData())
