"""A latency run's results ("warpscope-latency/1"): the forced-occupancy sweep, the
calibration (DRAM latency, block dispatch) and the timing methods.

The window plots them against the loaded model, and the latency fit reads them. The H200's run
is checked in (`CHECKED_IN`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file
from sim.inputs.places import resource
from sim.inputs.args import Flag, Items, Maybe, Object, Real, Text, Whole, check_fields

FORMAT = "warpscope-latency/1"
CHECKED_IN = resource("measured", "H200_latency.json")
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


MAX_LATENCY_BYTES = 16 * 2**20  # the H200's run is 0.2 MB
MAX_ROWS = 100_000
_GBPS = Real(0, 1e6, positive=True)
_TEXT = Text(10_000)
_SCHEMA = {"device": Object(), "created": _TEXT, "command": _TEXT, "calibration": Object(),
           "occupancy": Object(), "methods": Items(MAX_ROWS, Object())}
_DEVICE = {"name": Text(200), "sm_count": Whole(1, 1024)}
_CALIBRATION = {"dram_latency": Items(MAX_ROWS, Object()), "idle_blocks": Items(MAX_ROWS, Object())}
_CHASE = {"median_ns": Maybe(Real(0, 1e9))}
_IDLE = {"blocks_per_us": Maybe(Real(0, 1e9))}
_OCCUPANCY = {"rows": Items(MAX_ROWS, Object()), "peers": Items(MAX_ROWS, Object())}
_PEER = {"kernel": _TEXT, "gbps": Maybe(Real(0, 1e6))}
_ROW = {"kernel": _TEXT, "elements": Whole(1), "threads": Whole(1, 1024),
        "driver_blocks_per_sm": Maybe(Whole(0, 1024)),
        "predicted_blocks_per_sm": Maybe(Whole(0, 1024)),
        "round": Whole(0, 10_000), "target_blocks_per_sm": Maybe(Whole(0, 1024)),
        "gbps": Maybe(Real(0, 1e6)), "gbps_p20": _GBPS, "gbps_p80": _GBPS}
_METHOD = {"kernel": _TEXT, "elements": Whole(1), "method": _TEXT, "label": _TEXT,
           "measures": _TEXT,
           "median_us": Maybe(Real(0, 1e12)), "p20_us": Maybe(Real(0, 1e12)),
           "p80_us": Maybe(Real(0, 1e12)), "bandwidth_gbps": Maybe(Real(0, 1e6)),
           "is_gpu_timing": Flag(), "note": _TEXT}


def load_latency_run(path: str | Path = CHECKED_IN) -> LatencyRun:
    """Read a latency run, field by field; a file that is not one is one UserError line naming
    the field."""
    data = read_json_file(path, "latency run", MAX_LATENCY_BYTES)
    where = str(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{where} is not a latency run (format {FORMAT!r})")
    return _parse(where, data)


def _each(items, schema: dict, where: str, required=(), defaults=None) -> list[dict]:
    return [check_fields(item, schema, f"{where} {i}", required=required, defaults=defaults)
            for i, item in enumerate(items)]


def _parse(path: str, data: dict) -> LatencyRun:
    top = check_fields(data, _SCHEMA, path, defaults={"device": {}, "created": "", "command": "",
                                                      "calibration": {}, "occupancy": {},
                                                      "methods": []})
    device = check_fields(top["device"], _DEVICE, f"{path}: device",
                          defaults={"name": "unknown GPU", "sm_count": None})
    cal = check_fields(top["calibration"], _CALIBRATION, f"{path}: calibration",
                       defaults={"dram_latency": [], "idle_blocks": []})
    chase = [c["median_ns"] for c in _each(cal["dram_latency"], _CHASE, f"{path}: dram_latency")
             if c.get("median_ns")]
    idle = [c for c in _each(cal["idle_blocks"], _IDLE, f"{path}: idle_blocks")
            if c.get("blocks_per_us")]
    full = max(idle, key=lambda c: c["blocks_per_us"]) if idle else None
    sms = device["sm_count"]
    occ = check_fields(top["occupancy"], _OCCUPANCY, f"{path}: occupancy",
                       defaults={"rows": [], "peers": []})
    copies = [p["gbps"] for p in _each(occ["peers"], _PEER, f"{path}: occupancy peer")
              if p.get("kernel") == "copy_torch" and p.get("gbps")]
    rows = []
    for i, r in enumerate(occ["rows"]):
        r = check_fields(r, _ROW, f"{path}: occupancy row {i}",
                         required=("kernel", "elements", "threads"),
                         defaults={"round": 1, "driver_blocks_per_sm": None,
                                   "predicted_blocks_per_sm": None, "target_blocks_per_sm": None,
                                   "gbps": None})
        if r["target_blocks_per_sm"] is None or not r["gbps"]:
            continue
        blocks = r["driver_blocks_per_sm"] or r["predicted_blocks_per_sm"]
        if not blocks or "gbps_p20" not in r or "gbps_p80" not in r:
            raise UserError(f"{path}: occupancy row {i}: fields 'driver_blocks_per_sm' (or "
                            "'predicted_blocks_per_sm'), 'gbps_p20' and 'gbps_p80' are needed")
        rows.append(OccupancyRow(r["kernel"], r["elements"], r["threads"], blocks, r["round"],
                                 r["gbps"], r["gbps_p20"], r["gbps_p80"]))
    methods = tuple(MethodRow(m["kernel"], m["elements"], m["method"], m["label"], m["measures"],
                              m["median_us"], m["p20_us"], m["p80_us"], m["bandwidth_gbps"],
                              m["is_gpu_timing"], m["note"])
                    for m in _each(top["methods"], _METHOD, f"{path}: method",
                                   required=("kernel", "elements", "method", "label", "measures"),
                                   defaults={"median_us": None, "p20_us": None, "p80_us": None,
                                             "bandwidth_gbps": None, "is_gpu_timing": False,
                                             "note": ""}))
    return LatencyRun(
        path=path, device_name=device["name"], created=top["created"], command=top["command"],
        dram_latency_ns=min(chase) if chase else None,
        dispatch_ns=(sms / full["blocks_per_us"] * 1e3) if full and sms else None,
        copy_ceiling_gbps=max(copies) if copies else None, occupancy=tuple(rows), methods=methods)
