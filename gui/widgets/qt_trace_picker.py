"""TracePicker: the traces of a trace bundle (sim.traces.trace_bundle), one to pick and compare.

File ▸ Open trace… on a bundle's folder or its dispatch_index.json lists what the bundle holds
here, as `main.py compare DIR` lists it; picking one compares it as `main.py compare DIR NAME`
does. Recordings that failed are listed greyed, with their error, and cannot be picked.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QVBoxLayout)

from gui.models.trace import BundleContents

NAME_ROLE = Qt.ItemDataRole.UserRole


def entry_text(entry: dict) -> str:
    """One recorded trace as the list shows it: name, blocks, makespan, GPU."""
    makespan = entry["summary"].get("makespan_us", math.nan)
    span = f" · makespan {makespan:,.1f} µs" if math.isfinite(makespan) else ""
    return f"{entry['name']}  ·  {entry['count']:,} blocks{span} · {entry['gpu']}"


class TracePicker(QDialog):
    picked = Signal(str, str)  # the bundle's path, the trace's name

    def __init__(self, contents: BundleContents, parent=None) -> None:
        super().__init__(parent)
        self.contents = contents
        self.setWindowTitle(f"Pick a trace of {Path(contents.path).name}")
        n = len(contents.traces)
        heading = QLabel(f"{contents.path} is a trace bundle of {n:,} recorded "
                         f"trace{'s' if n != 1 else ''}. Pick one to lay beside its prediction "
                         "(as `main.py compare DIR NAME` does):")
        heading.setWordWrap(True)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter by name")
        self.filter.setClearButtonEnabled(True)
        self.list = QListWidget()
        for entry in contents.traces:
            item = QListWidgetItem(entry_text(entry))
            item.setData(NAME_ROLE, entry["name"])
            item.setToolTip(f"family {entry['family'] or '?'}, source {entry['source']}")
            self.list.addItem(item)
        for entry in contents.failed:
            item = QListWidgetItem(f"{entry['name']}  ·  failed to record: {entry['error']}")
            item.setFlags(Qt.ItemFlag.NoItemFlags)  # nothing to compare
            self.list.addItem(item)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.compare_button = buttons.addButton("Compare", QDialogButtonBox.ButtonRole.AcceptRole)
        lay = QVBoxLayout(self)
        for w in (heading, self.filter, self.list, buttons):
            lay.addWidget(w)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.filter.textChanged.connect(self._on_filter)
        self.list.currentItemChanged.connect(self._on_current)
        self.list.itemActivated.connect(lambda _item: self.accept())
        if contents.traces:
            self.list.setCurrentRow(0)
        self._on_current(self.list.currentItem())
        self.resize(620, 420)

    def current_name(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None or item.isHidden() else item.data(NAME_ROLE)

    def choose(self, name: str) -> bool:
        """Pick trace `name` as a click and Compare would (scripts, tests); False if not listed."""
        self.filter.clear()
        for row in range(self.list.count()):
            if self.list.item(row).data(NAME_ROLE) == name:
                self.list.setCurrentRow(row)
                self.accept()
                return True
        return False

    def accept(self) -> None:
        name = self.current_name()
        if name is None:
            return
        super().accept()
        self.picked.emit(self.contents.path, name)

    def _on_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setHidden(bool(needle) and needle not in item.text().lower())
        current = self.list.currentItem()
        if current is None or current.isHidden():
            shown = [self.list.item(r) for r in range(self.list.count())
                     if not self.list.item(r).isHidden() and self.list.item(r).data(NAME_ROLE)]
            self.list.setCurrentItem(shown[0] if shown else None)
        self._on_current(self.list.currentItem())

    def _on_current(self, _item) -> None:
        self.compare_button.setEnabled(self.current_name() is not None)
