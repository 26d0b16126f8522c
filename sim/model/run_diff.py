"""Two runs side by side, told as one story: what changed (registers, blocks per SM, waves, the
last wave, time) and what follows from what.

A run is a launch spec ("gpu=H200,elements=2^24,block=256,regs=40"; its time predicted by
sim.model.what_if), a block trace (sim.traces.trace: its blocks' span, recorded or simulated) or one
measurement of a bench results file ("warpscope-bench/1"; `FILE#N` picks the N-th, 1-based).
`main.py diff A B` prints it; the window's Diff view shows the same `RunDiff`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from sim.rules.devices import preset, preset_for_device_name
from sim.inputs.defaults import DEFAULT_ELEMENTS, DEFAULT_GPU
from sim.inputs.errors import UserError
from sim.inputs.files import load_json_bounded, read_user_file
from sim.inputs.args import Maybe, Real, Text, Whole, check_fields
from sim.rules.occupancy import occupancy
from sim.inputs.units import parse_bytes, parse_count
from sim.model.next_step import noise_note
from sim.model.what_if import WhatIf, predict_outcome
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD, wave_fill

MAX_BENCH_BYTES = 32 * 2**20
SPEC_KEYS = ("gpu", "elements", "block", "regs", "smem", "ept", "grid", "bytes")


@dataclass(frozen=True, slots=True)
class RunFacts:
    """One run, in the numbers the story compares (None: the run does not say)."""

    label: str
    source: str  # "launch (predicted)", "trace (recorded)", "bench (measured)", ...
    gpu: str
    kernel: str | None
    elements: int | None
    threads_per_block: int | None
    regs_per_thread: int | None
    smem_per_block: int | None
    blocks: int | None
    blocks_per_sm: int | None
    limited_by: tuple[str, ...]
    waves: float | None
    last_wave_fill: float | None  # the last wave's blocks over a full wave's
    time_us: float | None
    time_how: str  # "predicted" / "measured" / "simulated"


ROWS = (("GPU", "gpu"), ("kernel", "kernel"), ("elements", "elements"),
        ("threads per block", "threads_per_block"), ("registers per thread", "regs_per_thread"),
        ("shared memory per block", "smem_per_block"), ("blocks", "blocks"),
        ("blocks per SM", "blocks_per_sm"), ("waves", "waves"), ("last wave", "last_wave_fill"),
        ("time", "time_us"))


def _shown(key: str, value) -> str:
    if value is None:
        return "—"
    if key == "waves":
        return f"{value:,.2f}"
    if key == "last_wave_fill":
        return f"{value:.0%} full"
    if key == "time_us":
        return f"{value:,.1f} us"
    if key == "smem_per_block":
        return f"{value:,} B"
    return f"{value:,}" if isinstance(value, int) else str(value)


# ---- reading a run ---------------------------------------------------------------------------

def parse_launch(text: str) -> dict:
    """"gpu=H200,elements=2^24,block=256,regs=40" -> values; UserError names the bad part."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or key not in SPEC_KEYS:
            raise UserError(f"{part!r} in {text!r} is not one of {', '.join(k + '=' for k in SPEC_KEYS)}")
        if key in out:
            raise UserError(f"{key} is given twice in {text!r}")
        value = value.strip()
        out[key] = (value if key == "gpu" else
                    parse_bytes(value, "shared memory", 0) if key == "smem" else
                    parse_count(value, key, 0))
    return out


def launch_run(text: str, label: str = "") -> RunFacts:
    v = parse_launch(text)
    gpu = preset(v.get("gpu", DEFAULT_GPU))
    elements = int(v.get("elements", DEFAULT_ELEMENTS))
    threads = int(v.get("block", 256))
    if not 1 <= threads <= gpu.max_threads_per_block or elements < 1:
        raise UserError(f"{text!r}: block must be 1..{gpu.max_threads_per_block} threads and "
                        "elements at least 1")
    per_element = v["bytes"] / elements if v.get("bytes") else BYTES_PER_ELEMENT_ADD
    w = WhatIf(threads, int(v.get("regs", 0)), int(v.get("smem", 0)), elements, per_element,
               elements_per_thread=None if "grid" in v else int(v.get("ept", 1)) or 1,
               grid_blocks=v.get("grid"))
    try:
        out = predict_outcome(gpu, w)
    except ValueError as exc:
        raise UserError(f"{text!r}: {exc}") from None
    occ = out.occupancy
    if not occ.can_launch:
        raise UserError(f"{text!r} cannot run on {gpu.name}: {occ.reason}")
    waves, fill = wave_fill(w.grid, occ.blocks_per_sm * gpu.sm_count)
    return RunFacts(label or text, "launch", gpu.name, None, elements, threads, w.regs_per_thread,
                    w.smem_per_block, w.grid, occ.blocks_per_sm, occ.limited_by, waves, fill,
                    out.time_us, "predicted")


