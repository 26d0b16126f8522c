"""QtVerdicts: what is wrong with the launch, biggest waste first, each with its number and what to
try (sim.model.advice via gui.models.insight), under the whole launch's predicted time. It is
drawn once per burst of changes, and only while it can be seen (gui.redraw.StagedRedraw): its
next steps are whole-launch predictions."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from gui import style
from gui.redraw import StagedRedraw
from gui.models.insight import InsightModel
from gui.models.next_step import auto_choice, steps_for, try_changes
from gui.models.simulation import SimulationModel
from sim.model.advice import Finding


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


def next_steps_html(steps, tryable) -> str:
    """The next step, lever by lever, each with a "try it" link where the window can make it."""
    if not steps:
        return ""
    rows = []
    for i, (st, ok) in enumerate(zip(steps, tryable)):
        link = f" <a href='try:{i}'>try it</a>" if ok else ""
        rows.append(f"<li><b>{html.escape(st.lever)}</b>: {html.escape(st.change)} gives "
                    f"{html.escape(st.gains)}; {html.escape(st.effect())}{link}</li>")
    return ("<p><b>Next step</b> <span style='color:" + style.MUTED + "'>(the smallest change per "
            "lever that gains a block per SM or a wave; time: the memory-bound model)</span></p>"
            f"<ul>{''.join(rows)}</ul>")


def choice_html(state) -> str:
    """matmul_auto's choice for the window's sizes: every candidate's tiles, waves and predicted
    time (gui.models.next_step.auto_choice)."""
    choice = auto_choice(state)
    if choice is None:
        return ""
    if isinstance(choice, str):
        return f"<p><b>matmul_auto:</b> {html.escape(choice)}</p>"
    cells = "".join(
        f"<tr><td>{'<b>' if i == 0 else ''}{html.escape(r[0].strip())}</td>"
        + "".join(f"<td align='right'>{v}</td>" for v in r[1:]) + "</tr>"
        for i, r in enumerate(choice.rows()))
    return (f"<p><b>matmul_auto chose</b> {html.escape(choice.why())}</p>"
            "<table cellspacing='0' cellpadding='2'><tr><th align='left'>candidate</th><th>tiles"
            f"</th><th>waves</th><th>us</th><th>TFLOP/s</th></tr>{cells}</table>")


def header_html(insight: InsightModel, launch: str, run=None, measured_us: float | None = None,
                measured_by: str = "bench results") -> str:
    """The launch, its headline (the whole launch's time and rate, the one every surface gives),
    the speed of light, the gap's parts and a measured time where bench results hold one, then
    every other line, each rate labelled."""
    head = f"<b>{html.escape(launch)}</b>"
    top = insight.headline()
    if top is None:
        lines = insight.time_lines(run)
    else:
        time, rate = top
        head += (f"<br><span style='font-size:large'>Whole launch, predicted: <b>{html.escape(time)}</b> at "
                 f"<b>{html.escape(rate)}</b></span>")
        sol = insight.sol_lines(measured_us, measured_by)
        for line in sol:  # "Speed of light 4.1 µs: ...", "The gap, 4.0 µs: ...": the name bold
            name, _, rest = line.partition(": ")
            head += f"<br><b>{html.escape(name)}:</b> {html.escape(rest)}"
        head += f"<br><b>Phases:</b> {html.escape(insight.phases_text())}"
        rates = insight.other_rates()
        if rates:
            head += "<br><b>Other rates:</b>" + "".join(f"<br>&nbsp;&nbsp;· {html.escape(r)}" for r in rates)
        # the rest: what the prediction rests on, the animation's schedule
        shown = set(sol) | set(insight.rate_lines())
        lines = [line for line in insight.time_lines(run)[1:] if line not in shown]
    return head + "".join(f"<br><span style='color:{style.MUTED}'>{html.escape(line)}</span>"
                          for line in lines)


class QtVerdicts(QWidget):
    def __init__(self, insight: InsightModel, simulation: SimulationModel, bench=None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.insight, self.simulation = insight, simulation
        self.bench = bench  # gui.models.bench.BenchModel: a measured time of this launch, if any
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(4)
        self.list = QTextBrowser()  # the header and the verdicts, one scroll for both
        self.list.setOpenLinks(False)
        self.list.setMinimumHeight(70)
        lay.addWidget(self.list, 1)
        self._header = ""
        self._steps: list = []
        self._steps_of: tuple | None = None  # (launch state, ceiling) the steps were found for
        self._measured = None  # gui.models.slider_launch.SliderLaunchModel: its launch heads the list
        self.list.anchorClicked.connect(self._on_try)
        self.redraws = StagedRedraw(self, self._redraw_steps)
        insight.changed.connect(self._on_changed)
        simulation.changed.connect(self._on_changed)
        if bench is not None:
            bench.result_changed.connect(self._on_changed)
        self._on_changed()

    def _on_changed(self, *_args) -> None:
        self.redraws.request()

    def show_measured(self, slider) -> None:
        """Head the verdicts with the slider's latest launch, measured beside its prediction."""
        self._measured = slider
        slider.changed.connect(self._on_changed)
        self._on_changed()

    def _redraw_steps(self):
        self._draw()
        yield

    def _draw(self) -> None:
        st = self.insight.state
        self._header = header_html(self.insight, f"{st.spec.name} · {st.launch_text()}",
                                   self.simulation.run, *self._measured_us(st))
        measured = self._measured.verdict() if self._measured is not None else ""
        if measured:
            self._header += f"<br><b style='color:{style.ACCENT}'>Live launch:</b> {html.escape(measured)}"
        ceiling = self.insight.ceiling_for(st.spec)[0]
        if self._steps_of is None or self._steps_of[0] is not st or self._steps_of[1] != ceiling:
            # a new run changes the header only: the steps (three what-if launches) stay
            self._steps = [(s, try_changes(s, st)) for s in steps_for(st, ceiling)]
            self._steps_of = (st, ceiling)
        self.list.setHtml(f"<p>{self._header}</p>" + choice_html(st) + verdicts_html(self.insight.findings)
                          + next_steps_html([s for s, _ in self._steps],
                                            [c is not None for _, c in self._steps]))

    def _measured_us(self, st) -> tuple[float | None, str]:
        """This launch's measured time and by what: the slider's latest launch where it timed
        exactly this launch on a GPU, else the open bench results' (the same GPU, kernel, size
        and block)."""
        live = self._measured.latest if self._measured is not None else None
        if live is not None and live.is_gpu_timing and (
                live.wanted.kernel, live.wanted.gpu, live.wanted.elements, live.wanted.threads_per_block) == (
                st.inputs.kernel, st.spec.name, st.inputs.elements, st.inputs.threads_per_block):
            return live.median_us, "live launch"
        if self.bench is None or st.geometry is None:
            return None, "bench results"
        return self.bench.measured_us(st.spec, st.inputs.kernel, st.geometry.elements,
                                      st.geometry.threads_per_block), "bench results"

    def _on_try(self, url) -> None:
        """ "try it": the step's inputs go to the launch model, which moves the sliders."""
        name = url.toString()
        if not name.startswith("try:"):
            return
        i = int(name.split(":", 1)[1])
        if i < len(self._steps) and self._steps[i][1] is not None:
            self.insight.launch.update(**self._steps[i][1])

    def restyle(self) -> None:
        self._on_changed()

    def figure(self) -> QWidget:
        """The header and every verdict at full length, no scroll bar: what is exported."""
        self.redraws.flush()
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
