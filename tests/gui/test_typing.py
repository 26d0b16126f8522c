"""Typing into the number boxes as a user does: the launch changes once, on Enter or leaving the
box, and the boxes read what the command line reads."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication


def _type_into(qtbot, box, text, key=Qt.Key.Key_Return):
    box.setFocus()
    box.selectAll()
    qtbot.keyClick(box, Qt.Key.Key_Delete)
    qtbot.keyClicks(box, text)
    if key is not None:
        qtbot.keyClick(box, key)


def test_typing_512_threads_launches_512_once(qtbot, win):
    """Each keystroke used to launch: 5, then 51 (unticking 'snap'), then 512."""
    w = win("H200", 1_000_000, 256)
    seen = []
    w.model.changed.connect(lambda st: seen.append(st.inputs.threads_per_block))
    _type_into(qtbot, w.controls.threads, "512", key=None)
    assert seen == [] and w.model.inputs.threads_per_block == 256  # nothing until Enter
    qtbot.keyClick(w.controls.threads, Qt.Key.Key_Return)
    assert seen == [512] and w.controls.snap.isChecked()


def test_leaving_the_box_applies_it(qtbot, win):
    w = win("H200", 1_000_000, 256)
    _type_into(qtbot, w.controls.regs, "64", key=None)
    assert w.model.inputs.regs_per_thread == 0
    # the user clicks elsewhere (sent directly: offscreen windows are not reliably activated)
    QApplication.sendEvent(w.controls.regs, QFocusEvent(QEvent.Type.FocusOut, Qt.FocusReason.MouseFocusReason))
    assert w.model.inputs.regs_per_thread == 64


def test_2000_threads_is_not_cut_to_200(qtbot, win):
    w = win("T4", 1_000_000, 256)
    _type_into(qtbot, w.controls.threads, "2000")
    assert w.model.inputs.threads_per_block == 2000
    assert "2000 threads per block is over the limit of 1024" in w.controls.error.text()
    _type_into(qtbot, w.controls.threads, "1024")  # valid again: the error goes
    assert w.model.state.ok and not w.controls.error.isVisibleTo(w.controls)


@pytest.mark.parametrize("text,value", [("48K", 48 * 1024), ("48KiB", 48 * 1024), ("12345", 12345),
                                        ("100kb", 100_000)])
def test_shared_memory_box_reads_sizes(qtbot, win, text, value):
    """'48K' used to be read as 48 bytes; the command line reads it as 49,152."""
    w = win("H200", 1_000_000, 128)
    _type_into(qtbot, w.controls.smem, text)
    assert w.model.inputs.smem_per_block == value


@pytest.mark.parametrize("text,value", [
    ("4M", 4_000_000), ("2^20", 2**20), ("1e6", 1_000_000), ("1234567", 1_234_567),
    ("1,234,567", 1_234_567), ("3000000000", 2**31), ("2^40", 2**31),
])
def test_elements_box_reads_what_the_command_line_reads(qtbot, win, text, value):
    """4M used to become 4 elements; a number past 2^31 lost its last digit; typing is not
    rewritten under the cursor (1,234,567 came out as 1,235,467)."""
    w = win("T4", 777, 256)
    _type_into(qtbot, w.controls.elements, text)
    assert w.model.inputs.elements == value and w.controls.elements.value() == value


def test_text_that_is_no_number_says_so_and_keeps_the_value(qtbot, win):
    w = win("T4", 777, 256)
    _type_into(qtbot, w.controls.elements, "lots")
    assert w.model.inputs.elements == 777 and w.controls.elements.value() == 777
    assert "not a number" in w.controls.error.text() and w.controls.error.isVisibleTo(w.controls)
    _type_into(qtbot, w.controls.elements, "1000")
    assert w.model.inputs.elements == 1000 and not w.controls.error.isVisibleTo(w.controls)
