"""Bench results on disk: JSON (format "warpscope-bench/1") or CSV, chosen by the extension.

JSON: {"format": "warpscope-bench/1", "created": ISO-8601 UTC, "command": str,
       "device": {GpuSpec fields, or {"name": "CPU (...)"}}, "copy_ceiling_gbps": float|null,
       "peak_dram_gbps": float|null, "cancelled": bool, "notes": [str],
       "measurements": [{every Measurement field by name; limited_by as a list}]}
CSV: "# key=value" lines for the same header fields (device as its name), then one row per
measurement with Measurement's field names as the header.
Both are written through a temporary file and renamed, so a failed run leaves nothing half-written.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os

from sim.inputs.errors import UserError
from sim.inputs.files import load_json_bounded, read_user_file, write_json_atomic, write_text_atomic
from sim.inputs.args import (CudaCC, Flag, Items, Maybe, Object, OneOf, Real, Text, TextList, Whole,
                        check_fields, shown)
from sim.rules.occupancy import LIMITERS

from kernels.measure.timing import FORMAT, BenchResult, Measurement

FIELDS = [f.name for f in dataclasses.fields(Measurement)]
_HEADER = ("created", "command", "copy_ceiling_gbps", "peak_dram_gbps", "cancelled",
           "compute_ceiling_tflops")
# Bounded work: a sweep writes tens to hundreds of measurements (the H200's sweeps: 75 and 90); the window simulates a prediction for each, so a file holds at most 2,000 (~2 MB).
MAX_MEASUREMENTS = 2_000
MAX_RESULTS_BYTES = 4 * 2**20

# What every field of a file may hold: the window divides by these, takes their logarithms and
# simulates their grids, so each is bounded (a damaged file is one message naming the field).
_MS = Real(hi=1e9, positive=True)  # 11 days
_GBPS = Real(0.0, 1e7)  # 10 PB/s: no memory is that fast
MEASUREMENT_SCHEMA = {
    "kernel": Text(200), "backend": Text(50), "elements": Whole(1),
    "block_size": Maybe(Whole(1, 2**31)), "threads_per_block": Maybe(Whole(1, 4096)),
    "num_warps": Maybe(Whole(1, 128)), "median_ms": _MS, "p20_ms": Real(0.0, 1e9),
    "p80_ms": Real(0.0, 1e9), "reps": Whole(0, 10**9), "flush_l2": Flag(), "bytes_moved": Whole(0),
    "bandwidth_gbps": Real(hi=1e7, positive=True), "bandwidth_p20_gbps": _GBPS,
    "bandwidth_p80_gbps": _GBPS, "regs_per_thread": Maybe(Whole(0, 1024)),
    "smem_per_block_bytes": Maybe(Whole(0, 2**30)), "is_gpu_timing": Flag(), "method": Text(2000),
    "device": Text(200), "grid_blocks": Maybe(Whole(1, 2**31 * 65535)),
    "blocks_per_sm": Maybe(Whole(1, 64)), "occupancy": Maybe(Real(0.0, 1.0)),
    "limited_by": Items(len(LIMITERS), OneOf(LIMITERS)), "waves": Maybe(Real(0.0, 1e12)),
    "percent_of_copy": Maybe(Real(0.0, 1e6)), "percent_of_peak": Maybe(Real(0.0, 1e6)),
    "flops": Maybe(Whole(0, 2**62)), "dynamic_smem_bytes": Maybe(Whole(0, 2**24)),
    "dims": Maybe(Text(200)),
}
_REQUIRED = tuple(f.name for f in dataclasses.fields(Measurement)
                  if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
RESULT_SCHEMA = {
    "created": Maybe(Text(100)), "command": Maybe(Text(10_000)), "device": Maybe(Object()),
    "copy_ceiling_gbps": Maybe(_GBPS), "peak_dram_gbps": Maybe(_GBPS), "cancelled": Maybe(Flag()),
    "compute_ceiling_tflops": Maybe(Real(0.0, 1e6)),
    "notes": TextList(1000, 10_000), "measurements": Maybe(Items(MAX_MEASUREMENTS))}
DEVICE_SCHEMA = {"name": Maybe(Text(200)), "sm_count": Maybe(Whole(1, 1024))}
_BYTES = Whole(0, 2**50)
_SMEM = Whole(0, 2**24)
GPU_SPEC_SCHEMA = {  # sim.rules.devices.GpuSpec, as `bench` on a GPU saves it
    "name": Text(200), "compute_capability": CudaCC(), "sm_count": Whole(1, 1024),
    "warp_size": OneOf((32,)), "max_threads_per_sm": Whole(32, 4096),
    "max_blocks_per_sm": Whole(1, 64), "max_threads_per_block": Whole(32, 4096),
    "regs_per_sm": Whole(1, 2**20), "regs_per_block": Whole(1, 2**20),
    "reg_alloc_unit": Whole(1, 1024), "reg_alloc_sub_partitions": Whole(1, 16),
    "max_regs_per_thread": Whole(1, 1024), "smem_per_sm_bytes": _SMEM,
    "smem_per_block_bytes": _SMEM, "smem_per_block_optin_bytes": _SMEM,
    "smem_reserved_per_block_bytes": Whole(0, 2**20), "smem_alloc_unit_bytes": Whole(1, 2**20),
    "smem_carveout_steps_kib": Items(64, Whole(0, 2**14)), "l2_bytes": _BYTES,
    "memory_bytes": _BYTES, "peak_dram_gbps": Real(hi=1e7, positive=True),
    "clock_mhz": Whole(0, 10**5), "gpc_count": Whole(1, 1024), "sms_per_tpc": Whole(1, 16),
    "source": Text(2000), "detected": Flag(),
}
_SPEC_FIELDS = {f for f in GPU_SPEC_SCHEMA if f != "detected"}


def _kind(path) -> str:
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".json", ".csv"):
        raise UserError(f"results file must end in .json or .csv, got {path!r}")
    return ext[1:]


def to_dict(result: BenchResult) -> dict:
    return {"format": FORMAT, "created": result.created, "command": result.command,
            "device": result.device, "copy_ceiling_gbps": result.copy_ceiling_gbps,
            "peak_dram_gbps": result.peak_dram_gbps, "cancelled": result.cancelled,
            "compute_ceiling_tflops": result.compute_ceiling_tflops,
            "notes": list(result.notes),
            "measurements": [dataclasses.asdict(m) | {"limited_by": list(m.limited_by)}
                             for m in result.measurements]}


def _measurement(row, where: str) -> Measurement:
    values = check_fields(row, MEASUREMENT_SCHEMA, where, required=_REQUIRED)
    values["limited_by"] = tuple(values.get("limited_by", ()))
    m = Measurement(**values)
    for name in ("p20_ms", "p80_ms"):  # the percentiles bracket the median
        if getattr(m, name) > 1e3 * m.median_ms:
            raise UserError(f"{where}: field {name!r} ({getattr(m, name)!r}) is not near median_ms "
                            f"({m.median_ms!r})")
    return m


def _device(device, where: str) -> dict:
    """The device a file was measured on: a name (and SM count), or a whole GpuSpec from `bench`
    on a GPU, whose every field the predictions use, so each is checked."""
    device = {} if device is None else device
    if not isinstance(device, dict):
        raise UserError(f"{where}: field 'device' must be an object of named fields, got {shown(device)}")
    checked = check_fields(device, DEVICE_SCHEMA, f"{where}: device")
    if _SPEC_FIELDS <= device.keys():  # a full spec: its limits must describe a possible SM
        checked |= check_fields(device, GPU_SPEC_SCHEMA, f"{where}: device")
        if not (checked["max_threads_per_block"] <= checked["max_threads_per_sm"]
                and checked["regs_per_block"] <= checked["regs_per_sm"]
                and checked["smem_per_block_bytes"] <= checked["smem_per_block_optin_bytes"]
                <= checked["smem_per_sm_bytes"]):
            raise UserError(f"{where}: device: per-block limits exceed the per-SM ones; the file is damaged")
    return device | checked


def from_dict(data, where: str = "results") -> BenchResult:
    if not isinstance(data, dict):
        raise UserError(f"{where}: not a {FORMAT} file (a JSON {type(data).__name__}, not an object)")
    if data.get("format") != FORMAT:
        raise UserError(f"{where}: not a {FORMAT} file (format={shown(data.get('format'))})")
    head = check_fields(data, RESULT_SCHEMA, where)
    ms = head.get("measurements") or []
    if len(ms) > MAX_MEASUREMENTS:
        raise UserError(f"{where} holds {len(ms):,} measurements; at most {MAX_MEASUREMENTS:,} are read")
    return BenchResult(device=_device(head.get("device"), where), created=head.get("created") or "",
                       command=head.get("command") or "",
                       measurements=tuple(_measurement(m, f"{where}: measurement {i}") for i, m in enumerate(ms)),
                       copy_ceiling_gbps=head.get("copy_ceiling_gbps"),
                       peak_dram_gbps=head.get("peak_dram_gbps"),
                       cancelled=bool(head.get("cancelled", False)),
                       notes=head.get("notes", ()),
                       compute_ceiling_tflops=head.get("compute_ceiling_tflops") or None)


def to_csv(result: BenchResult) -> str:
    buf = io.StringIO()
    header = {"format": FORMAT, "device": result.device.get("name", "")}
    header |= {key: getattr(result, key) for key in _HEADER}
    for key, value in header.items():  # one line each: a newline in a command would end it
        buf.write(f"# {key}={' '.join(str(value).splitlines())}\n")
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for m in result.measurements:
        row = dataclasses.asdict(m)
        row["limited_by"] = "+".join(m.limited_by)
        writer.writerow(row)
    return buf.getvalue()


def _parse_cell(field, text):
    """A CSV cell as the JSON value it stands for; the schema checks it afterwards."""
    if isinstance(text, list) or field is None:  # a row longer than the header
        return text
    if field == "limited_by":
        return tuple(text.split("+")) if text else ()
    kind = MEASUREMENT_SCHEMA.get(field) or RESULT_SCHEMA.get(field)
    if isinstance(kind, Text):  # text stays text, even "" or "123"
        return text
    if text is None or text in ("", "None"):
        return None
    if isinstance(kind, Maybe) and isinstance(kind.kind, Text):
        return text
    if text in ("True", "False"):
        return text == "True"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def from_csv(text: str, where: str = "results") -> BenchResult:
    buf = io.StringIO(text, newline="")  # lines end at \n or \r only (a cell may hold \x1e)
    meta, start = {}, 0
    for line in buf:
        if not line.startswith("#"):
            break
        key, _, value = line[1:].strip().partition("=")
        meta[key] = value
        start += len(line)
    if meta.get("format") != FORMAT:
        raise UserError(f"{where}: not a {FORMAT} CSV file")
    try:
        rows = list(csv.DictReader(io.StringIO(text[start:], newline="")))
    except csv.Error as exc:
        raise UserError(f"{where} is not a readable CSV file: {exc}") from None
    if len(rows) > MAX_MEASUREMENTS:
        raise UserError(f"{where} holds {len(rows):,} measurements; at most {MAX_MEASUREMENTS:,} are read")
    ms = tuple(_measurement({k: _parse_cell(k, v) for k, v in r.items() if k is not None},
                            f"{where}: row {i + 1}") for i, r in enumerate(rows))
    head = check_fields({k: _parse_cell(k, meta.get(k)) for k in _HEADER}, RESULT_SCHEMA, where)
    return BenchResult(device=_device({"name": meta.get("device", "")}, where),
                       created=head.get("created") or "", command=head.get("command") or "",
                       measurements=ms, copy_ceiling_gbps=head.get("copy_ceiling_gbps"),
                       peak_dram_gbps=head.get("peak_dram_gbps"), cancelled=bool(head.get("cancelled")),
                       compute_ceiling_tflops=head.get("compute_ceiling_tflops") or None)


def save_results(result: BenchResult, path) -> None:
    """Write JSON or CSV by extension, atomically (temporary file, then rename)."""
    if _kind(path) == "json":
        write_json_atomic(path, to_dict(result))
    else:
        write_text_atomic(path, to_csv(result))


def load_results(path) -> BenchResult:
    """Read a results file, checked field by field: one UserError line for anything damaged."""
    kind = _kind(path)
    text = read_user_file(path, "results file", MAX_RESULTS_BYTES)
    if kind == "csv":
        return from_csv(text, str(path))
    return from_dict(load_json_bounded(text, str(path)), str(path))
