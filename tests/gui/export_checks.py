"""What every whole export must hold (the window's `export_all` and `main.py export`)."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from pathlib import Path

from PySide6.QtGui import QImage


def rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def check_exports(out: Path, files: list[Path]) -> None:
    names = {f.name for f in files}
    for stem in (
        "sm_view",
        "residency",
        "occupancy_limiters",
        "occupancy_vs_threads",
        "occupancy_vs_registers",
        "occupancy_vs_smem",
        "geometry_table",
        "warp_lanes",
        "timeline",
    ):
        for ext in ("png", "svg", "csv"):
            assert f"{stem}.{ext}" in names, f"{stem}.{ext} missing"
        img = QImage(str(out / f"{stem}.png"))
        assert not img.isNull() and img.width() > 50, stem
        root = ET.parse(out / f"{stem}.svg").getroot()
        assert root.tag.endswith("svg"), stem
        assert len(rows(out / f"{stem}.csv")) >= 2, stem
    for extra in ("session.json", "summary.png", "summary.html"):
        assert extra in names
    left = sorted(p.name for p in out.iterdir())  # hidden files too: sim.inputs.files writes .tmp-*
    assert not [n for n in left if n.startswith(".tmp-")], left
    assert set(left) == names  # nothing written that export did not report
