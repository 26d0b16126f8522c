"""Block traces on disk: which block ran on which SM, when. Simulated and recorded alike.

Format "warpscope-trace/1" (JSON):
    {"format": "warpscope-trace/1", "source": "simulated" | "recorded", "gpu": "H200",
     "time_unit": "us", "meta": {...how it was made...},
     "columns": ["block", "sm", "slot", "start_us", "end_us"],
     "blocks": [[0, 0, 0, 0.0, 10.0], ...]}
`slot` is the block slot on its SM for simulated traces and -1 for recorded ones (the hardware does
not say). Recorded traces have times relative to the earliest block start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.inputs.errors import UserError
from sim.inputs.files import load_json_bounded, read_user_file, write_json_atomic
from sim.inputs.args import FieldError, Object, OneOf, Real, Text, Whole, check_fields, shown

FORMAT = "warpscope-trace/1"
BUNDLE_FORMAT = "warpscope-trace-bundle/1"  # many traces in two files (sim.traces.trace_bundle)
COLUMNS = ["block", "sm", "slot", "start_us", "end_us"]
MAX_SMS = 1024  # far above any GPU (an H200 has 132 SMs); a bigger SM number is a damaged file
MAX_SLOTS = 1024  # block slots per SM (GPUs have at most 32)
MAX_BLOCK_ID = 2**31 - 1  # CUDA's grid limit in x
MAX_TIME_US = 1e12  # 11 days: any later time is a damaged file, not a kernel
MIN_BLOCK_US = 1e-3  # a block takes at least a nanosecond (as `simulate` requires)
# Bounded work: a trace is read whole (JSON) and replayed block by block (compare, the window's
# Timeline), so its size is capped before reading. 2^18 blocks is 8 MB as `simulate --trace`
# writes it and about 7 s to compare on 2 CPU cores (a recorded H200 trace has ~12,000 blocks);
# `simulate` refuses to write more, `trace` to record more.
MAX_TRACE_BLOCKS = 2**18
MAX_TRACE_BYTES = 16 * 2**20

_SCHEMA = {"source": OneOf(("simulated", "recorded")), "gpu": Text(200), "time_unit": OneOf(("us",))}
# What the rest of WarpScope reads from "meta" (kernels/tracing/trace.py, compare, the Timeline panel).
_META_SCHEMA = {"sm_count": Whole(1, MAX_SMS), "predicted": Object(), "spin_us": Real(0, MAX_TIME_US)}
_PREDICTED_SCHEMA = {"blocks_per_sm": Whole(1, MAX_SLOTS)}
_COLUMN_BOUNDS = [  # name, lowest, highest, whole number?, in words
    ("block", 0, MAX_BLOCK_ID, True, f"a block id in 0..{MAX_BLOCK_ID}"),
    ("sm", 0, MAX_SMS - 1, True, f"an SM in 0..{MAX_SMS - 1}"),
    ("slot", -1, MAX_SLOTS, True, f"a slot in -1..{MAX_SLOTS} (-1: not recorded)"),
    ("start_us", 0.0, MAX_TIME_US, False, f"a time in 0..{MAX_TIME_US:g} us"),
    ("end_us", 0.0, MAX_TIME_US, False, f"a time in 0..{MAX_TIME_US:g} us"),
]


@dataclass(frozen=True)
class Trace:
    source: str
    gpu: str
    block: np.ndarray = field(repr=False)
    sm: np.ndarray = field(repr=False)
    slot: np.ndarray = field(repr=False)
    start_us: np.ndarray = field(repr=False)
    end_us: np.ndarray = field(repr=False)
    meta: dict = field(default_factory=dict)

    def max_resident_per_sm(self) -> np.ndarray:
        """Most blocks any one SM held at the same time (per SM)."""
        best = np.zeros(int(self.sm.max()) + 1, dtype=int)
        for sm in np.unique(self.sm):
            mask = self.sm == sm
            starts, ends = self.start_us[mask], self.end_us[mask]
            events = np.r_[starts, ends]
            delta = np.r_[np.ones(starts.size), -np.ones(ends.size)]
            order = np.lexsort((delta, events))
            best[sm] = int(np.cumsum(delta[order]).max())
        return best


def trace_document(*, source: str, gpu: str, records, meta: dict | None = None) -> dict:
    """The JSON document of a trace (what save_trace writes; a results file may embed several)."""
    records = list(records)
    check_trace_size(len(records))
    rows = [[int(b), int(sm), int(slot), round(float(s), 4), round(float(e), 4)]
            for b, sm, slot, s, e in records]
    return {"format": FORMAT, "source": source, "gpu": gpu, "time_unit": "us",
            "meta": meta or {}, "columns": COLUMNS, "blocks": rows}


def save_trace(path, *, source: str, gpu: str, records, meta: dict | None = None) -> None:
    write_json_atomic(path, trace_document(source=source, gpu=gpu, records=records, meta=meta))


def write_trace(path, trace: Trace) -> None:
    """A Trace (simulated, recorded, or read from a bundle) as a warpscope-trace/1 file."""
    save_trace(path, source=trace.source, gpu=trace.gpu, meta=trace.meta,
               records=zip(trace.block, trace.sm, trace.slot, trace.start_us, trace.end_us))


def check_trace_size(blocks: int) -> None:
    """Refuse, before any work, a trace too big to read back."""
    if blocks > MAX_TRACE_BLOCKS:
        raise UserError(f"a trace of {blocks:,} blocks is too big to write; traces hold at most "
                        f"{MAX_TRACE_BLOCKS:,} blocks (use fewer elements or larger blocks)")


def load_trace(path) -> Trace:
    """Read a trace file, checked field by field: one UserError line for anything damaged."""
    return _parse(read_user_file(path, "trace", MAX_TRACE_BYTES), str(path))


def read_any_trace(path) -> Trace:
    """A WarpScope trace or a trace another tool wrote (Triton Proton's per-program timeline,
    sim.traces.proton_trace), told apart by what the file holds; the same bounded read for both."""
    return _parse(read_user_file(path, "trace", MAX_TRACE_BYTES), str(path), other_tools=True)


def _parse(text: str, where: str, other_tools: bool = False) -> Trace:
    if text.count("[") > MAX_TRACE_BLOCKS + 1000:  # a row is a [...]: refuse before parsing it all
        raise UserError(f"{where} holds more than {MAX_TRACE_BLOCKS:,} blocks, the most a trace may hold")
    data = load_json_bounded(text, where)
    if other_tools:
        from sim.traces.proton_trace import is_proton_document, proton_trace

        if is_proton_document(data):
            return proton_trace(data, where)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        fmt = data.get("format") if isinstance(data, dict) else None
        if fmt == BUNDLE_FORMAT:  # sim.traces.trace_bundle's: many traces, not one
            raise UserError(f"{where} is a trace bundle's index (format {shown(fmt)}), not one "
                            "trace: name one of its traces (`main.py compare DIR` lists them)")
        other = " or a Triton Proton timeline" if other_tools else ""
        raise UserError(f"{where} is not a WarpScope trace (format {shown(fmt)}){other}")
    fields = check_fields(data, _SCHEMA, where, required=("blocks",),
                          defaults={"source": "?", "gpu": "?"})
    meta = checked_meta(data.get("meta"))
    rows = _rows(data["blocks"], where)
    return Trace(source=fields["source"], gpu=fields["gpu"],
                 block=rows[:, 0].astype(np.int64), sm=rows[:, 1].astype(np.int64),
                 slot=rows[:, 2].astype(np.int64), start_us=rows[:, 3], end_us=rows[:, 4], meta=meta)


def checked_meta(meta) -> dict:
    """A trace's meta (a file's or a bundle's) with only the entries that pass their schema."""
    meta = known_good(meta, _META_SCHEMA)
    if "predicted" in meta:
        meta["predicted"] = known_good(meta["predicted"], _PREDICTED_SCHEMA)
    return meta


