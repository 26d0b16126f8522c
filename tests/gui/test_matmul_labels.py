"""A matmul launch as a new user reads it: the form and the launch table name M, N, K and BLOCK_M
(they said "Elements" and "BLOCK_SIZE", which mean nothing for a 2-D tile grid)."""

from __future__ import annotations

import pytest

from gui.widgets.qt_geometry import ROWS
from tests.gui.conftest import drawn


@pytest.mark.slow
def test_a_matmul_point_is_labelled_by_its_sizes_and_block_parameter(win):
    w = win("H200")
    w.waves.set_sweep("M=1024,K=8192,N=256..14080x256")
    w.predict_waves_now()
    w.waves.select("matmul_tiled", 16)  # N = 4352: 136 tiles
    geo, c = w.geometry_view, w.controls
    assert geo.table.item(0, 0).text() == "M × N × K" and geo.value("elements") == "1,024×4,352×8,192"
    assert geo.value("blocks") == "136"
    assert "grid-stride" not in geo.table.item(ROWS.index("idle_last"), 1).toolTip()
    assert "declares its grid" in geo.lanes_label.text()
    assert c.block_size_label.text() == "BLOCK_M" and "BLOCK_M" in c.block_size.toolTip()
    assert c.elements_label.text() == "Size n"
    assert "M × N × K = 1,024×4,352×8,192" in drawn(w.teach.verdicts_view).list.toPlainText()
    # back to a launch of one length: the words come back
    w.model.update(kernel="custom", dims="")
    assert c.elements_label.text() == "Elements" and geo.table.item(0, 0).text() == "Elements"
    assert "1,000,000 elements × 256" in drawn(w.teach.verdicts_view).list.toPlainText()
