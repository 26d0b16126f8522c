"""How blocks really land on SMs: a dispatch model fitted to traces recorded on the GPU.

The textbook schedule starts a block the moment a slot frees. Traces recorded on the H200
(tests/data/dispatch_h200, docs/DISPATCH.md) show that this holds while the resident warps wait
(on memory, or in `nanosleep`), but not while they are busy issuing instructions, as the Triton
trace kernel's busy loop is: then an SM starts new blocks only while few warps are busy, and the
rest of its free slots wait until blocks finish or a fixed time has passed. Per SM:

1. a waiting block starts at once while fewer than `burst_warps` (plus half the block's own
   warps: bigger blocks get in more easily) are busy on its SM;
2. beyond that, blocks trickle in, one at a time, while fewer than `trickle_warps` are busy: each
   after a wait whose median is `trickle_us`, log-normally spread (seeded, so runs repeat): on
   most SMs it lands within microseconds, on a few it waits for the release;
3. every other waiting block starts once it has waited `release_us` (blocks that began waiting
   together start together), or earlier, when finished blocks bring the busy warps back under
   the limits.

Each SM also starts at most one block per `sm_interval_us` (memory-bound kernels measure this).
Kernels whose warps do not issue while resident ("sleep", "memory") follow the textbook, apart
from that interval. The parameters live per GPU in resources/dispatch/ (measured for the H200;
other GPUs assumed until `main.py calibrate` measures them).
"""

from __future__ import annotations

import heapq
import json
import math
from collections import deque
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from sim.devices import GpuSpec
from sim.errors import UserError

PROFILE_FORMAT = "warpscope-dispatch/1"
PROFILE_DIR = Path(__file__).resolve().parent.parent / "resources" / "dispatch"
BUSY_WAITS = ("spin",)  # what resident warps do that holds new blocks back
WAITS = ("spin", "sleep", "memory")


@dataclass(frozen=True, slots=True)
class DispatchProfile:
    gpu: str  # the device it was measured on (or is assumed for)
    burst_warps: float  # new blocks start at once while fewer warps than this are busy on the SM
    trickle_warps: float  # ... then one per trickle_us while at most this many are busy
    trickle_us: float  # median wait of a trickling block (log-normally spread over SMs)
    trickle_spread: float  # sigma of that log-normal: some SMs wait far longer than others
    release_us: float  # a block kept waiting this long starts, with every block waiting beside it
    sm_interval_us: float  # the least time between two block starts on one SM
    measured: bool  # False: assumed from another GPU's measurement
    source: str  # how it was measured (date, command, traces) or what it is assumed from

    def to_dict(self) -> dict:
        return {"format": PROFILE_FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, data, where: str = "dispatch profile") -> "DispatchProfile":
        """Field by field, with one line naming the field that is wrong."""
        if not isinstance(data, dict) or data.get("format") != PROFILE_FORMAT:
            raise UserError(f"{where} is not a {PROFILE_FORMAT} file")
        values = {}
        for f in fields(cls):
            if f.name not in data:
                raise UserError(f"{where}: field {f.name!r} is missing")
            v = data[f.name]
            if f.type in ("float",):
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise UserError(f"{where}: field {f.name!r} must be a non-negative number, got {v!r}")
                v = float(v)
            elif f.type == "bool":
                if not isinstance(v, bool):
                    raise UserError(f"{where}: field {f.name!r} must be true or false, got {v!r}")
            elif not isinstance(v, str):
                raise UserError(f"{where}: field {f.name!r} must be text, got {v!r}")
            values[f.name] = v
        if values["trickle_warps"] < values["burst_warps"]:
            raise UserError(f"{where}: trickle_warps must be at least burst_warps")
        return cls(**values)

    @property
    def label(self) -> str:
        return (f"calibrated on {self.gpu}" if self.measured
                else f"assumed from {self.gpu} (not measured on this GPU)")


def load_profile(path) -> DispatchProfile:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read dispatch profile {path}: {exc}") from None
    return DispatchProfile.from_dict(data, str(path))


def builtin_profile() -> DispatchProfile:
    """The profile measured on the H200 and checked in (resources/dispatch/H200.json)."""
    return load_profile(PROFILE_DIR / "H200.json")


def profile_for(gpu: GpuSpec, extra_dirs=()) -> DispatchProfile:
    """A profile measured on this GPU (a user's calibration first, then the checked-in ones), or
    the H200's, labelled as assumed."""
    for folder in (*extra_dirs, PROFILE_DIR):
        path = Path(folder) / f"{_key(gpu.name)}.json"
        if path.is_file():
            try:
                return load_profile(path)
            except UserError:
                continue
    base = builtin_profile()
    if _key(base.gpu) == _key(gpu.name) or _key(gpu.name) in _key(base.gpu):
        return base
    return replace(base, measured=False, source=f"assumed: measured on {base.gpu} ({base.source})")


def _key(name: str) -> str:
    return "".join(ch for ch in name.upper() if ch.isalnum()).removeprefix("NVIDIA")


# ---- the engine ---------------------------------------------------------------------------------

