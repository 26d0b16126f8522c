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

import json
from dataclasses import dataclass, field

import numpy as np

from sim.errors import UserError
from sim.files import write_json_atomic

FORMAT = "warpscope-trace/1"
COLUMNS = ["block", "sm", "slot", "start_us", "end_us"]
MAX_SMS = 1024  # far above any GPU (an H200 has 132 SMs); a bigger SM number is a damaged file


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


def load_trace(path) -> Trace:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:  # ValueError: bad JSON or bytes that are not UTF-8
        raise UserError(f"cannot read trace {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        fmt = data.get("format") if isinstance(data, dict) else None
        raise UserError(f"{path} is not a WarpScope trace (format {fmt!r})")
    try:
        rows = np.asarray(data["blocks"], dtype=float).reshape(-1, 5)
    except (KeyError, ValueError, TypeError):
        raise UserError(f"{path}: 'blocks' is not a list of [block, sm, slot, start_us, end_us] rows") from None
    # A damaged file must not become a 40 GiB raster or a schedule of negative SMs.
    if rows.size and not (np.isfinite(rows).all() and 0 <= rows[:, 1].min() and rows[:, 1].max() < MAX_SMS
                          and (rows[:, 4] >= rows[:, 3]).all()):
        raise UserError(f"{path}: every block needs an SM in 0..{MAX_SMS - 1} and finite times "
                        "with end >= start")
    if rows.size and not (rows[:, 4] > rows[:, 3]).any():
        raise UserError(f"{path}: no block takes any time (every end_us equals its start_us)")
    meta = data.get("meta")
    return Trace(source=data.get("source", "?"), gpu=data.get("gpu", "?"),
                 block=rows[:, 0].astype(int), sm=rows[:, 1].astype(int), slot=rows[:, 2].astype(int),
                 start_us=rows[:, 3], end_us=rows[:, 4], meta=meta if isinstance(meta, dict) else {})
