"""Many recorded block traces in two files, and back: a GPU run writes a bundle, `load_bundle`
reads its traces as sim.traces.trace.Trace, `main.py compare DIR NAME` compares one (`compare DIR`
lists them), `extract` writes one as a warpscope-trace/1 file.

    dispatch_index.json  {"format": "warpscope-trace-bundle/1", "arrays": "dispatch_traces.npz",
                          "info": {...how the run was made...},
                          "traces": [{"name", "family", "source", "gpu", "offset", "count",
                                      "meta": {...as in a trace file...}, "summary": {...}}],
                          "failed": [{"name", "family", "error"}]}
    dispatch_traces.npz  block (int32), sm (int16), start_us, end_us (float32, microseconds from
                         that trace's earliest start): all traces end to end, trace i in rows
                         offset .. offset + count; `offsets` repeats the index's offsets.

`python3 -m sim.traces.trace_bundle DIR` lists the traces; `... DIR NAME --out FILE.json` extracts one.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np

from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file, read_npz_file, write_bytes_atomic, write_json_atomic
from sim.inputs.args import Items, Object, Real, Text, Whole, check_fields, shown
from sim.traces.trace import (BUNDLE_FORMAT, MAX_SMS, MAX_TIME_US, Trace, checked_meta, known_good,
                              read_any_trace, write_trace)

INDEX_NAME = "dispatch_index.json"
ARRAYS_NAME = "dispatch_traces.npz"
COLUMNS = {"block": np.int32, "sm": np.int16, "start_us": np.float32, "end_us": np.float32}
# Bounded reading: the H200's bundle is 0.4 MB of index and 3.5 MB of arrays (1.1 M rows)
MAX_INDEX_BYTES = 32 * 2**20
MAX_ARRAYS_BYTES = 256 * 2**20
MAX_ROWS = 2**23  # 8 M blocks (the H200 run has 1.1 M), 14 bytes each
MAX_TRACES = 2**16


def write_bundle(folder, traces, failed=(), info: dict | None = None) -> None:
    """Write `traces` — (name, family, Trace, summary dict) tuples — and the `failed` entries
    ({"name", "family", "error"}) into `folder`, each file whole (temporary file, then rename)."""
    folder = Path(folder)
    names = [name for name, *_ in traces]
    if len(set(names)) != len(names):
        raise ValueError("trace names in a bundle must be unique")
    counts = [len(t.block) for _, _, t, _ in traces]
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    columns = {c: np.concatenate([np.asarray(getattr(t, c)) for _, _, t, _ in traces] or [[]])
               .astype(dtype) for c, dtype in COLUMNS.items()}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, offsets=offsets, **columns)
    write_bytes_atomic(folder / ARRAYS_NAME, buffer.getvalue())
    index = {"format": BUNDLE_FORMAT, "arrays": ARRAYS_NAME, "info": info or {},
             "traces": [{"name": name, "family": family, "source": t.source, "gpu": t.gpu,
                         "offset": int(off), "count": int(n), "meta": t.meta, "summary": summary}
                        for (name, family, t, summary), off, n in zip(traces, offsets, counts)],
             "failed": list(failed)}
    write_json_atomic(folder / INDEX_NAME, index, indent=1)


def _index_path(path) -> Path:
    path = Path(path)
    return path / INDEX_NAME if path.is_dir() else path


_INDEX_SCHEMA = {"arrays": Text(255), "info": Object(), "traces": Items(MAX_TRACES, Object()),
                 "failed": Items(MAX_TRACES, Object())}
_ENTRY_SCHEMA = {"name": Text(200), "family": Text(200), "source": Text(200), "gpu": Text(200),
                 "offset": Whole(0, MAX_ROWS), "count": Whole(1, MAX_ROWS), "meta": Object(),
                 "summary": Object()}
_SUMMARY_SCHEMA = {"makespan_us": Real(0, MAX_TIME_US)}
_FAILED_SCHEMA = {"name": Text(200), "family": Text(200), "error": Text(2000)}


def read_index(path) -> dict:
    """The bundle's index (a folder or its dispatch_index.json), checked field by field: the
    traces' entries and the failed ones, each with the fields `load_bundle` and the listing use."""
    index_path = _index_path(path)
    where = str(index_path)
    if Path(path).is_dir() and not index_path.exists():
        raise UserError(f"{path} is a folder without {INDEX_NAME}, so not a trace bundle "
                        "(open a trace file, or a bundle's folder)")
    data = read_json_file(index_path, "trace bundle index", MAX_INDEX_BYTES)
    if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
        fmt = data.get("format") if isinstance(data, dict) else None
        raise UserError(f"{where} is not a WarpScope trace bundle (format {shown(fmt)})")
    index = check_fields(data, _INDEX_SCHEMA, where, required=("traces",),
                         defaults={"arrays": ARRAYS_NAME, "info": {}, "failed": []})
    if Path(index["arrays"]).name != index["arrays"] or index["arrays"] in ("", ".", ".."):
        raise UserError(f"{where}: field 'arrays' must name a file beside the index, got "
                        f"{shown(index['arrays'])}")
    entries, names = [], set()
    for i, entry in enumerate(index["traces"]):
        e = check_fields(entry, _ENTRY_SCHEMA, f"{where}: trace {i}",
                         required=("name", "offset", "count"),
                         defaults={"family": "", "source": "recorded", "gpu": "?", "meta": {},
                                   "summary": {}})
        if e["name"] in names:
            raise UserError(f"{where}: trace {i}: the name {shown(e['name'])} is used twice")
        names.add(e["name"])
        e["summary"] = known_good(e["summary"], _SUMMARY_SCHEMA)
        e["meta"] = checked_meta(e["meta"])
        entries.append(e)
    failed = [check_fields(f, _FAILED_SCHEMA, f"{where}: failed {i}",
                           defaults={"name": "?", "error": "?"})
              for i, f in enumerate(index["failed"])]
    return {**data, **index, "traces": entries, "failed": failed}


