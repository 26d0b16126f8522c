"""QtVerdicts: what is wrong with the launch, biggest waste first, each with its number and what to
try (sim.advice via gui.models.insight), under the whole launch's predicted time."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from gui import style
from gui.models.insight import InsightModel
from gui.models.simulation import SimulationModel
from sim.advice import Finding


def verdicts_html(found: list[Finding]) -> str:
    """The ranked list as rich text: number, title, a bar for the share of the GPU it wastes,
    why, and what to try."""
    if not found:
        return (f"<p style='color:{style.GOOD}'><b>Nothing to fix:</b> the grid fills whole waves, "
                "the blocks are whole warps, and the model sees enough bytes in flight.</p>")
    rows = []
    for i, f in enumerate(found, 1):
        share = max(0.0, min(1.0, f.impact))
        colour = style.BAD if share >= 0.3 else style.ACCENT
        pct = max(1, round(100 * share))
        rest = f"<td width='{100 - pct}%' bgcolor='{style.GRID}'></td>" if pct < 100 else ""
        bar = (f"<table cellspacing='0' cellpadding='0' width='60%'><tr>"
               f"<td width='{pct}%' bgcolor='{colour}' height='7'></td>{rest}</tr></table>")
        rows.append(
            f"<tr><td valign='top' style='padding-right:8px'><b>{i}.</b></td><td>"
            f"<b>{html.escape(f.title)}</b><br>"
            f"<span style='color:{style.MUTED}'>wastes about {share:.0%} of the GPU</span>{bar}"
            f"{html.escape(f.detail)}<br>"
            f"<span style='color:{style.ACCENT2}'>Try:</span> {html.escape(f.action)}</td></tr>")
    return f"<table cellspacing='0' cellpadding='3'>{''.join(rows)}</table>"


class QtVerdicts(QWidget):
    def __init__(self, insight: InsightModel, simulation: SimulationModel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.insight, self.simulation = insight, simulation
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(4)
        self.list = QTextBrowser()  # the header and the verdicts, one scroll for both
        self.list.setOpenLinks(False)
        self.list.setMinimumHeight(70)
        lay.addWidget(self.list, 1)
        self._header = ""
        insight.changed.connect(self._on_changed)
        simulation.changed.connect(self._on_changed)
        self._on_changed()

    def _on_changed(self, *_args) -> None:
        st = self.insight.state
        lines = self.insight.time_lines(self.simulation.run)
        launch = f"{st.spec.name} · {st.launch_text()}"
        self._header = f"<b>{html.escape(launch)}</b><br>" + "<br>".join(
            f"<span style='color:{style.MUTED}'>{html.escape(line)}</span>" for line in lines)
        self.list.setHtml(f"<p>{self._header}</p>" + verdicts_html(self.insight.findings))

    def restyle(self) -> None:
        self._on_changed()

    def figure(self) -> QWidget:
        """The header and every verdict at full length, no scroll bar: what is exported."""
        label = QLabel(self._header + "<br>" + verdicts_html(self.insight.findings))
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setContentsMargins(8, 6, 8, 8)
        label.setAutoFillBackground(True)
        label.setFixedWidth(max(560, self.width()))
        label.setFixedHeight(label.heightForWidth(label.width()) + 14)
        self._figure = label  # alive while the export renders it
        return label

    def export_items(self):
        from gui.export import ExportItem

        rows = [[i, f.key, round(f.impact, 4), f.title, f.detail, f.action]
                for i, f in enumerate(self.insight.findings, 1)]
        return [ExportItem("verdicts", self.figure(), ["rank", "key", "impact", "title", "detail", "action"],
                           rows)]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_verdicts [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("verdicts"))
