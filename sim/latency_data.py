"""A latency run's results ("warpscope-latency/1", written by benchmarks/latency_run.py): the
forced-occupancy sweep, the calibration (DRAM latency, block dispatch) and the timing methods.

The window plots them against the loaded model; benchmarks/latency_fit.py fits on them. The
H200's run is checked in: benchmarks/latency_h200.json (`CHECKED_IN`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sim.errors import UserError

FORMAT = "warpscope-latency/1"
CHECKED_IN = Path(__file__).resolve().parents[1] / "benchmarks" / "latency_h200.json"
ELEMENTS_PER_THREAD = {"add_numba_naive": 1, "add_numba": 4}  # the two adds of the sweep


@dataclass(frozen=True, slots=True)
class OccupancyRow:
    kernel: str
    elements: int
    threads: int
    blocks_per_sm: int  # what the driver said the padding left
    round: int
    gbps: float
    gbps_p20: float
    gbps_p80: float

    @property
    def elements_per_thread(self) -> int:
        return ELEMENTS_PER_THREAD.get(self.kernel, 1)


@dataclass(frozen=True, slots=True)
class MethodRow:
    kernel: str
    elements: int
    method: str
    label: str
    measures: str
    median_us: float | None
    p20_us: float | None
    p80_us: float | None
    bandwidth_gbps: float | None
    is_gpu_timing: bool
    note: str


@dataclass(frozen=True)
class LatencyRun:
    path: str
    device_name: str
    created: str
    command: str
    dram_latency_ns: float | None  # the chase over the smallest region
    dispatch_ns: float | None  # idle blocks at full occupancy: one block start per SM
    copy_ceiling_gbps: float | None  # the best copy of the run
    occupancy: tuple[OccupancyRow, ...]
    methods: tuple[MethodRow, ...]

    def source(self) -> str:
        return f"{self.device_name}, {self.created[:10]} ({Path(self.path).name})"


def load_latency_run(path: str | Path = CHECKED_IN) -> LatencyRun:
    """Read a latency run; a file that is not one is one UserError line."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{p.name} is not JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{p.name} is not a latency run (format {FORMAT!r})")
    try:
        return _parse(str(p), data)
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{p.name}: a latency run with a missing or odd field ({exc})") from None


def _parse(path: str, data: dict) -> LatencyRun:
    cal = data.get("calibration") or {}
    chase = [c["median_ns"] for c in cal.get("dram_latency", []) if c.get("median_ns")]
    idle = [c for c in cal.get("idle_blocks", []) if c.get("blocks_per_us")]
    full = max(idle, key=lambda c: c["blocks_per_us"]) if idle else None
    sms = (data.get("device") or {}).get("sm_count")
    occ = data.get("occupancy") or {}
    copies = [p["gbps"] for p in occ.get("peers", []) if p.get("kernel") == "copy_torch"]
    rows = tuple(OccupancyRow(r["kernel"], int(r["elements"]), int(r["threads"]),
                              int(r["driver_blocks_per_sm"] or r["predicted_blocks_per_sm"]),
                              int(r.get("round", 1)), float(r["gbps"]), float(r["gbps_p20"]),
                              float(r["gbps_p80"]))
                 for r in occ.get("rows", [])
                 if r.get("target_blocks_per_sm") is not None and r.get("gbps"))
    methods = tuple(MethodRow(m["kernel"], int(m["elements"]), m["method"], m["label"],
                              m["measures"], m.get("median_us"), m.get("p20_us"), m.get("p80_us"),
                              m.get("bandwidth_gbps"), bool(m.get("is_gpu_timing")),
                              m.get("note", ""))
                    for m in data.get("methods", []))
    return LatencyRun(
        path=path, device_name=(data.get("device") or {}).get("name", "unknown GPU"),
        created=str(data.get("created", "")), command=str(data.get("command", "")),
        dram_latency_ns=min(chase) if chase else None,
        dispatch_ns=(sms / full["blocks_per_us"] * 1e3) if full and sms else None,
        copy_ceiling_gbps=max(copies) if copies else None, occupancy=rows, methods=methods)
