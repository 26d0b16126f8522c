"""Typing a value a box cannot take says so in one line, and a later good edit clears the message
(0 threads used to become 1 without a word; "-5" then a value equal to the launch's kept the
"cannot be negative" message)."""

from __future__ import annotations

from tests.gui.test_typing import _type_into


def test_a_number_past_a_box_is_taken_at_its_end_and_said(qtbot, win):
    w = win("H200", 1_000_000, 256)
    _type_into(qtbot, w.controls.threads, "0")
    assert w.model.inputs.threads_per_block == 1
    assert w.controls.error.text() == "threads per block: 0 is outside 1..65,536, so 1 is used"
    _type_into(qtbot, w.controls.threads, "256")  # the next good edit clears it
    assert w.controls.error.text() == "" and w.model.inputs.threads_per_block == 256


def test_an_edit_that_changes_nothing_clears_an_earlier_boxs_message(qtbot, win):
    w = win("H200", 1_000_000, 256)
    _type_into(qtbot, w.controls.elements, "-5")
    assert "cannot be negative" in w.controls.error.text()
    _type_into(qtbot, w.controls.elements, "1e6")  # the value the launch already has
    assert w.model.inputs.elements == 1_000_000 and w.controls.error.text() == ""
