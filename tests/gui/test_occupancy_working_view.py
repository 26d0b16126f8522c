"""The Occupancy panel and the export show the occupancy arithmetic, from the same working
`explain` prints (sim.rules.occupancy_working), ending at the answer the bars draw."""

from __future__ import annotations

import pytest

from gui.window_export import _notes
from sim.rules.devices import preset
from sim.rules.occupancy import occupancy
from sim.rules.occupancy_working import working


def test_the_panel_shows_each_limiters_working_on_request(mount):
    w = mount("H200", 1_000_000, 256, regs=214, smem=147_456)
    view = w.occupancy_view
    assert view.working.isHidden() and "6,912 per warp" in view.bars.toolTip()
    view.show_working.setChecked(True)
    assert not view.working.isHidden()
    text = view.working.text()
    # by hand: 214 x 32 = 6,848 -> 6,912 per warp; 147,456 + 1,024 reserve = 148,480 B per block
    for shown in ("6,848", "6,912", "148,480", "Block Limit Registers", "Block Limit Shared Mem", "12.5%"):
        assert shown in text, shown
    assert "floor(64 / 8) = 8 blocks" in text  # a limiter that does not bind is worked too
    w.controls.regs.setValue(32)  # the working follows the launch
    assert "32 registers/thread x 32 threads = 1,024" in view.working.text()


def test_the_export_carries_the_working(win):
    w = win("H200", 1_000_000, 256, regs=214, smem=147_456)
    notes = dict(_notes(w))
    worked = next(v for k, v in notes.items() if k.startswith("Occupancy, worked"))
    gpu = preset("H200")
    run = w.simulation.run_now()
    assert worked == working(gpu, occupancy(gpu, 256, 214, 147_456)).lines() + [run.achieved.long_text()]
    assert "achieved" in worked[-1] and "waves per SM" in worked[-1]
    item = next(i for i in w.occupancy_view.export_items() if i.name == "occupancy_limiters")
    by_name = {row[0]: row for row in item.rows}
    assert by_name["registers"][1] == 1 and by_name["registers"][3] == "Block Limit Registers"
    assert "6,912 per warp" in by_name["registers"][4]


def test_achieved_beside_theoretical_in_the_occupancy_panel_and_the_sm_view(qtbot, mount):
    # 3 whole waves of equal spinning blocks in the textbook schedule: every slot always busy
    w = mount("H200", 132 * 8 * 256 * 3, 256)
    run = w.simulation.run_now()
    assert run.achieved.achieved == pytest.approx(run.occ.occupancy) and run.achieved.waves_per_sm == 3
    assert "achieved 100% of theoretical 100%" in w.occupancy_view.achieved.text()
    assert "3.00 waves per SM" in w.occupancy_view.achieved.text()
    w.controls.threads.setValue(250)  # a launch of partial waves: achieved below theoretical
    run = w.simulation.run_now()
    assert run.achieved.achieved < run.achieved.theoretical
    assert run.achieved.text() in w.occupancy_view.achieved.text()
    assert run.summary()["achieved"]["achieved_occupancy"] == round(run.achieved.achieved, 4)