def known_good(meta, schema: dict) -> dict:
    """`meta` only says how a trace was made: a damaged entry there is dropped (then it is
    missing, and e.g. `compare` asks for --blocks-per-sm), the recorded blocks still open."""
    if not isinstance(meta, dict):
        return {}
    good = dict(meta)
    for name, kind in schema.items():
        if name in good:
            try:
                good[name] = kind(good[name])
            except FieldError:
                del good[name]
    return good


def _rows(blocks, where: str) -> np.ndarray:
    """The block rows as an (n, 5) float array, every column inside its bounds."""
    if not isinstance(blocks, list):
        raise UserError(f"{where}: field 'blocks' must be a list of {COLUMNS} rows, got {shown(blocks)}")
    if not blocks:
        raise UserError(f"{where} holds no blocks")
    if len(blocks) > MAX_TRACE_BLOCKS:
        raise UserError(f"{where} holds {len(blocks):,} blocks; a trace may hold at most {MAX_TRACE_BLOCKS:,}")
    try:
        rows = np.asarray(blocks)
    except (ValueError, TypeError):  # rows of different lengths
        rows = np.asarray([])
    if rows.ndim != 2 or rows.shape[1] != len(COLUMNS) or rows.dtype.kind not in "iuf":
        raise UserError(f"{where}: every entry of 'blocks' must be 5 numbers {COLUMNS}")
    rows = rows.astype(float)
    for col, (name, lo, hi, whole, kind) in enumerate(_COLUMN_BOUNDS):
        values = rows[:, col]
        bad = ~(np.isfinite(values) & (values >= lo) & (values <= hi))
        if whole:
            bad |= values != np.round(values)
        if bad.any():
            i = int(np.argmax(bad))
            raise UserError(f"{where}: block row {i}: {name} must be {kind}, got {shown(blocks[i][col])}")
    early = rows[:, 4] < rows[:, 3]
    if early.any():
        i = int(np.argmax(early))
        raise UserError(f"{where}: block row {i} ends before it starts (end_us < start_us)")
    if not (rows[:, 4] > rows[:, 3]).any():
        raise UserError(f"{where}: no block takes any time (every end_us equals its start_us)")
    median = float(np.median(rows[:, 4] - rows[:, 3]))
    if median < MIN_BLOCK_US:  # the simulation of such a grid is meaningless (or seconds, not us)
        raise UserError(f"{where}: the median block takes {median:.3g} us; a block takes at least "
                        f"{MIN_BLOCK_US} us (times are in microseconds)")
    ids, counts = np.unique(rows[:, 0], return_counts=True)
    if (counts > 1).any():
        raise UserError(f"{where}: block {int(ids[np.argmax(counts > 1)])} appears more than once")
    return rows
