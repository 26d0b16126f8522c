"""Any schedule as a Chrome Trace Event Format file, for Perfetto (ui.perfetto.dev) and chrome://tracing.

A schedule is a sim.schedule.timeline.Timeline: simulated (sim/schedule/) or recorded (sim/traces/),
or both side by side (`compare`). Each becomes one process of the file:

- pid 1 "predicted", pid 2 "recorded" (process_name and process_sort_index metadata events);
- one thread per block slot of an SM: tid = sm * slots + slot, named "SM 12 · slot 3"
  (thread_name; thread_sort_index = tid, so the tracks read SM by SM). A recorded trace does not
  say which slot a block used: its blocks get the first free lane of their SM (timeline.pack_lanes),
  so a slot's slices never overlap;
- one complete event ("ph": "X") per block, named by its block id in the grid, with args
  {block, wave (1-based, the waves left out before counted), start_us, end_us, sm, slot};
- instant events ("ph": "i", "s": "p") where each wave starts and where the tail starts;
- a counter track ("ph": "C") "resident blocks": the step function of blocks resident GPU-wide.

Times ("ts", "dur") are microseconds from the launch's first block start, as the format wants;
`displayTimeUnit` "ns" only asks viewers to print them finer.

Big grids: the launch model simulates at most sim.model.launch_model.MAX_WAVES waves; the identical
full waves before them are counted, not simulated (Timeline.skipped_waves). The file keeps that
elision: the simulated blocks are shifted by the elided waves' time (skipped_waves x wave_us, as
Timeline.whole_grid_us counts it), an instant event at 0 says what was left out, and `otherData`
states it per source (`<source>.elided_blocks`, `.elided_waves`, `.elided_us`), so a reader can
tell the slices it sees from the grid's blocks.
"""

from __future__ import annotations

import numpy as np

from sim import __version__
from sim.inputs.files import check_writable, write_json_atomic
from sim.schedule.timeline import Timeline, pack_lanes

PIDS = {"predicted": 1, "recorded": 2}
COUNTER = "resident blocks"
DIGITS = 4  # 0.1 ns: finer than any clock that stamped a block


def _us(values) -> list[float]:
    return np.round(np.asarray(values, dtype=float), DIGITS).tolist()


def _meta(pid: int, name: str, args: dict, tid: int = 0) -> dict:
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args}


def _offset_us(tl: Timeline) -> float:
    """Where the simulated part starts in the whole grid: after the elided identical waves."""
    return tl.skipped_waves * tl.wave_us if tl.skipped_waves else 0.0


def slots_of(tl: Timeline) -> tuple[np.ndarray, int, float]:
    """(slot of each block, slots per SM, most overlap in ns) for tracks where no two slices
    overlap: the schedule's own slots, unless two blocks in one overlap; then each block takes
    the first lane of its SM free when it starts (timeline.pack_lanes, as for a recorded trace).
    The model gives thread 0's stamps, inside a slot's life, as the hardware's clock does; a
    block dispatched into a slot may stamp its start a few ns before the one before stamps its end."""
    lane = tl.block_sm.astype(np.int64) * tl.lanes + tl.block_lane
    order = np.lexsort((tl.start_us, lane))
    same = lane[order][1:] == lane[order][:-1]
    gaps = (tl.start_us[order][1:] - tl.end_us[order][:-1])[same]
    overlap = float(-gaps.min()) if gaps.size and gaps.min() < 0 else 0.0
    if not overlap:
        return np.asarray(tl.block_lane), tl.lanes, 0.0
    packed = pack_lanes(tl.block_sm, tl.start_us, tl.end_us)
    return packed, int(packed.max()) + 1, overlap * 1e3


def track_events(tl: Timeline, pid: int) -> list[dict]:
    """The metadata naming the process's tracks (only those that hold a block)."""
    slot, per_sm, _ = slots_of(tl)
    events = []
    for tid in np.unique(tl.block_sm.astype(np.int64) * per_sm + slot).tolist():
        sm, slot = divmod(tid, per_sm)
        events.append(_meta(pid, "thread_name", {"name": f"SM {sm} · slot {slot}"}, tid))
        events.append(_meta(pid, "thread_sort_index", {"sort_index": tid}, tid))
    return events


def block_events(tl: Timeline, pid: int) -> list[dict]:
    """One complete event per block of the schedule."""
    offset = _offset_us(tl)
    start = np.round(tl.start_us + offset, DIGITS)
    end = np.round(tl.end_us + offset, DIGITS)
    dur = np.maximum(np.round(end - start, DIGITS), 0.0)
    ids = np.arange(tl.first_block, tl.first_block + tl.n_blocks).tolist()
    waves = (tl.wave + tl.skipped_waves + 1).tolist()
    lane, per_sm, _ = slots_of(tl)
    sms, slots = tl.block_sm.astype(int).tolist(), lane.astype(int).tolist()
    return [{"name": str(b), "cat": "block", "ph": "X", "ts": s, "dur": d, "pid": pid,
             "tid": sm * per_sm + slot,
             "args": {"block": b, "wave": w, "start_us": s, "end_us": e, "sm": sm, "slot": slot}}
            for b, w, s, e, d, sm, slot in zip(ids, waves, start.tolist(), end.tolist(),
                                                dur.tolist(), sms, slots)]


