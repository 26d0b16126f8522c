"""The notebook's result objects: each wraps what a command already computes (explain's payload,
the launch model's prediction, compare's Comparison, next_step's Steps) and shows it three ways:
`_repr_html_` (Jupyter displays it), `to_dict()` (plain data, the command's --json where there is
one) and `to_frame()` (a pandas DataFrame of `rows()`, where pandas is installed)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from sim.notebook import render


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame() needs pandas, which is not installed (pip install pandas); "
                          "to_dict() and rows() need nothing") from None
    return pandas


class Result(ABC):
    """What every result gives: rows() for a table, to_frame() of them, to_dict(), HTML."""

    @abstractmethod
    def rows(self) -> list[dict]:
        """One dict per row of the result's table."""

    @abstractmethod
    def to_dict(self) -> dict:
        """The result as the command's --json prints it."""

    def to_frame(self):
        """A pandas DataFrame of `rows()` (pandas is optional: a clear ImportError without it)."""
        return _pandas().DataFrame(self.rows())

    @abstractmethod
    def _repr_html_(self) -> str:
        """The result as Jupyter displays it."""


def launch_row(gpu, occ, geo, prediction) -> dict:
    """One launch as one row: its shape, occupancy, waves, predicted time and speed of light."""
    row = {"gpu": gpu.name, "elements": geo.elements, "threads_per_block": geo.threads_per_block,
           "regs_per_thread": occ.regs_per_thread, "smem_per_block": occ.smem_per_block_bytes,
           "blocks": geo.blocks, "blocks_per_sm": occ.blocks_per_sm,
           "occupancy": occ.occupancy, "limited_by": ",".join(occ.limited_by),
           "waves": geo.waves_at_occupancy}
    if prediction is not None:
        card = prediction.speed_of_light()
        row.update(whole_launch_us=prediction.whole_launch_us, bandwidth_gbps=prediction.bandwidth_gbps,
                   bound=prediction.bound, sol_bound=card.bound, sol_us=card.bound_us,
                   sol_percent=card.percent, **{f"{k}_us": v for k, v in card.parts.items()})
    return row


def _headline(prediction) -> str:
    if prediction is None:
        return "<p>This launch cannot run: no time to predict.</p>"
    rate = (f"{prediction.tflops:,.1f} TFLOP/s" if prediction.mode == "compute"
            else f"{prediction.bandwidth_gbps:,.0f} GB/s")
    return (f"<p><b>Whole launch, predicted: {prediction.whole_launch_us:,.3f} µs at {rate}</b> "
            f"({prediction.bound}-bound; {prediction.mode}-bound model)</p>")


@dataclass(frozen=True)
class ExplainResult(Result):
    """`explain` of one launch: device, geometry, occupancy, the prediction and its speed of light."""

    gpu: object
    occupancy: object  # sim.rules.occupancy.Occupancy
    geometry: object  # sim.rules.geometry.LaunchGeometry
    prediction: object | None  # sim.model.launch_model.LaunchPrediction (None: it cannot run)
    payload: dict = field(repr=False)  # what `explain --json` prints for it

    @property
    def speed_of_light(self):
        return None if self.prediction is None else self.prediction.speed_of_light()

    def to_dict(self) -> dict:
        return self.payload

    def rows(self) -> list[dict]:
        return [launch_row(self.gpu, self.occupancy, self.geometry, self.prediction)]

    def _repr_html_(self) -> str:
        from sim.cli import geometry_rows
        from sim.rules.occupancy import limiter_rows

        occ = self.occupancy
        parts = [_headline(self.prediction)]
        if self.prediction is not None:
            parts.append(render.card_html(self.speed_of_light))
        parts.append(render.table(("limiter", "blocks per SM", ""), limiter_rows(occ),
                                  f"Occupancy: {occ.explain()}", "occupancy"))
        parts.append(render.table(("quantity", "value", "how"), geometry_rows(self.gpu, self.geometry),
                                  "Geometry", "geometry"))
        if self.prediction is not None:
            parts.append(render.timeline_svg(self.prediction.timeline,
                                             title="The predicted schedule: blocks per SM"))
        found = self.payload.get("findings", [])
        if found:
            items = "".join(f"<li><b>{render.esc(f['title'])}</b>. {render.esc(f['detail'])} "
                            f"<i>Try:</i> {render.esc(f['action'])}</li>" for f in found)
            parts.append(f"<p><b>Findings, biggest waste first</b></p><ol>{items}</ol>")
        return render.page(f"{self.gpu.name} · {self.geometry.elements:,} elements × "
                           f"{self.geometry.threads_per_block} threads per block", *parts)

    def __repr__(self) -> str:
        p = self.prediction
        time = f", {p.whole_launch_us:,.2f} us" if p is not None else ", cannot run"
        return (f"ExplainResult({self.gpu.name}, {self.geometry.elements:,} x "
                f"{self.geometry.threads_per_block}: {self.occupancy.explain()}{time})")


