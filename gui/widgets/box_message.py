"""BoxMessage: the launch form's one-line complaint, drawn beside the box that caused it.

It floats over the form (a child of the form, outside its layout), just under the box it is
about, or just over it where the visible part of the form ends first: nothing in the form moves
when it shows or goes, and clicks pass through it to the control it covers. The form says which
box a message is about (`show_for`); with none, it sits at the top of what is visible.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QWidget

MARGIN = 6  # px from the form's sides, and between the box and its message


class BoxMessage(QLabel):
    def __init__(self, form: QWidget, scroll: QScrollArea) -> None:
        super().__init__("", form)
        self.scroll = scroll
        self.anchor: QWidget | None = None
        self.setProperty("role", "box_message")
        self.setWordWrap(True)
        self.setContentsMargins(6, 3, 6, 3)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()
        form.installEventFilter(self)
        scroll.viewport().installEventFilter(self)

    def show_for(self, message: str, anchor: QWidget | None = None) -> None:
        """Say `message` beside `anchor` (the box it is about); "" hides it."""
        self.anchor = anchor
        self.setText(message)
        if not message:
            self.hide()
            return
        self.place()
        self.show()
        self.raise_()

    def place(self) -> None:
        form = self.parentWidget()
        width = max(120, form.width() - 2 * MARGIN)
        height = self.heightForWidth(width)
        seen_top = -form.y()  # the form's rows inside the scroll area's viewport
        seen_bottom = seen_top + self.scroll.viewport().height()
        anchor = self.anchor if self.anchor is not None and self.anchor.isVisibleTo(form) else None
        if anchor is None:
            y = seen_top + MARGIN
        else:
            top = anchor.mapTo(form, QPoint(0, 0)).y()
            y = top + anchor.height() + 2
            if y + height > seen_bottom and top - height - 2 >= seen_top:
                y = top - height - 2  # no room under it on screen: over it instead
        self.setGeometry(MARGIN, y, width, height)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) and self.isVisible():
            self.place()
        return False