def trace_facts(path: str, label: str = "") -> RunFacts:
    from sim.traces.trace import load_trace

    t = load_trace(path)
    sms = int(t.meta.get("sm_count") or (int(t.sm.max()) + 1))
    per_sm = int(t.max_resident_per_sm().max())
    predicted = t.meta.get("predicted") or {}
    bps = int(predicted.get("blocks_per_sm") or per_sm)
    waves, fill = wave_fill(int(t.block.size), bps * sms)
    span = float(t.end_us.max() - t.start_us.min())
    return RunFacts(label or os.path.basename(path), f"trace ({t.source})", t.gpu, None, None,
                    None, None, None, int(t.block.size), bps, (), waves, fill, span,
                    "measured (blocks' span)" if t.source == "recorded" else "simulated")


_BENCH_ROW = {"kernel": Text(200), "elements": Whole(1, 2**62), "threads_per_block": Maybe(Whole(1, 4096)),
              "regs_per_thread": Maybe(Whole(0, 1024)), "smem_per_block_bytes": Maybe(Whole(0, 2**31)),
              "grid_blocks": Maybe(Whole(1, 2**62)), "blocks_per_sm": Maybe(Whole(0, 1024)),
              "median_ms": Real(0, 1e9), "device": Text(200)}


def bench_facts(path: str, label: str = "") -> RunFacts:
    file, _, pick = path.partition("#")
    data = load_json_bounded(read_user_file(file, "bench results", MAX_BENCH_BYTES), file)
    if not isinstance(data, dict) or data.get("format") != "warpscope-bench/1":
        raise UserError(f"{file} is not a WarpScope bench results file")
    rows = data.get("measurements")
    if not isinstance(rows, list) or not rows:
        raise UserError(f"{file} holds no measurements")
    if not pick and len(rows) > 1:
        raise UserError(f"{file} holds {len(rows)} measurements: pick one as {file}#N (1..{len(rows)})")
    n = parse_count(pick or "1", "measurement number", 1, len(rows))
    row = check_fields(rows[n - 1], _BENCH_ROW, f"{file}#{n}", required=("kernel", "median_ms"),
                       defaults={"device": "?", "elements": None})
    gpu = preset_for_device_name(row["device"])
    waves = fill = None
    bps, limited = row.get("blocks_per_sm"), ()
    if gpu is not None and row.get("threads_per_block"):
        occ = occupancy(gpu, row["threads_per_block"], row.get("regs_per_thread") or 0,
                        row.get("smem_per_block_bytes") or 0)
        bps, limited = bps or occ.blocks_per_sm, occ.limited_by
    if gpu is not None and bps and row.get("grid_blocks"):
        waves, fill = wave_fill(row["grid_blocks"], bps * gpu.sm_count)
    return RunFacts(label or f"{os.path.basename(file)}#{n}", "bench", row["device"], row["kernel"],
                    row.get("elements"), row.get("threads_per_block"), row.get("regs_per_thread"),
                    row.get("smem_per_block_bytes"), row.get("grid_blocks"), bps, limited, waves,
                    fill, row["median_ms"] * 1e3, "measured")


def read_run(text: str, label: str = "") -> RunFacts:
    """A launch spec, a trace file or a bench results file (FILE#N), told apart by content."""
    file = text.partition("#")[0]
    if "=" in text and not os.path.exists(file):
        return launch_run(text, label)
    head = read_user_file(file, "run", MAX_BENCH_BYTES)[:4096]
    if '"warpscope-trace/1"' in head:
        return trace_facts(file, label)
    if '"warpscope-bench/1"' in head:
        return bench_facts(text, label)
    raise UserError(f"{file}: neither a trace (warpscope-trace/1) nor bench results "
                    "(warpscope-bench/1); or give a launch as gpu=H200,elements=2^24,block=256")