def is_bundle(path) -> bool:
    """Whether `path` names a bundle rather than one trace: a folder (the index inside it), a file
    named like the index, or a regular file that declares the bundle's format in its opening bytes
    (a renamed index). Only a regular file is peeked at: a pipe or a device would block."""
    from sim.inputs.files import peek_user_file

    p = Path(path)
    if p.is_dir() or p.name == INDEX_NAME:
        return True
    return f'"{BUNDLE_FORMAT}"'.encode() in peek_user_file(p, 512)


def listing(index: dict) -> list[str]:
    """One line per trace of a checked index (read_index), then one per failed recording."""
    lines = []
    for entry in index["traces"]:
        makespan = entry["summary"].get("makespan_us", float("nan"))
        lines.append(f"{entry['name']:<40} {entry['count']:>8,} blocks  makespan {makespan:9.1f} us")
    lines += [f"{entry['name']:<40} FAILED: {entry['error']}" for entry in index["failed"]]
    return lines


def load_bundle(path, names=None) -> dict[str, Trace]:
    """Every trace of a bundle (a folder or its index file), by name, in recording order; only
    those in `names` when given (a name the bundle lacks is one UserError line that lists some)."""
    index_path = _index_path(path)
    index = read_index(path)
    entries = index["traces"]
    if names is not None:
        have = {e["name"] for e in entries}
        for name in names:
            if name not in have:
                some = ", ".join(sorted(have)[:6]) + (", …" if len(have) > 6 else "")
                raise UserError(f"no trace {name!r} in {path}; it has {len(have)}: {some}")
        entries = [e for e in entries if e["name"] in set(names)]
    arrays_path = index_path.parent / index["arrays"]
    cols = read_npz_file(arrays_path, "trace arrays file", COLUMNS, MAX_ARRAYS_BYTES, MAX_ROWS)
    rows = len(cols["block"])
    if any(len(v) != rows for v in cols.values()):
        raise UserError(f"{arrays_path}: the columns differ in length")
    return {entry["name"]: _entry_trace(entry, cols, rows, index_path) for entry in entries}


def _entry_trace(entry: dict, cols: dict, rows: int, index_path: Path) -> Trace:
    name, lo, n = entry["name"], entry["offset"], entry["count"]
    if lo > rows - n:
        raise UserError(f"{index_path}: trace {name!r} points outside the {rows:,} recorded rows")
    part = {c: v[lo:lo + n] for c, v in cols.items()}
    start, end = part["start_us"].astype(float), part["end_us"].astype(float)
    sm = part["sm"].astype(int)
    if sm.min() < 0 or sm.max() >= MAX_SMS or not (end >= start).all() or start.min() < 0:
        raise UserError(f"{index_path}: trace {name!r} has SMs outside 0..{MAX_SMS - 1} "
                        "or times before 0 or ends before starts")
    return Trace(source=entry["source"], gpu=entry["gpu"], block=part["block"].astype(int), sm=sm,
                 slot=np.full(n, -1), start_us=start, end_us=end, meta=entry["meta"])


def bundle_trace(path, name: str) -> Trace:
    """Trace `name` of a bundle, reading only its own rows into a Trace."""
    return load_bundle(path, [name])[name]


def read_recorded(path, name: str | None = None) -> Trace:
    """The recorded trace `main.py compare` and the window compare: trace `name` of a bundle, or
    a trace file (WarpScope's or Proton's, sim.traces.trace.read_any_trace). A bundle without a
    name, or a name for a single trace, is one UserError line."""
    if is_bundle(path):
        if name is None:
            raise UserError(f"{path} is a trace bundle: name one of its traces "
                            f"(`main.py compare {path}` lists them)")
        return bundle_trace(path, name)
    if name is not None:
        raise UserError(f"{path} is one trace, not a bundle: it holds no trace {name!r} to pick")
    return read_any_trace(path)


def extract(path, name: str, out) -> Trace:
    """Write trace `name` of a bundle as a warpscope-trace/1 file."""
    trace = bundle_trace(path, name)
    write_trace(out, trace)
    return trace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m sim.traces.trace_bundle",
        description="List the traces of a bundle (`trace` and the spin recorder write them), or "
                    "extract one as a warpscope-trace/1 file for `main.py compare`.")
    parser.add_argument("bundle", metavar="DIR", help="folder holding " + INDEX_NAME)
    parser.add_argument("name", nargs="?", help="the trace to extract (default: list them all)")
    parser.add_argument("--out", metavar="FILE.json", help="where to write the extracted trace")
    args = parser.parse_args(argv)
    try:
        if args.name is None:
            print("\n".join(listing(read_index(args.bundle))))
            return 0
        if not args.out:
            raise UserError("give --out FILE.json to extract a trace")
        extract(args.bundle, args.name, args.out)
        print(f"wrote {args.out}")
        return 0
    except UserError as exc:
        print(f"warpscope: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
