"""The notebook API with bench results: sim.notebook's functions, and `bench`, which reads a
results file (`main.py bench --out FILE.json`, "warpscope-bench/1") and lays each measured launch
beside the launch model's prediction and its speed of light, the measured time on the card.

    from kernels.notebook import bench, explain
    b = bench("tests/data/h200_size_sweep.json")
    b.to_frame()          # with pandas: one row per measurement, measured and predicted

Reading a file needs no GPU and imports no torch, triton or numba; measuring one is `main.py
bench` on a machine with a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sim.inputs.errors import UserError
from sim.notebook import Result, compare, explain, next_step, render, simulate, sweep

__all__ = ["BenchResults", "bench", "compare", "explain", "next_step", "simulate", "sweep"]


def _predicted(m, gpu, ceiling_gbps):
    """The memory-bound launch model for a measured point (sim.model.launch_model.predict_measured,
    the Bandwidth panel's dashed prediction); None for a tiled matmul (its tiles need the
    compute-bound model) and where the model cannot say."""
    from kernels.declare.registry import get_kernel
    from sim.model.launch_model import predict_measured
    from sim.model.throughput import is_tiled_matmul

    try:
        spec = get_kernel(m.kernel)
    except UserError:
        spec = None
    if spec is not None and is_tiled_matmul(spec):
        return None
    try:
        trips = (spec.loop_trips(m.elements, m.grid_blocks, m.threads_per_block)
                 if spec is not None and m.threads_per_block and m.grid_blocks else 1)
    except (ValueError, UserError):
        return None
    return predict_measured(gpu, m, trips, ceiling_gbps)


@dataclass(frozen=True)
class BenchResults(Result):
    """A bench results file: every measurement, with the prediction and speed of light where the
    model can say (kernels.measure.timing.BenchResult holds the file)."""

    result: object  # kernels.measure.timing.BenchResult
    gpu: object | None  # the GPU it was measured on (a preset or the saved spec)
    predictions: tuple = field(repr=False)  # LaunchPrediction or None, per measurement

    def rows(self) -> list[dict]:
        out = []
        for m, p in zip(self.result.measurements, self.predictions):
            row = {"kernel": m.kernel, "elements": m.elements, "threads_per_block": m.threads_per_block,
                   "grid_blocks": m.grid_blocks, "blocks_per_sm": m.blocks_per_sm,
                   "measured_us": m.median_ms * 1e3, "measured_gbps": m.bandwidth_gbps,
                   "gpu_timing": m.is_gpu_timing}
            if p is not None:
                card = p.speed_of_light().with_measured(m.median_ms * 1e3)
                row.update(predicted_us=p.whole_launch_us, sol_bound=card.bound, sol_us=card.bound_us,
                           predicted_percent=card.percent, measured_percent=card.measured_percent)
            out.append(row)
        return out

    def to_dict(self) -> dict:
        from kernels.measure.results import to_dict

        return {**to_dict(self.result), "rows": self.rows()}

    def _repr_html_(self) -> str:
        cols = ("kernel", "elements", "threads_per_block", "measured_us", "predicted_us", "sol_us",
                "measured_percent")

        def cell(v):
            return "–" if v is None else f"{v:,.3g}" if isinstance(v, float) else f"{v:,}" \
                if isinstance(v, int) and not isinstance(v, bool) else str(v)
        rows = [[cell(r.get(c)) for c in cols] for r in self.rows()]
        name = self.gpu.name if self.gpu is not None else self.result.device.get("name", "?")
        note = ("<p>measured_percent: the speed of light as a share of the measured time; "
                "predicted: the launch model at the run's own copy ceiling.</p>")
        return render.page(f"Bench results measured on {name}: {len(rows)} measurements", note,
                           render.table(cols, rows, "", "bench"))


def bench(results) -> BenchResults:
    """A bench results file (path) or a kernels.measure.timing.BenchResult, with predictions."""
    from kernels.measure.results import load_results
    from sim.rules.devices import measured_on

    result = load_results(results) if isinstance(results, (str, bytes)) or hasattr(results, "__fspath__") \
        else results
    gpu = measured_on(result.device)
    preds = tuple(_predicted(m, gpu, result.copy_ceiling_gbps) for m in result.measurements)
    return BenchResults(result, gpu, preds)
