"""A GPU's dispatch model parameters as data: what sim/schedule/dispatch.py needs to fill SMs like the GPU.

A GPU's profile is the "dispatch" section of its per-GPU file (sim/rules/physics.py, format
"warpscope-physics/1", docs/GPU_DATA.md):

    {"format": "warpscope-physics/1", "gpu": "H200", "constants": {...},
     "dispatch": {"gpu": "NVIDIA H200", "measured": true, "date": "YYYY-MM-DD",
                  "source": "how it was measured: the command, the traces",
                  "params": {"burst_warps": 28, ..., "trickle": {"1": [0.97, 1.5], ...}}}}

The H200's, measured, is checked in (resources/physics/H200.json). `main.py calibrate` measures
the GPU it runs on and writes the same format into the user's config folder
(`dispatch/<GPU>.json` there, sim/inputs/places.py), where `profile_for` finds it first; older
"warpscope-dispatch/1" files there (the section alone, with a "format") are still read. A GPU
nobody measured gets the H200's numbers, labelled as assumed.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from sim.inputs.errors import UserError, printable
from sim.inputs.files import read_json_file, write_json_atomic
from sim.inputs.places import dispatch_dir

from sim.rules.physics import (PHYSICS_DIR, PHYSICS_FORMAT, DramShare, gpu_key, physics_for, user_file,
                               read_dram_share)

PROFILE_FORMAT = PHYSICS_FORMAT  # what calibrate writes
LEGACY_FORMAT = "warpscope-dispatch/1"  # the section alone, as calibrate wrote it before
BUILTIN_DIR = PHYSICS_DIR
WAITS = ("spin", "sleep", "memory")  # what a block's warps do while it is resident
BUSY_WAITS = ("spin",)  # ... of which these hold new blocks back


@dataclass(frozen=True, slots=True)
class DispatchParams:
    """The rules' numbers (docs/DISPATCH.md explains each rule). None has a default in code: a
    GPU's numbers come from its data (resources/physics/<GPU>.json "dispatch", or the user's
    calibration of it)."""

    burst_warps: float  # blocks start at once while fewer warps than this are busy
    trickle_cap_warps: float  # beyond the burst, blocks trickle in up to this many warps
    trickle: dict  # warps per block -> (probability that a trickle comes, its median wait in us)
    trickle_spread: float  # sigma of the log-normal trickle wait
    tick_us: float  # every SM is served once per tick
    tick_first_us: float  # an SM's first tick comes after this ...
    tick_first_spread_us: float  # ... plus up to this much (uniform over the SMs)
    tick_single_p: float  # a busy SM lets one block in at a tick with this probability,
    tick_single_cap_warps: float  # ... while fewer warps than this are busy
    handout_window_us: float  # slots freed within this long get blocks one per SM per round
    fill_warp_us: float  # the launch's first blocks reach an SM one warp per this
    sm_interval_us: float  # later, an SM starts at most one block per this
    # register file (needs the launch's registers per thread): from this share of the register
    # file held by the SM's blocks at full occupancy (above 1: never) ...
    regfile_fraction: float
    # ... a launch whose warp slots are not full (registers limit it) fills like waiting warps,
    # and one whose warp slots are full too takes beyond the burst one block at a time (no
    # quiet-SM fill) while fewer warps than this are busy
    regfile_full_cap_warps: float
    # ... and either way a block starts regfile_gap_warp_us * warps per block * exp(busy warps /
    # regfile_gap_warps) after the SM's previous start or exit: the fuller, the slower
    regfile_gap_warp_us: float
    regfile_gap_warps: float

    def trickle_for(self, warps: int) -> tuple[float, float]:
        """(probability, median wait) for blocks of `warps` warps: the table, interpolated in
        log2(warps) between its rows, clamped at its ends."""
        keys = sorted(self.trickle)
        x = math.log2(max(1, warps))
        xs = [math.log2(k) for k in keys]
        if x <= xs[0]:
            return tuple(self.trickle[keys[0]])
        if x >= xs[-1]:
            return tuple(self.trickle[keys[-1]])
        i = next(j for j in range(1, len(xs)) if x <= xs[j])
        f = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
        (p0, m0), (p1, m1) = self.trickle[keys[i - 1]], self.trickle[keys[i]]
        return p0 + f * (p1 - p0), math.exp(math.log(m0) + f * (math.log(m1) - math.log(m0)))

    def to_json(self) -> dict:
        data = asdict(self)
        data["trickle"] = {str(k): [round(float(p), 4), round(float(m), 4)]
                           for k, (p, m) in sorted(self.trickle.items())}
        return data


_LIMITS = {  # field -> (lowest, highest) allowed: anything else is a damaged file
    "burst_warps": (1, 64), "trickle_cap_warps": (1, 64),
    "trickle_spread": (0, 5), "tick_us": (0.1, 1e4), "tick_first_us": (0, 1e4),
    "tick_first_spread_us": (0, 1e4), "tick_single_p": (0, 1), "tick_single_cap_warps": (0, 64),
    "handout_window_us": (0, 1e3),
    "fill_warp_us": (0, 10), "sm_interval_us": (0, 10),
    "regfile_fraction": (0, 2), "regfile_full_cap_warps": (1, 64), "regfile_gap_warp_us": (0, 1),
    "regfile_gap_warps": (1, 64),
}
# a profile fitted before the register rule lacks its numbers: they come from the measured
# profile shipped with the app (the H200's), as every other number a GPU lacks does
OPTIONAL = ("regfile_fraction", "regfile_full_cap_warps", "regfile_gap_warp_us", "regfile_gap_warps")


def params_from_json(data, where: str) -> DispatchParams:
    if not isinstance(data, dict):
        raise UserError(f"{where}: field 'params' must be an object")
    values = {}
    for f in fields(DispatchParams):
        if f.name not in data and f.name in OPTIONAL:
            values[f.name] = getattr(builtin_profile().params, f.name)
            continue
        if f.name not in data:
            raise UserError(f"{where}: field 'params.{f.name}' is missing")
        v = data[f.name]
        if f.name == "trickle":
            values[f.name] = _trickle_from_json(v, where)
            continue
        lo, hi = _LIMITS[f.name]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise UserError(f"{where}: field 'params.{f.name}' must be a number in "
                            f"[{lo}, {hi}], got {v!r}")
        values[f.name] = int(v) if f.type == "int" else float(v)
    if values["trickle_cap_warps"] < values["burst_warps"]:
        raise UserError(f"{where}: field 'params.trickle_cap_warps' must be at least burst_warps")
    return DispatchParams(**values)


def _trickle_from_json(v, where: str) -> dict:
    bad = (f"{where}: field 'params.trickle' must map warps per block (1..32) to "
           "[probability 0..1, median wait in us > 0]")
    if not isinstance(v, dict) or not v:
        raise UserError(bad)
    table = {}
    for k, pair in v.items():
        try:
            warps = int(k)
            p, m = (float(x) for x in pair)
        except (TypeError, ValueError, OverflowError):
            raise UserError(bad) from None
        if not (1 <= warps <= 32 and 0 <= p <= 1 and 0 < m < 1e4):
            raise UserError(bad)
        table[warps] = (p, m)
    return table


@dataclass(frozen=True, slots=True)
class DispatchProfile:
    gpu: str  # the device it was measured on (or is assumed from)
    measured: bool  # False: another GPU's numbers, assumed
    date: str  # when it was measured (YYYY-MM-DD)
    source: str  # the command and the traces it was fitted on
    params: DispatchParams

    @property
    def label(self) -> str:
        """What every front end shows beside a calibrated schedule."""
        if self.measured:
            return f"calibrated on {self.gpu}, {self.date}"
        return f"assumed from {self.gpu} (not measured on this GPU)"

    def to_json(self) -> dict:
        """The "dispatch" section of a per-GPU file."""
        return {"gpu": self.gpu, "measured": self.measured, "date": self.date,
                "source": self.source, "params": self.params.to_json()}

    @classmethod
    def from_json(cls, data, where: str = "dispatch profile") -> "DispatchProfile":
        """A per-GPU file's dispatch section (or an older dispatch file), field by field; a wrong
        field is one line that names it."""
        if isinstance(data, dict) and data.get("format") == PROFILE_FORMAT:
            data = data.get("dispatch")
            if not isinstance(data, dict):
                raise UserError(f"{where}: field 'dispatch' is missing or not an object")
        elif not isinstance(data, dict) or data.get("format") != LEGACY_FORMAT:
            raise UserError(f"{where} is not a {PROFILE_FORMAT} file (nor a {LEGACY_FORMAT} one)")
        for name, kind in (("gpu", str), ("measured", bool), ("date", str), ("source", str)):
            if not isinstance(data.get(name), kind):
                raise UserError(f"{where}: field {name!r} is missing or not {kind.__name__}")
        for name, longest in (("gpu", 200), ("date", 40), ("source", 10_000)):
            if len(data[name]) > longest:
                raise UserError(f"{where}: field {name!r} is longer than {longest:,} characters")
        return cls(printable(data["gpu"]), data["measured"], printable(data["date"]),
                   printable(data["source"]), params_from_json(data.get("params"), where))


MAX_PROFILE_BYTES = 1 << 20  # the H200's is 1 KB


def load_profile(path) -> DispatchProfile:
    """A profile file; read again only when it changed (predictions ask for it per row). The
    change is told by size and inode as well as the time: a file rewritten within one tick of
    the kernel's coarse clock (a few ms) keeps its st_mtime_ns."""
    try:
        st = Path(path).stat()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError as exc:
        raise UserError(f"cannot read dispatch profile {path}: {exc.strerror or exc}") from None
    return _load(str(path), stamp)


