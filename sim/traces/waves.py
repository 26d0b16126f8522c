"""The wave-quantization experiment: matrix sizes stepped one tile at a time, measured and predicted.

A sweep is written like `M=1024,K=8192,N=256..14080x256`: fixed sizes and one range, `lo..hi xS`
stepping by S (here: one 256-wide tile column per step, 55 points). Measured points come from a
`bench --waves-sweep` result (warpscope-bench/1, each measurement naming its dims) or from the
sawtooth step of a matmul run's file (warpscope-matmul/1); predictions from
sim.model.throughput. Everything here is numpy and plain data, shared by the CLI, the window, the fit
and the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file
from sim.inputs.args import (FieldError, Items, Maybe, Object, OneOf, Real, Text, Whole, check_fields,
                        shown)
from sim.inputs.units import parse_count

DIMS = ("M", "N", "K")
MAX_POINTS = 400
MAX_SIZE = 1 << 20  # per matrix side
DEFAULT_SWEEP = "M=1024,K=8192,N=256..14080x256"  # the H200 run's sawtooth: 8 to 440 tiles
# kernel names of the measured series, as a matmul run's file labels them
KINDS = {"tiled": "matmul_tiled", "persistent": "matmul_persistent",
         "stream_k": "matmul_stream_k", "torch": "cuBLAS"}
CUBLAS = "cuBLAS"


def parse_sweep(text: str) -> list[dict]:
    """'M=1024,K=8192,N=256..14080x256' -> [{M, N, K}, ...]; one size may be a range 'lo..hi xS'
    (every S from lo to hi), the others are single values. UserError for anything else."""
    found: dict[str, list[int]] = {}
    for part in str(text).replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        name, eq, value = part.partition("=")
        name = name.strip().upper()
        if not eq or name not in DIMS:
            raise UserError(f"waves sweep: {part!r} is not M=, N= or K= (e.g. {DEFAULT_SWEEP})")
        if name in found:
            raise UserError(f"waves sweep: {name} is given twice")
        found[name] = _values(name, value.strip())
    missing = [d for d in DIMS if d not in found]
    if missing:
        raise UserError(f"waves sweep: give {', '.join(missing)} too (e.g. {DEFAULT_SWEEP})")
    ranged = [d for d in DIMS if len(found[d]) > 1]
    if len(ranged) > 1:
        raise UserError(f"waves sweep: only one size may be a range, got {', '.join(ranged)}")
    axis = ranged[0] if ranged else "N"
    return [{**{d: found[d][0] for d in DIMS}, axis: v} for v in found[axis]]


def _values(name: str, text: str) -> list[int]:
    m = re.fullmatch(r"(.+?)\.\.(.+?)(?:\s*x\s*(.+))?", text)
    if m is None:
        values = [parse_count(text, name)]
    else:
        lo, hi = parse_count(m.group(1), name), parse_count(m.group(2), name)
        step = parse_count(m.group(3), f"{name} step") if m.group(3) else lo
        if lo < 1 or hi < lo or step < 1:
            raise UserError(f"waves sweep: {name}={text} is not an increasing range of sizes")
        values = range(lo, hi + 1, step)  # counted before a single value is made
    if values[0] < 1 or values[-1] > MAX_SIZE:  # increasing: no min() over a huge range
        raise UserError(f"waves sweep: {name} must be 1..{MAX_SIZE:,}, got {text}")
    if len(values) > MAX_POINTS:
        raise UserError(f"waves sweep: {len(values):,} points is more than {MAX_POINTS}; take a bigger step")
    return list(values)


def swept_axis(dims_list: list[dict]) -> str:
    """The size that changes along the sweep ('N' if none does)."""
    return next((d for d in DIMS if len({p[d] for p in dims_list}) > 1), "N")


def dims_text(dims: dict) -> str:
    """{'M': 1024, 'N': 4352, 'K': 8192} -> 'M=1024,N=4352,K=8192' (a measurement's `dims`)."""
    return ",".join(f"{d}={int(dims[d])}" for d in DIMS)


def dims_of(text: str) -> dict:
    """'M=1024,N=4352,K=8192' -> {'M': 1024, 'N': 4352, 'K': 8192}."""
    out = {}
    for part in str(text).split(","):
        name, _, value = part.partition("=")
        try:
            out[name.strip().upper()] = Whole(1, MAX_SIZE)(int(value))
        except (ValueError, FieldError):
            raise UserError(f"dims {shown(text)} must be M=, N= and K= sizes "
                            f"1..{MAX_SIZE:,}") from None
    if set(out) != set(DIMS):
        raise UserError(f"dims {shown(text)} must name M, N and K")
    return out


@dataclass(frozen=True)
class MeasuredPoint:
    kernel: str  # registry name, or "cuBLAS" for torch.matmul
    dims: dict
    median_ms: float
    p20_ms: float
    p80_ms: float

    @property
    def flops(self) -> int:
        return 2 * self.dims["M"] * self.dims["N"] * self.dims["K"]

    def tflops(self, ms: float | None = None) -> float:
        return self.flops / ((ms or self.median_ms) * 1e-3) / 1e12


@dataclass(frozen=True)
class MeasuredSweep:
    """Measured points by kernel, with where they came from."""

    source: str  # file or "live run"
    device: str
    dtype: str
    points: dict = field(default_factory=dict)  # kernel -> [MeasuredPoint] in sweep order
    resources: dict = field(default_factory=dict)  # kernel -> (registers, shared memory)
    note: str = ""

    @property
    def dims_list(self) -> list[dict]:
        """The sizes measured, in order (the first kernel's)."""
        first = next(iter(self.points.values()), [])
        return [p.dims for p in first]


MAX_RUN_BYTES = 32 * 2**20  # the H200's run is 0.2 MB
_MS = Real(0, 1e7, positive=True)
_RUN = {"steps": Object(), "gpu_spec": Text(200), "created": Text(200), "method": Text(2000)}
_SAWTOOTH = {"points": Items(MAX_POINTS * 4, Object()), "kernels": Object(),
             "dtype": OneOf(("float16", "bfloat16")),
             "error": Text(2000), "skipped": Text(2000)}
_POINT = {d: Whole(1, MAX_SIZE) for d in DIMS}
_TIMES = {"median_ms": _MS, "p20_ms": _MS, "p80_ms": _MS}
_RESOURCES = {"regs": Maybe(Whole(0, 255)), "smem_bytes": Whole(0, 1 << 24)}


def load_matmul_run(path: str) -> MeasuredSweep:
    """The sawtooth of a matmul run's file (warpscope-matmul/1), field by field."""
    data = read_json_file(path, "matmul run", MAX_RUN_BYTES)
    if not isinstance(data, dict) or data.get("format") != "warpscope-matmul/1":
        raise UserError(f"{path} is not a matmul run (format warpscope-matmul/1)")
    run = check_fields(data, _RUN, str(path), defaults={"steps": {}, "gpu_spec": "?", "created": "",
                                                        "method": ""})
    where = f"{path}: steps.sawtooth"
    step = check_fields(run["steps"].get("sawtooth") or {}, _SAWTOOTH, where,
                        defaults={"points": [], "kernels": {}, "dtype": "bfloat16"})
    if not step["points"]:
        raise UserError(f"{path} has no sawtooth measured "
                        f"({step.get('error') or step.get('skipped') or 'empty'})")
    points: dict[str, list] = {}
    for i, row in enumerate(step["points"]):
        dims = check_fields(row, _POINT, f"{where} point {i}", required=DIMS)
        for kind, name in KINDS.items():
            if isinstance(row.get(kind), dict) and "median_ms" in row[kind]:
                m = check_fields(row[kind], _TIMES, f"{where} point {i} {kind}")
                points.setdefault(name, []).append(
                    MeasuredPoint(name, dims, m["median_ms"], m.get("p20_ms", m["median_ms"]),
                                  m.get("p80_ms", m["median_ms"])))
    resources = {}
    for kind, value in step["kernels"].items():
        if kind in KINDS:
            v = check_fields(value, _RESOURCES, f"{where} kernels {kind}", defaults={"regs": None,
                                                                                   "smem_bytes": 0})
            if v["regs"] is not None:
                resources[KINDS[kind]] = (v["regs"], v["smem_bytes"])
    return MeasuredSweep(str(path), run["gpu_spec"], step["dtype"], points, resources,
                         f"{run['created']}, {run['method']}")


def from_measurements(measurements, source: str, device: str) -> MeasuredSweep:
    """A bench result's measurements that name their dims (kernels.measure.timing.Measurement)."""
    points: dict[str, list] = {}
    resources: dict[str, tuple] = {}
    for m in measurements:
        if not getattr(m, "dims", None):
            continue
        name = CUBLAS if m.backend == "torch" else m.kernel
        points.setdefault(name, []).append(
            MeasuredPoint(name, dims_of(m.dims), m.median_ms, m.p20_ms, m.p80_ms))
        if m.regs_per_thread is not None and name not in resources:
            resources[name] = (int(m.regs_per_thread), int(m.smem_per_block_bytes or 0))
    if not points:
        raise UserError(f"{source} holds no waves sweep (no measurement names its M, N, K)")
    for name in points:
        points[name].sort(key=lambda p: tuple(p.dims[d] for d in DIMS))
    return MeasuredSweep(source, device, "float16", points, resources)


def format_sweep(dims_list: list[dict], predicted: dict, measured: MeasuredSweep | None = None,
                 concurrent_tiles: int | None = None) -> str:
    """The sweep as a text table: per size, tiles and waves, then per kernel the predicted (and
    measured) TFLOP/s; '<' marks a drop of more than 10% from the size before. `predicted`:
    kernel name -> [sim.model.throughput.MatmulPrediction] in sweep order."""
    from sim.model.throughput import drops

    axis = swept_axis(dims_list)
    names = list(predicted)
    meas = {n: (measured.points.get(n) if measured else None) for n in names}
    pdrops = {n: set(drops([p.tflops for p in predicted[n]])) for n in names}
    mdrops = {n: set(drops([p.tflops() for p in meas[n]])) for n in names if meas[n]}
    head = [axis, "tiles", "waves"]
    for n in names:
        head += [f"{_short(n)} pred"] + ([f"{_short(n)} meas"] if meas[n] else [])
    cub = measured.points.get(CUBLAS) if measured else None
    if cub:
        head.append("cuBLAS meas")
    rows = [head]
    first = predicted[names[0]]
    for i, dims in enumerate(dims_list):
        row = [f"{dims[axis]:,}", f"{first[i].tiles:,}", f"{first[i].waves:.2f}"]
        for n in names:
            row.append(f"{predicted[n][i].tflops:,.0f}" + ("<" if i in pdrops[n] else " "))
            if meas[n]:
                m = meas[n][i] if i < len(meas[n]) else None
                row.append("" if m is None else f"{m.tflops():,.0f}" + ("<" if i in mdrops[n] else " "))
        if cub:
            row.append(f"{cub[i].tflops():,.0f}" if i < len(cub) else "")
        rows.append(row)
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(r, widths)) for r in rows]
    if concurrent_tiles:
        lines.append(f"a wave is {concurrent_tiles:,} tiles (SMs x tiles per SM); TFLOP/s; "
                     "'<' = more than 10% below the size before")
    return "\n".join(lines)


def _short(name: str) -> str:
    return name.removeprefix("matmul_")
