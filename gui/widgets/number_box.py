"""NumberBox: the launch form's whole-number box, which reads what the command line reads."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QWidget

from gui.models.launch import parse_field
from sim.inputs.errors import UserError


class NumberBox(QDoubleSpinBox):
    """A whole-number box (past QSpinBox's 2^31 - 1) that reads what the command line reads:
    1000000, 1e6, 2^20, 4M; 48K for bytes. It acts on Enter or focus-out. A number out of range
    goes to the nearest end; text that is no number is refused with a message (`refused`) and the
    last good value comes back."""

    refused = Signal(str)
    clamped = Signal(str)  # a number past the box's range was taken at its nearest end

    def __init__(self, field: str, minimum: int, maximum: int, suffix: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = field
        self.setDecimals(0)
        self.setRange(minimum, maximum)
        self.setKeyboardTracking(False)
        self.setGroupSeparatorShown(True)
        self.setSuffix(suffix)
        self.setAccelerated(True)

    def _read(self, text: str) -> tuple[int | None, str]:
        """(value, "") or (None, why it is no number)."""
        text = text.strip().removesuffix(self.suffix().strip()).replace(self.locale().groupSeparator(), "")
        try:
            return parse_field(self.field, text), ""
        except UserError as exc:
            return None, str(exc)

    def _parse(self, text: str) -> int | None:
        return self._read(text)[0]

    def validate(self, text: str, pos: int):
        v = self._parse(text)
        ok = v is not None and self.minimum() <= v <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def fixup(self, text: str) -> str:
        v, why = self._read(text)
        if v is None:
            self.refused.emit(why)
            return text  # the box puts back the last good value
        lo, hi = int(self.minimum()), int(self.maximum())
        if not lo <= v <= hi:
            self.clamped.emit(f"{self.field.replace('_', ' ')}: {v:,} is outside {lo:,}..{hi:,}, "
                              f"so {min(max(v, lo), hi):,} is used")
        return self.textFromValue(float(min(max(v, lo), hi)))

    def valueFromText(self, text: str) -> float:
        v = self._parse(text)
        return self.value() if v is None else float(min(max(v, self.minimum()), self.maximum()))

    def int_value(self) -> int:
        return round(self.value())
