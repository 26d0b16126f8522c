"""WarpScope in a notebook: the commands as functions that return results which display themselves.

    import sim.notebook as ws
    r = ws.explain("L40S", 1_000_000, 256)   # in Jupyter: tables, the parts of the time, a timeline
    r.to_dict()                              # what `main.py explain --json` prints
    r.speed_of_light.parts                   # the gap to the speed of light, in µs
    ws.sweep("L40S", 1_000_000, block=[64, 128, 256, 512, 1024]).to_frame()   # with pandas

`explain`, `simulate`, `compare`, `next_step` and `sweep` run the same code as the commands
(sim.cli, sim.traces.compare, sim.model.next_step) and wrap their results (sim.notebook.results);
bench results files read through kernels.notebook.bench (the kernels layer reads them). Bad
input raises sim.inputs.errors.UserError with the commands' one-line message.
"""

from __future__ import annotations

from types import SimpleNamespace

from sim.inputs.defaults import DEFAULT_GPU
from sim.notebook.results import (
    CompareResult,
    ExplainResult,
    NextStepResult,
    Result,
    SimulateResult,
    SweepResult,
)

__all__ = [
    "CompareResult",
    "ExplainResult",
    "NextStepResult",
    "Result",
    "SimulateResult",
    "SweepResult",
    "compare",
    "explain",
    "next_step",
    "simulate",
    "sweep",
]


def _launch(gpu, elements, block, regs, smem, carveout):
    """(gpu, occupancy, geometry) as the commands resolve their launch options."""
    from sim.cli import resolve_launch
    from sim.inputs.units import parse_count

    if isinstance(elements, str):  # "1e6", "2^20", "4M", as the command line reads them
        elements = parse_count(elements, "elements")
    args = SimpleNamespace(gpu=gpu, elements=None if elements is None else int(elements),
                           block=None if block is None else int(block), regs=regs, smem=smem,
                           carveout=carveout)
    gpu_spec, occ, geo, _ = resolve_launch(args)
    return gpu_spec, occ, geo


def explain(gpu: str = DEFAULT_GPU, elements: int | str | None = None, block: int | None = 256,
            regs: int | None = None, smem: int | None = None,
            carveout: int | None = None) -> ExplainResult:
    """Device, geometry, occupancy, the predicted whole launch and its speed of light, for a
    launch of `elements` (one per thread) at `block` threads per block: `main.py explain`."""
    from sim.cli import explain_payload, launch_prediction

    gpu_spec, occ, geo = _launch(gpu, elements, block, regs, smem, carveout)
    return ExplainResult(gpu_spec, occ, geo, launch_prediction(gpu_spec, occ, geo),
                         explain_payload(gpu_spec, occ, geo))


def simulate(gpu: str = DEFAULT_GPU, elements: int | str | None = None, block: int | None = 256,
             regs: int | None = None, smem: int | None = None, *, cost: str = "memory",
             duration_us: float = 10.0, placement: str = "tpc-spread",
             schedule: str = "calibrated", seed: int = 0, every_block: bool = False) -> SimulateResult:
    """The block scheduler for one launch (`main.py simulate`): `cost` "memory" (the launch
    model's blocks) or "uniform" (every block `duration_us`); `every_block` simulates the whole
    grid instead of counting its leading identical waves."""
    from sim.model.launch_model import MAX_WAVES, launch_of, predict_launch
    from sim.schedule.policies import cost_model_id, placement_id, schedule_id

    gpu_spec, occ, geo = _launch(gpu, elements, block, regs, smem, None)
    cost, placement, schedule = cost_model_id(cost), placement_id(placement), schedule_id(schedule)
    launch = launch_of(occ, geo, duration_us=float(duration_us))
    prediction = predict_launch(gpu_spec, launch, cost, placement=placement, schedule=schedule,
                                seed=int(seed), max_waves=None if every_block else MAX_WAVES)
    return SimulateResult(gpu_spec, prediction, {"schedule": schedule})


def compare(trace_file: str, gpu: str | None = None, blocks_per_sm: int | None = None, *,
            mode: str = "calibrated", placement: str = "tpc-spread", seed: int = 0) -> CompareResult:
    """A recorded block trace beside its simulation, scored (`main.py compare`)."""
    from sim.rules.devices import preset
    from sim.traces.compare import compare_trace
    from sim.traces.trace import read_any_trace

    trace = read_any_trace(trace_file)
    return CompareResult(compare_trace(trace, preset(gpu) if gpu else None, blocks_per_sm,
                                       mode=mode, placement=placement, seed=seed))


def next_step(gpu: str = DEFAULT_GPU, elements: int | str | None = None, block: int | None = 256,
              regs: int | None = None, smem: int | None = None) -> NextStepResult:
    """Per lever, the smallest change that gains a block per SM or a wave, with its predicted
    time (sim.model.next_step): what `explain` lists under "Next step"."""
    from sim.model.next_step import next_steps
    from sim.model.what_if import from_geometry

    gpu_spec, occ, geo = _launch(gpu, elements, block, regs, smem, None)
    return NextStepResult(tuple(next_steps(gpu_spec, from_geometry(occ, geo))) if occ.can_launch else ())


def sweep(gpu: str = DEFAULT_GPU, elements: int | str | None = None, **varied) -> SweepResult:
    """`explain` for each value of one input, the others fixed: sweep("L40S", 10**6,
    block=[128, 256, 512]). The input is one of block, regs, smem, elements."""
    varied["elements"] = elements
    lists = {k: v for k, v in varied.items() if isinstance(v, (list, tuple, range))}
    if len(lists) != 1:
        from sim.inputs.errors import UserError

        raise UserError("sweep one input: give exactly one of block, regs, smem or elements as a list")
    (key, values), = lists.items()
    fixed = {k: v for k, v in varied.items() if k != key}
    runs = []
    for value in values:
        runs.append(explain(gpu, **{**fixed, key: value}))
    return SweepResult(key, tuple(runs))