def marker_events(tl: Timeline, pid: int) -> list[dict]:
    """Wave starts, the tail and the elided waves as process-wide instant events."""
    offset = _offset_us(tl)
    events = []
    if tl.skipped_waves:
        events.append({"name": f"{tl.skipped_waves:,} identical full waves elided "
                               f"({tl.first_block:,} blocks, {offset:,.2f} us)",
                       "ph": "i", "s": "p", "ts": 0.0, "pid": pid, "tid": 0, "cat": "elided"})
    for k, t in enumerate(_us(tl.wave_starts_us + offset)):
        events.append({"name": f"wave {k + 1 + tl.skipped_waves} starts", "ph": "i", "s": "p",
                       "ts": t, "pid": pid, "tid": 0, "cat": "wave"})
    events.append({"name": f"tail starts ({tl.tail_fraction:.0%} of the simulated part)"
                   if tl.skipped_waves else f"tail starts ({tl.tail_fraction:.0%} of the run)",
                   "ph": "i", "s": "p", "ts": _us([tl.tail_start_us + offset])[0], "pid": pid,
                   "tid": 0, "cat": "tail", "args": {"tail_us": round(tl.tail_us, DIGITS)}})
    return events


def counter_events(tl: Timeline, pid: int) -> list[dict]:
    """Resident blocks GPU-wide at every moment it changes (retirements first at equal times)."""
    times, counts = tl.residency
    times = np.round(times + _offset_us(tl), DIGITS)
    last = np.r_[times[1:] != times[:-1], True]  # moments the rounding joined: the count after them
    return [{"name": COUNTER, "ph": "C", "ts": t, "pid": pid, "tid": 0, "args": {"blocks": c}}
            for t, c in zip(times[last].tolist(), counts[last].astype(int).tolist())]


def source_facts(label: str, tl: Timeline) -> dict[str, str]:
    """What `otherData` says of one source (flat strings: every viewer shows them as they are)."""
    _, per_sm, overlap_ns = slots_of(tl)
    tracks = (f"blocks packed into the first free lane of their SM: thread 0's stamps of blocks in "
              f"one slot overlap by up to {overlap_ns:.1f} ns" if overlap_ns
              else "one track per block slot of each SM")
    return {f"{label}.blocks_in_file": str(tl.n_blocks), f"{label}.grid_blocks": str(tl.grid_blocks),
            f"{label}.elided_blocks": str(tl.first_block),
            f"{label}.elided_waves": str(tl.skipped_waves),
            f"{label}.elided_us": f"{_offset_us(tl):.4f}",
            f"{label}.slots_per_sm": str(tl.lanes), f"{label}.sm_count": str(tl.sm_count),
            f"{label}.tracks_per_sm": str(per_sm), f"{label}.tracks": tracks}


def perfetto_document(sources: dict[str, Timeline], info: dict | None = None) -> dict:
    """The trace for {"predicted": timeline, "recorded": timeline} (either or both); `info`:
    flat facts for `otherData` (the GPU, the launch, the command)."""
    if not sources or set(sources) - set(PIDS):
        raise ValueError(f"sources must be some of {', '.join(PIDS)}, got {', '.join(sources)}")
    events: list[dict] = []
    other = {"generator": f"WarpScope {__version__}",
             "time": "ts and dur in microseconds from the launch's first block start",
             "elision": "a simulated grid longer than the model's waves keeps only its last waves; "
                        "the identical full waves before them are counted, not drawn: "
                        "<source>.elided_blocks blocks, <source>.elided_us microseconds"}
    for label, tl in sources.items():
        pid = PIDS[label]
        events.append(_meta(pid, "process_name", {"name": label}))
        events.append(_meta(pid, "process_sort_index", {"sort_index": pid}))
        events += track_events(tl, pid) + block_events(tl, pid)
        events += marker_events(tl, pid) + counter_events(tl, pid)
        other.update(source_facts(label, tl))
    other.update({k: str(v) for k, v in (info or {}).items()})
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}


def write_perfetto(path, sources: dict[str, Timeline], info: dict | None = None) -> int:
    """Write the file whole (a temporary renamed over `path`); returns the slices written."""
    check_writable(path, "--perfetto file")
    write_json_atomic(path, perfetto_document(sources, info))  # an OSError: one UserError line
    return sum(tl.n_blocks for tl in sources.values())


def add_perfetto_argument(parser) -> None:
    """`--perfetto FILE.json`, the same on every command that has a schedule."""
    from sim.inputs.args import arg_path

    parser.add_argument("--perfetto", metavar="FILE.json", type=arg_path("--perfetto file"),
                        help="also write the schedule as a Chrome Trace Event file for Perfetto "
                             "(ui.perfetto.dev) or chrome://tracing: a track per SM slot, a slice "
                             "per block, wave starts, the tail and resident blocks")


def written_line(path, sources: dict[str, Timeline], info: dict | None = None) -> str:
    """Write the file; the line the commands print."""
    slices = write_perfetto(path, sources, info)
    elided = sum(tl.first_block for tl in sources.values())
    more = f"; {elided:,} blocks of identical leading waves elided (told in its otherData)" if elided else ""
    return f"  Perfetto timeline written to {path} ({slices:,} block slices{more})"


def export_launch(args, path) -> str:
    """`export --perfetto`: the launch's prediction, as `explain` and the window make it
    (sim.cli.launch_prediction: the model's own elision of identical leading waves)."""
    from sim.cli import launch_prediction, resolve_launch
    from sim.inputs.errors import UserError
    from sim.rules.geometry import problem_text

    check_writable(path, "--perfetto file")
    gpu, occ, geo, kernel = resolve_launch(args)
    prediction = launch_prediction(gpu, occ, geo, kernel)
    if prediction is None:
        raise UserError(f"this launch cannot run on {gpu.name}: {occ.reason}")
    info = {"gpu": gpu.name, "launch": problem_text(geo), "kernel": kernel.name if kernel else "custom",
            "whole_launch_us": f"{prediction.whole_launch_us:.4f}"}
    return written_line(path, {"predicted": prediction.simulation.timeline}, info)