@functools.lru_cache(maxsize=32)
def _load(path: str, _stamp: tuple) -> DispatchProfile:
    data = read_json_file(path, "dispatch profile", MAX_PROFILE_BYTES)
    return DispatchProfile.from_json(data, path)


def save_profile(path, profile: DispatchProfile, dram_share: DramShare | None = None,
                 constants: dict | None = None) -> None:
    """A per-GPU file holding the profile as its "dispatch" section (and `dram_share`, where
    given, as its "dram_share"; `constants`, {name: sim.rules.physics.Constant}, join its
    "constants"); a per-GPU file already there keeps its other constants."""
    doc = {"format": PROFILE_FORMAT, "gpu": profile.gpu, "constants": {}}
    if os.path.lexists(path):
        try:
            old = read_json_file(path, "GPU physics file", 1 << 20)
        except UserError:  # unreadable or damaged: written anew, its constants lost
            old = None
        if isinstance(old, dict) and old.get("format") == PROFILE_FORMAT:
            doc = {k: v for k, v in old.items() if k != "dispatch"}
    doc["dispatch"] = profile.to_json()
    doc["constants"] = {**doc.get("constants", {}),
                        **{k: c.to_json() for k, c in (constants or {}).items()}}
    if dram_share is not None:
        doc["dram_share"] = dram_share.to_json()
    write_json_atomic(path, doc, indent=1)