@dataclass(frozen=True)
class SimulateResult(Result):
    """`simulate` of one launch: the schedule, block by block, and its whole-launch prediction."""

    gpu: object
    prediction: object  # LaunchPrediction
    extra: dict = field(default_factory=dict, repr=False)  # what the command adds to the summary

    @property
    def timeline(self):
        return self.prediction.timeline

    def to_dict(self) -> dict:
        return {**self.prediction.simulation.summary(), **self.prediction.summary(), **self.extra}

    def rows(self) -> list[dict]:
        """One row per simulated block (the identical full waves the model counts are not)."""
        tl = self.timeline
        return [{"block": tl.first_block + i, "sm": int(tl.block_sm[i]), "slot": int(tl.block_lane[i]),
                 "wave": int(tl.wave[i]) + tl.skipped_waves, "start_us": float(tl.start_us[i]),
                 "end_us": float(tl.end_us[i])} for i in range(tl.n_blocks)]

    def _repr_html_(self) -> str:
        p, tl = self.prediction, self.timeline
        told = (f"{tl.n_blocks:,} blocks simulated; the {tl.skipped_waves:,} identical full waves "
                "before them are counted, not drawn" if tl.skipped_waves else f"{tl.n_blocks:,} blocks")
        return render.page(f"Simulated on {self.gpu.name}: {told}", _headline(p),
                           render.card_html(p.speed_of_light()),
                           render.timeline_svg(tl, title="Blocks per SM"))

    def __repr__(self) -> str:
        return (f"SimulateResult({self.gpu.name}, {self.timeline.grid_blocks:,} blocks, "
                f"{self.prediction.whole_launch_us:,.2f} us)")


@dataclass(frozen=True)
class CompareResult(Result):
    """`compare`: a recorded schedule beside its prediction (sim.traces.compare.Comparison)."""

    comparison: object

    def to_dict(self) -> dict:
        return self.comparison.as_dict()

    def rows(self) -> list[dict]:
        c = self.comparison
        return [{"what": "makespan_us", "recorded": c.recorded_makespan_us,
                 "predicted": c.simulated_makespan_us},
                {"what": "median peak blocks per SM", "recorded": c.recorded_median_peak_blocks_per_sm,
                 "predicted": c.simulated_median_peak_blocks_per_sm},
                {"what": "mean resident blocks", "recorded": c.recorded_mean_resident,
                 "predicted": c.simulated_mean_resident}]

    def _repr_html_(self) -> str:
        c = self.comparison
        parts = ["<ul>" + "".join(f"<li>{render.esc(line)}</li>" for line in c.lines()) + "</ul>",
                 render.table(("", "recorded", "predicted"),
                              [(r["what"], f"{r['recorded']:,.2f}", f"{r['predicted']:,.2f}")
                               for r in self.rows()], "Recorded and predicted", "compare")]
        for name, tl in (("recorded", c.recorded), ("predicted", c.simulated)):
            if tl is not None:
                parts.append(render.timeline_svg(tl, title=f"Blocks per SM, {name}"))
        return render.page(f"Recorded on {c.trace_gpu}, predicted on {c.gpu}", *parts)


@dataclass(frozen=True)
class NextStepResult(Result):
    """The next step: per lever, the smallest change that gains a block per SM or a wave."""

    steps: tuple  # sim.model.next_step.Step

    def rows(self) -> list[dict]:
        return [{"lever": s.lever, "change": s.change, "gains": s.gains, "setting": dict(s.setting),
                 "time_us": s.before.time_us, "after_time_us": s.after.time_us,
                 "measurable": s.measurable} for s in self.steps]

    def to_dict(self) -> dict:
        return {"next_steps": self.rows()}

    def _repr_html_(self) -> str:
        if not self.steps:
            return render.page("Next step", "<p>No lever gains a block per SM or a wave here.</p>")
        return render.page("Next step", render.table(
            ("lever", "change", "gains", "effect"),
            [(s.lever, s.change, s.gains, s.effect()) for s in self.steps], "", "next-step"))


@dataclass(frozen=True)
class SweepResult(Result):
    """Launches that differ in one input (a what-if), one row each."""

    key: str
    runs: tuple  # ExplainResult, one per value

    def rows(self) -> list[dict]:
        return [row for r in self.runs for row in r.rows()]

    def to_dict(self) -> dict:
        return {"key": self.key, "rows": self.rows()}

    @property
    def fastest(self) -> ExplainResult:
        timed = [r for r in self.runs if r.prediction is not None]
        return min(timed, key=lambda r: r.prediction.whole_launch_us)

    def _repr_html_(self) -> str:
        cols = ("threads_per_block", "blocks", "blocks_per_sm", "occupancy", "waves",
                "whole_launch_us", "sol_percent")

        def cell(row, c):
            v = row.get(c)
            return "–" if v is None else f"{v:,.3g}" if isinstance(v, float) else f"{v:,}"
        rows = [[cell(r, c) for c in cols] for r in self.rows()]
        return render.page(f"What if: {self.key}", render.table(cols, rows, "", "sweep"))
