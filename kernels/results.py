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
import json
import math
import os

from sim.errors import UserError
from sim.files import write_json_atomic, write_text_atomic

from .timing import FORMAT, BenchResult, Measurement

FIELDS = [f.name for f in dataclasses.fields(Measurement)]
_HEADER = ("created", "command", "copy_ceiling_gbps", "peak_dram_gbps", "cancelled",
           "compute_ceiling_tflops")


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


def _measurement(row: dict) -> Measurement:
    if not isinstance(row, dict):
        raise UserError(f"a measurement is not a set of fields: {row!r:.60}")
    known = {k: row.get(k) for k in FIELDS if k in row}
    known["limited_by"] = tuple(known.get("limited_by") or ())
    try:
        m = Measurement(**known)
    except TypeError as exc:
        raise UserError(f"a measurement lacks fields: {exc}") from None
    _check_numbers(m)
    return m


def _check_numbers(m: Measurement) -> None:
    """What the plots divide by and take logarithms of: a damaged file is one error, not a
    ZeroDivisionError or 'math domain error' in the window."""
    def bad(name, want):
        raise UserError(f"measurement of {m.kernel!r}: {name} must be {want}, got {getattr(m, name)!r}")

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    if not (isinstance(m.elements, int) and not isinstance(m.elements, bool) and m.elements >= 1):
        bad("elements", "a whole number >= 1")
    for name in ("block_size", "threads_per_block"):
        v = getattr(m, name)
        if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            bad(name, "a whole number >= 1 (or empty)")
    for name in ("median_ms", "bandwidth_gbps"):
        if not (number(getattr(m, name)) and getattr(m, name) > 0):
            bad(name, "a positive number")
    for name in ("p20_ms", "p80_ms", "bandwidth_p20_gbps", "bandwidth_p80_gbps"):
        if not (number(getattr(m, name)) and getattr(m, name) >= 0):
            bad(name, "a number >= 0")


def from_dict(data: dict) -> BenchResult:
    if not isinstance(data, dict):
        raise UserError(f"not a {FORMAT} file (a JSON {type(data).__name__}, not an object)")
    if data.get("format") != FORMAT:
        raise UserError(f"not a {FORMAT} file (format={data.get('format')!r})")
    if not isinstance(data.get("measurements", []), list):
        raise UserError(f"not a {FORMAT} file ('measurements' is not a list)")
    return BenchResult(device=data.get("device") or {}, created=data.get("created", ""),
                       command=data.get("command", ""),
                       measurements=tuple(_measurement(m) for m in data.get("measurements", [])),
                       copy_ceiling_gbps=data.get("copy_ceiling_gbps"),
                       peak_dram_gbps=data.get("peak_dram_gbps"),
                       cancelled=bool(data.get("cancelled", False)),
                       notes=tuple(data.get("notes", ())),
                       compute_ceiling_tflops=_positive(data.get("compute_ceiling_tflops")))


def to_csv(result: BenchResult) -> str:
    buf = io.StringIO()
    buf.write(f"# format={FORMAT}\n# device={result.device.get('name', '')}\n")
    for key in _HEADER:
        buf.write(f"# {key}={getattr(result, key)}\n")
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for m in result.measurements:
        row = dataclasses.asdict(m)
        row["limited_by"] = "+".join(m.limited_by)
        writer.writerow(row)
    return buf.getvalue()


def _parse_cell(field: str, text: str):
    if text == "":
        return None
    if field == "limited_by":
        return tuple(text.split("+"))
    if text in ("True", "False"):
        return text == "True"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def from_csv(text: str) -> BenchResult:
    lines = text.splitlines()
    meta = {}
    for line in lines:
        if not line.startswith("#"):
            break
        key, _, value = line[1:].strip().partition("=")
        meta[key] = value
    if meta.get("format") != FORMAT:
        raise UserError(f"not a {FORMAT} CSV file")
    rows = csv.DictReader([ln for ln in lines if not ln.startswith("#")])
    ms = tuple(_measurement({k: _parse_cell(k, v) for k, v in r.items()}) for r in rows)
    num = lambda k: float(meta[k]) if meta.get(k) not in (None, "", "None") else None  # noqa: E731
    return BenchResult(device={"name": meta.get("device", "")}, created=meta.get("created", ""),
                       command=meta.get("command", ""), measurements=ms,
                       copy_ceiling_gbps=num("copy_ceiling_gbps"),
                       peak_dram_gbps=num("peak_dram_gbps"),
                       cancelled=meta.get("cancelled") == "True",
                       compute_ceiling_tflops=_positive(num("compute_ceiling_tflops")))


def _positive(value) -> float | None:
    """A ceiling read from a file: a positive finite number, else none (a damaged file draws no
    line rather than a wrong one)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and value > 0 else None


def save_results(result: BenchResult, path) -> None:
    """Write JSON or CSV by extension, atomically (temporary file, then rename)."""
    if _kind(path) == "json":
        write_json_atomic(path, to_dict(result))
    else:
        write_text_atomic(path, to_csv(result))


def load_results(path) -> BenchResult:
    kind = _kind(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not a text file") from None
    if kind == "csv":
        return from_csv(text)
    try:
        return from_dict(json.loads(text))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