def dram_share_for(gpu) -> DramShare | None:
    """Which SMs of this GPU move bytes faster: the user's calibration of it (the "dram_share"
    section `main.py calibrate` writes into its file), else its preset's (resources/physics). A
    damaged user file or section is named on stderr, once, and the preset's is used."""
    path = user_profile_path(gpu.name)
    if os.path.lexists(path):
        try:
            st = path.stat()
            share = _user_share(str(path), (st.st_mtime_ns, st.st_size, st.st_ino))
        except (OSError, UserError) as exc:
            _ignored(path, str(exc) if isinstance(exc, UserError) else f"{path}: {exc.strerror or exc}")
            share = None
        if share is not None:
            return share
    return physics_for(gpu).dram_share


@functools.lru_cache(maxsize=32)
def _user_share(path: str, _stamp: tuple):
    data = read_json_file(path, "dispatch profile", MAX_PROFILE_BYTES)
    return read_dram_share(data.get("dram_share") if isinstance(data, dict) else None, path)


def user_dir() -> Path:
    """Where `main.py calibrate` writes (sim/inputs/places.py: ~/.config/warpscope/dispatch on Linux)."""
    return dispatch_dir()


def user_profile_path(gpu_name: str) -> Path:
    return user_file(gpu_name)


def builtin_profile() -> DispatchProfile:
    """The measured profile shipped with the app: the first per-GPU file in resources/physics
    with a measured "dispatch" section (today the H200's). Every GPU without one assumes it."""
    return load_profile(_shipped_profile_path())


@functools.cache
def _shipped_profile_path() -> Path:
    for path in sorted(BUILTIN_DIR.glob("*.json")):
        section = read_json_file(path, "GPU physics file", MAX_PROFILE_BYTES).get("dispatch")
        if isinstance(section, dict) and section.get("measured") is True:
            return path
    raise UserError(f"no measured dispatch profile in {BUILTIN_DIR}")


def profile_for(gpu_name: str, folders=None) -> DispatchProfile:
    """The profile for a GPU: the user's calibration (a file named after the device), then the
    dispatch section of the preset the name matches (sim.rules.devices.match_device, exactly), else
    the H200's labelled as assumed. A damaged user file is named on stderr, once, and the next
    one is used."""
    key = gpu_key(gpu_name)
    for folder in (folders if folders is not None else (user_dir(),)):
        path = Path(folder) / f"{key}.json"
        if os.path.lexists(path):
            try:
                return load_profile(path)
            except UserError as exc:
                _ignored(path, str(exc))
    if folders is None:
        try:
            section = physics_for(gpu_name).dispatch
        except UserError:
            section = None
        if section is not None:
            return DispatchProfile.from_json({"format": PROFILE_FORMAT, "dispatch": section},
                                             f"dispatch section for {gpu_name}")
    base = builtin_profile()
    return base if gpu_key(base.gpu) == key else replace(base, measured=False)


_IGNORED: set = set()


def _ignored(path: Path, message: str) -> None:
    """'warpscope: ignored: FILE: reason' on stderr, once per file and version of it (the version
    told by size and inode as well as the time, as load_profile tells it: a file replaced within
    one tick of the kernel's coarse clock keeps its st_mtime_ns)."""
    try:
        st = path.lstat()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        stamp = None
    if (str(path), stamp) in _IGNORED:
        return
    _IGNORED.add((str(path), stamp))
    reason = message
    for prefix in (f"cannot read dispatch profile {path}: ", f"{path}: ", f"{path} "):
        reason = reason.removeprefix(prefix)
    try:
        print(f"warpscope: ignored: {printable(path)}: {reason}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # no stderr: the preset's data is used anyway
        pass