def dispatch_schedule(gpu: GpuSpec, n_blocks: int, blocks_per_sm: int, warps_per_block: int,
                      duration_us, profile: DispatchProfile, wait: str = "spin",
                      slot_order: np.ndarray | None = None, seed: int = 0):
    """Place and start every block of the grid under `profile`.

    `duration_us`: one number, or an array with one per block. `slot_order`: global slot ids
    (sm * blocks_per_sm + k) in the order the dispatcher prefers them (default: breadth first
    over SMs). Returns (block_sm, block_slot, start_us, end_us)."""
    if n_blocks < 1 or blocks_per_sm < 1 or warps_per_block < 1:
        raise UserError("a schedule needs at least one block, one block per SM and one warp")
    if wait not in WAITS:
        raise UserError(f"what the warps do must be one of {', '.join(WAITS)}, got {wait!r}")
    durations = np.broadcast_to(np.asarray(duration_us, dtype=float), (n_blocks,))
    sms, per_sm = gpu.sm_count, blocks_per_sm
    if slot_order is None:  # breadth first: one block per SM, then the next layer
        slot_order = (np.arange(sms)[None, :] * per_sm + np.arange(per_sm)[:, None]).ravel()
    rank = np.empty(sms * per_sm, dtype=np.int64)
    rank[np.asarray(slot_order)] = np.arange(sms * per_sm)
    free = [(int(rank[g]), int(g)) for g in range(sms * per_sm)]  # the dispatcher's free slots
    heapq.heapify(free)
    busy_kernel = wait in BUSY_WAITS
    # A block of more warps gets in more easily: its own half counts toward the limit (fitted).
    burst = profile.burst_warps + warps_per_block / 2 if busy_kernel else math.inf
    trickle_cap = profile.trickle_warps if busy_kernel else math.inf
    w = warps_per_block

    block_sm = np.full(n_blocks, -1, dtype=np.int64)
    block_slot = np.full(n_blocks, -1, dtype=np.int64)
    start = np.zeros(n_blocks)
    end = np.zeros(n_blocks)
    busy = [0] * sms  # busy-issuing warps started on each SM
    waiting = [deque() for _ in range(sms)]  # (block, waiting since)
    last_start = [-math.inf] * sms
    trickle_at = [None] * sms  # time of the next trickle start, if one is due
    release_at = [None] * sms
    events: list = []  # (time, seq, kind, sm, block)
    seq = 0
    next_block = 0

    def push(t, kind, sm, block=-1):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, sm, block))
        seq += 1

    def start_block(sm, t):
        b, _since = waiting[sm].popleft()
        s = max(t, last_start[sm] + profile.sm_interval_us)
        last_start[sm] = s
        start[b], end[b] = s, s + durations[b]
        if busy_kernel:
            busy[sm] += w
        push(end[b], 0, sm, b)

    draws = np.random.default_rng(seed).standard_normal(4 * n_blocks + 16)
    drawn = 0

    def trickle_wait() -> float:
        nonlocal drawn
        z = draws[drawn % draws.size]
        drawn += 1
        return profile.trickle_us * math.exp(profile.trickle_spread * z)

    def admit(sm, t):
        while waiting[sm] and busy[sm] < burst:
            start_block(sm, t)
        if not waiting[sm]:
            trickle_at[sm] = release_at[sm] = None
            return
        if busy[sm] < trickle_cap and trickle_at[sm] is None:
            trickle_at[sm] = t + trickle_wait()
            push(trickle_at[sm], 1, sm)
        if release_at[sm] is None:
            release_at[sm] = waiting[sm][0][1] + profile.release_us
            push(release_at[sm], 2, sm)

    def fill(t):
        """The dispatcher hands queued blocks to free slots, in its order of preference."""
        nonlocal next_block
        touched = set()
        while free and next_block < n_blocks:
            _, g = heapq.heappop(free)
            sm, b = g // per_sm, next_block
            next_block += 1
            block_sm[b], block_slot[b] = sm, g % per_sm
            waiting[sm].append((b, t))
            touched.add(sm)
        return touched

    def retire(sm, b):
        g = sm * per_sm + int(block_slot[b])
        heapq.heappush(free, (int(rank[g]), g))
        if busy_kernel:
            busy[sm] -= w

    t = 0.0
    touched = fill(t)
    while True:
        for sm in touched:
            admit(sm, t)
        if not events:
            break
        t, _, kind, sm, b = heapq.heappop(events)
        touched = {sm}
        if kind == 0:  # a block ends: its slot frees and its warps stop
            retire(sm, b)
            while events and events[0][0] == t and events[0][2] == 0:  # same-instant ends
                _, _, _, sm2, b2 = heapq.heappop(events)
                retire(sm2, b2)
                touched.add(sm2)
            touched |= fill(t)
        elif kind == 1 and trickle_at[sm] == t:  # one block trickles in
            trickle_at[sm] = None
            if waiting[sm] and busy[sm] < trickle_cap:
                start_block(sm, t)
        elif kind == 2 and release_at[sm] == t:  # blocks kept waiting long enough go, together
            release_at[sm] = None
            while waiting[sm] and waiting[sm][0][1] + profile.release_us <= t + 1e-9:
                start_block(sm, t)
    return block_sm, block_slot, start, end