# ---- the diff --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RunDiff:
    a: RunFacts
    b: RunFacts

    def rows(self) -> list[tuple[str, str, str, bool]]:
        """(what, A, B, changed) for each row either run has."""
        out = []
        for name, key in ROWS:
            va, vb = getattr(self.a, key), getattr(self.b, key)
            if va is None and vb is None:
                continue
            changed = _shown(key, va) != _shown(key, vb)
            out.append((name, _shown(key, va), _shown(key, vb), changed))
        return out

    def story(self) -> str:
        """What changed, cause first: the inputs, then blocks per SM, waves, the tail, time."""
        a, b = self.a, self.b
        causes = []
        for name, key in (("registers per thread", "regs_per_thread"),
                          ("threads per block", "threads_per_block"),
                          ("B of shared memory per block", "smem_per_block"),
                          ("elements", "elements"), ("blocks", "blocks")):
            va, vb = getattr(a, key), getattr(b, key)
            if va is not None and vb is not None and va != vb:
                causes.append(f"{vb:,} {name} instead of {va:,}")
        parts = [f"B runs {', '.join(causes)}" if causes else "The launches are the same shape"]
        if a.blocks_per_sm and b.blocks_per_sm and a.blocks_per_sm != b.blocks_per_sm:
            why = f" (limited by {' and '.join(b.limited_by)})" if b.limited_by else ""
            parts.append(f"so {b.blocks_per_sm} blocks fit per SM instead of {a.blocks_per_sm}{why}")
        if a.waves is not None and b.waves is not None and f"{a.waves:.2f}" != f"{b.waves:.2f}":
            parts.append(f"the grid is {b.waves:,.2f} waves instead of {a.waves:,.2f}")
        if a.last_wave_fill is not None and b.last_wave_fill is not None \
                and round(100 * a.last_wave_fill) != round(100 * b.last_wave_fill):
            parts.append(f"its last wave {b.last_wave_fill:.0%} full instead of {a.last_wave_fill:.0%}")
        text = "; ".join(parts)
        if a.time_us and b.time_us:
            how = a.time_how if a.time_how == b.time_how else f"{a.time_how} vs {b.time_how}"
            change = b.time_us / a.time_us - 1
            text += (f". It takes {b.time_us:,.1f} us instead of {a.time_us:,.1f} us "
                     f"({change:+.1%}, {how}{noise_note(change)}).")
        else:
            text += "."
        return text

    def to_dict(self) -> dict:
        return {"a": asdict(self.a), "b": asdict(self.b), "story": self.story()}


def diff_runs(a: str, b: str) -> RunDiff:
    return RunDiff(read_run(a, "A"), read_run(b, "B"))


# ---- the command -----------------------------------------------------------------------------

def register(subparsers) -> None:
    p = subparsers.add_parser(
        "diff", help="two launches, traces or bench results side by side, as one story",
        description="A and B: a launch (gpu=H200,elements=2^24,block=256,regs=40[,smem=..,ept=..,"
                    "grid=..,bytes=..]; time predicted), a block trace file, or a bench results "
                    "file (FILE#N for its N-th measurement).")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_diff)


def cmd_diff(args) -> int:
    import json

    d = diff_runs(args.a, args.b)
    if args.json:
        print(json.dumps(d.to_dict(), indent=2))
        return 0
    rows = [("", f"A: {d.a.source}", f"B: {d.b.source}", False), *d.rows()]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    for name, va, vb, changed in rows:
        print(f"  {name:<{w0}}  {va:>{w1}}  {vb}{'   <- changed' if changed else ''}")
    print(f"\n{d.story()}")
    return 0


def launch_spec(gpu_name: str, w: WhatIf) -> str:
    """The launch spec `read_run` reads back as `w` (the window's "this launch")."""
    parts = [f"gpu={gpu_name}", f"elements={w.elements}", f"block={w.threads_per_block}",
             f"regs={w.regs_per_thread}", f"smem={w.smem_per_block}"]
    parts.append(f"grid={w.grid_blocks}" if w.grid_blocks is not None
                 else f"ept={w.elements_per_thread}")
    if w.bytes_per_element != BYTES_PER_ELEMENT_ADD:
        parts.append(f"bytes={round(w.bytes_moved)}")
    return ",".join(parts)
