"""Text made of parts that fits the room it has, whole lines only.

`fit_lines` chooses, for each part, the longest of its forms that lets all of them fit the given
lines (the last parts are shortened first: the first ones matter most), word-wraps them there,
and if even the shortest forms overflow leaves the last parts out whole, ending with `more`.
The SM view's status line is one such line; the timeline's summary (`FittedCaption`) is a few,
flowing around its buttons, never more than the room above its chart holds.
"""

from __future__ import annotations

import math

from typing import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

Parts = list[tuple[str, ...]]  # each part: its forms, longest first ("" leaves it out)
GAP = 6  # between the summary and its buttons, and between buttons


def _flow(fm, parts: list[str], widths: list[int], sep: str) -> list[str] | None:
    """`parts` joined by `sep`, word-wrapped into lines of `widths` (a break between parts keeps
    the separator's mark at the line's end); None if they need more lines or a word is too wide."""
    parts = [p for p in parts if p]
    joined = sep.join(parts)
    if fm.horizontalAdvance(joined) <= widths[0]:
        return [joined]
    mark, gap = sep.rstrip(), sep[len(sep.rstrip()):]
    tokens = []  # (what goes before the word on the same line, the word)
    for i, part in enumerate(parts):
        words = part.split(" ")
        if i < len(parts) - 1:
            words[-1] += mark
        tokens += [(" " if j else (gap if i else ""), w) for j, w in enumerate(words)]
    lines, line = [], ""
    for glue, word in tokens:
        trial = line + glue + word if line else word
        if fm.horizontalAdvance(trial) <= widths[len(lines)]:
            line = trial
            continue
        if not line or len(lines) + 1 == len(widths):
            return None
        lines.append(line)
        line = word
        if fm.horizontalAdvance(line) > widths[len(lines)]:
            return None
    return lines + [line]


def fit_lines(fm, parts: Parts, widths: list[int], sep: str = " · ", more: str = "") -> list[str]:
    """The parts in `len(widths)` lines at most, line i no wider than widths[i] (see the module)."""
    chosen = [alts[0] for alts in parts]
    for i in reversed(range(len(parts))):
        for alt in parts[i]:
            chosen[i] = alt
            lines = _flow(fm, chosen, widths, sep)
            if lines is not None:
                return lines
    while len(chosen) > 1:  # the shortest forms overflow: the last parts go, whole
        chosen.pop()
        lines = _flow(fm, chosen + [more], widths, sep)
        if lines is not None:
            return lines
    # one part (and `more`) too long for every line: wrapped, its last line elided
    lines = _flow(fm, chosen + [more], widths + [widths[-1]] * 1000, sep) or chosen
    if len(lines) > len(widths):
        lines = lines[:len(widths)]
        lines[-1] = fm.elidedText(lines[-1] + " …", Qt.TextElideMode.ElideRight, widths[-1])
    return lines


class FittedCaption(QWidget):
    """A muted summary above a chart: its parts flow around the buttons at its top right, in at
    most `budget()` whole lines (its owner's: what the chart leaves, asked while the owner is laid
    out, so the height is right in the same pass); the whole summary is `text()` and its tooltip,
    which says what a narrow panel leaves out. It places its labels and buttons itself: its
    height follows its width (heightForWidth), which nested layouts would learn a pass late."""

    SEP = " · "
    MORE = "…"  # the tooltip has all of it

    def __init__(self, budget: Callable[[], int] = lambda: 1000, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.budget = budget
        self.head, self.rest = QLabel(self), QLabel(self)  # the lines beside the buttons, under them
        for label in (self.head, self.rest):
            label.setProperty("role", "muted")
            label.setTextFormat(Qt.TextFormat.PlainText)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)  # never the text's width: a long line must not widen the dock
        self.setSizePolicy(policy)
        self._buttons: list[QWidget] = []
        self._parts: Parts = []
        self._fits: dict = {}  # (width, lines allowed, buttons shown) -> the lines and where they go

    def add_button(self, button: QWidget) -> None:
        button.setParent(self)
        self._buttons.append(button)

    def set_parts(self, parts: Parts, details: str = "") -> None:
        """Show `parts`; the tooltip is the whole summary, then `details`."""
        self._parts, self._fits = list(parts), {}
        self.setToolTip("\n\n".join(t for t in (self.text(), details) if t))
        self.refit()

    def setText(self, text: str) -> None:  # noqa: N802 (QLabel's name: one part, one form)
        self.set_parts([(text,)] if text else [])

    def text(self) -> str:
        """The whole summary, every part in its longest form."""
        return self.SEP.join(alts[0] for alts in self._parts if alts[0])

    def shown_lines(self) -> list[str]:
        return self._fit(self.width())[0]

    def _shown_buttons(self) -> list[QWidget]:
        return [b for b in self._buttons if not b.isHidden()]

    def line_widths(self, width: int | None = None) -> tuple[list[int], int]:
        """The width of each line the budget allows at `width`, and how many of them sit beside
        the buttons (narrower)."""
        width = max(40, self.width() if width is None else width)
        buttons = self._shown_buttons()
        corner = sum(b.sizeHint().width() + GAP for b in buttons)
        line = self.head.fontMetrics().lineSpacing()
        beside = math.ceil(max(b.sizeHint().height() for b in buttons) / line) if buttons else 0
        return [max(40, width - corner) if i < beside else width
                for i in range(max(1, self.budget()))], beside

    def _fit(self, width: int) -> tuple[list[str], int]:
        widths, beside = self.line_widths(width)
        key = (tuple(widths), beside)
        if key not in self._fits:
            fm = self.head.fontMetrics()
            self._fits[key] = (fit_lines(fm, self._parts, widths, self.SEP, self.MORE)
                               if self._parts else [], beside)
        return self._fits[key]

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt's name)
        lines, beside = self._fit(width)
        line = self.head.fontMetrics().lineSpacing()
        top = max([min(len(lines), beside) * line] + [b.sizeHint().height() for b in self._shown_buttons()])
        return max(line, top + max(0, len(lines) - beside) * line)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(200, self.heightForWidth(self.width()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """One row, the buttons' height: the lines it takes follow its owner's height, so its
        least height must not (a dock could never be dragged shorter)."""
        buttons = self._shown_buttons()
        return QSize(sum(b.sizeHint().width() + GAP for b in buttons) + 40,
                     max([self.head.fontMetrics().lineSpacing()] + [b.sizeHint().height() for b in buttons]))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.place()

    def refit(self) -> None:
        """What it shows changed (its parts, its buttons, its owner's room): its height too."""
        self._fits = {}
        self.updateGeometry()
        self.place()

    def place(self) -> None:
        """Lay the lines and buttons out in the room it has (its owner's room may change the
        lines allowed without changing its size: the owner calls this once laid out)."""
        lines, beside = self._fit(self.width())
        line = self.head.fontMetrics().lineSpacing()
        x = self.width()
        top = 0
        for b in reversed(self._shown_buttons()):
            hint = b.sizeHint()
            x -= hint.width()
            b.setGeometry(x, 0, hint.width(), hint.height())
            x -= GAP
            top = max(top, hint.height())
        split = min(len(lines), beside) if beside else len(lines)
        self.head.setText("\n".join(lines[:split]))
        self.head.setGeometry(0, 0, max(1, x if beside else self.width()), max(1, split) * line)
        top = max(top, split * line)
        self.rest.setText("\n".join(lines[split:]))
        self.rest.setGeometry(0, top, self.width(), max(1, len(lines) - split) * line)
        self.rest.setVisible(len(lines) > split)
