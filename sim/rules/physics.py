"""Per-GPU constants of the launch model, as data: resources/physics/<KEY>.json, and the one rule
that says which preset a device name is.

Format "warpscope-physics/1" (docs/GPU_DATA.md): every constant is an object with its value,
unit, provenance ("measured", "published", "assumed") and source; a GPU's calibrated dispatch
model is its "dispatch" section (sim/schedule/dispatch_profile.py reads it). A constant taken as
it is from another GPU is a reference, {"assumed_from": "H200", "source": "why"}, never a copy:
it is resolved here at load time, so a refit of the H200 reaches every GPU that assumes its figure.
A preset with no file, or a file that lacks a constant, takes the constant from the nearest preset
that has it, labelled "assumed from <that GPU>". Code holds formulas; the numbers of a particular
GPU live here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from sim.rules.devices import DeviceMatch, GpuSpec, _presets, match_device
from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file
from sim.inputs.places import resource

MAX_PHYSICS_BYTES = 1 << 20  # a GPU's constants and dispatch section: a few KiB

PHYSICS_FORMAT = "warpscope-physics/1"
PHYSICS_DIR = resource("physics")
PROVENANCES = ("measured", "published", "assumed")
CALIBRATED = "calibrated on "  # a constant's source as `main.py calibrate` writes it
# what the launch model reads, and the unit each must be in
MODEL_CONSTANTS = {"launch_overhead_us": "us", "dram_latency_ns": "ns", "copy_fraction": "fraction",
                   "trip_overhead_ns": "ns", "trip_load_ns": "ns", "block_time_spread": "fraction",
                   "slot_hold_fraction": "fraction", "launch_gap_us": "us", "first_wave_block_ns": "ns",
                   "l2_latency_ns": "ns", "reduction_step_ns": "ns", "l2_gbps": "GB/s",  # chain_ns
                   "load_base_regs": "registers", "serialized_load_rounds": "rounds",  # load_rounds
                   "barrier_hold_share": "fraction"}  # memory_cost.slot_hold


@dataclass(frozen=True, slots=True)
class Constant:
    value: float
    unit: str
    provenance: str  # measured, published or assumed
    source: str
    date: str = ""  # measured: when
    command: str = ""  # measured: how
    assumed_from: str = ""  # assumed: the GPU it is taken from
    origin: str = ""  # assumed: how that GPU's figure was found ("measured <date>: ... there")

    def to_json(self) -> dict:
        """The constant as a per-GPU file stores it (read back by `_constant`)."""
        out = {"value": self.value, "unit": self.unit, "provenance": self.provenance,
               "source": self.source}
        return out | ({"date": self.date, "command": self.command} if self.date else {})

    @property
    def short_label(self) -> str:
        """"measured <date>", "published", "assumed from H200"."""
        if self.provenance == "measured":
            return f"measured {self.date}"
        if self.provenance == "assumed":
            return f"assumed from {self.assumed_from}" if self.assumed_from else "assumed"
        return "published"

    @property
    def label(self) -> str:
        """What a surface prints beside the number."""
        if self.provenance == "assumed":
            if not self.assumed_from:
                return "assumed"
            return f"assumed from {self.assumed_from}" + (f" ({self.origin})" if self.origin else "")
        if self.provenance == "measured":
            if self.source.startswith(CALIBRATED):  # the user's own GPU, by `main.py calibrate`
                return f"{self.source}, {self.date}"
            return f"measured {self.date}: {self.command}" if self.command else f"measured {self.date}"
        return f"published: {self.source}"


@dataclass(frozen=True, slots=True)
class Reference:
    """A constant stored as "take <gpu>'s <constant>" (docs/GPU_DATA.md), not as a number."""
    gpu: str
    constant: str  # the name in that GPU's file (usually the same name)
    source: str  # why that GPU's figure stands in


@dataclass(frozen=True)
class GpuPhysics:
    gpu: str  # the preset's name
    constants: dict = field(default_factory=dict)  # name -> Constant
    dispatch: dict | None = None  # the "dispatch" section as stored (sim.schedule.dispatch_profile reads it)
    references: dict = field(default_factory=dict)  # name -> Reference, until resolve_references
    dram_share: "DramShare | None" = None  # the "dram_share" section: SMs that move bytes faster

    def value(self, name: str) -> float:
        return self.constant(name).value

    def constant(self, name: str) -> Constant:
        try:
            return self.constants[name]
        except KeyError:
            raise UserError(f"no {name} for {self.gpu} in {PHYSICS_DIR.name}/ (and no GPU to "
                            "assume it from)") from None


def cite(source: str, limit: int = 90) -> str:
    """A source's citation without its working: up to its first parenthesis or colon."""
    head = min((i for i in (source.find(" ("), source.find(": ")) if i > 0), default=len(source))
    text = source[:head].strip().rstrip(",;")
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _origin(c: Constant) -> str:
    """How another GPU's figure was found, for beside the value that assumes it."""
    return (f"published there: {cite(c.source)}" if c.provenance == "published"
            else f"{c.label} there")


def physics_key(name: str) -> str:
    """A preset's file name: spaces as '_' ("A100 80GB" -> "A100_80GB")."""
    return name.replace(" ", "_")


@dataclass(frozen=True, slots=True)
class DramShare:
    """Some SMs of a chip move their blocks' bytes faster than the others when the DRAM is the
    bound: their share relative to the rest."""
    faster_sms: frozenset
    share: float
    above_bytes: float  # only where an SM holds more bytes in flight than this
    provenance: str
    source: str
    date: str = ""
    command: str = ""

    def weights(self, sm_count: int) -> tuple:
        """Each SM's share of the DRAM relative to an even one (mean 1), or () where every SM's
        is the same (a measurement of a chip with another SM count)."""
        if max(self.faster_sms) >= sm_count:
            return ()
        weights = [self.share if sm in self.faster_sms else 1.0 for sm in range(sm_count)]
        mean = sum(weights) / sm_count
        return tuple(w / mean for w in weights)

    def as_constant(self) -> Constant:
        """The share as the constant a prediction's confidence lists (sim.model.confidence)."""
        return Constant(self.share, "x", self.provenance, self.source, self.date, self.command)

    def to_json(self) -> dict:
        return {"faster_sms": sorted(self.faster_sms), "share": self.share,
                "above_bytes_in_flight": self.above_bytes, "provenance": self.provenance,
                "date": self.date, "command": self.command, "source": self.source}


MAX_SMS = 4096


def read_dram_share(raw, where: str) -> DramShare | None:
    """A file's "dram_share" section (None where it has none); one line naming the field if damaged."""
    if raw is None:
        return None
    sms, share = (raw.get("faster_sms"), raw.get("share")) if isinstance(raw, dict) else (None, None)
    if not isinstance(sms, list) or not sms or len(sms) > MAX_SMS or len(set(map(repr, sms))) != len(sms) \
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_SMS for v in sms):
        raise UserError(f"{where}: 'dram_share' needs 'faster_sms', a list of distinct SM ids 0..{MAX_SMS - 1}")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 8:
        raise UserError(f"{where}: 'dram_share' needs a 'share' above 0 and at most 8, got {share!r}")
    above = raw.get("above_bytes_in_flight")
    if isinstance(above, bool) or not isinstance(above, (int, float)) or not 0 <= above < 2**40:
        raise UserError(f"{where}: 'dram_share' needs 'above_bytes_in_flight', bytes per SM (0 or more), "
                        f"got {above!r}")
    if raw.get("provenance") not in PROVENANCES:
        raise UserError(f"{where}: 'dram_share' has provenance {raw.get('provenance')!r}; one of "
                        f"{', '.join(PROVENANCES)}")
    return DramShare(frozenset(sms), float(share), float(above), raw["provenance"], str(raw.get("source", "")),
                     str(raw.get("date", "")), str(raw.get("command", "")))


def _reference(name: str, raw: dict, where: str) -> Reference:
    gpu, other = raw.get("assumed_from"), raw.get("constant", name)
    if "value" in raw:
        raise UserError(f"{where}: constant {name!r} has both a 'value' and 'assumed_from'; "
                        "give one (a reference is never a copy)")
    if not isinstance(gpu, str) or not gpu.strip():
        raise UserError(f"{where}: constant {name!r} needs a GPU's name in 'assumed_from', got {gpu!r}")
    if not isinstance(other, str) or not other:
        raise UserError(f"{where}: constant {name!r} needs a constant's name in 'constant', got {other!r}")
    if raw.get("provenance", "assumed") != "assumed":
        raise UserError(f"{where}: constant {name!r} is assumed_from {gpu!r}, so its provenance is "
                        f"'assumed', not {raw.get('provenance')!r}")
    return Reference(gpu, other, str(raw.get("source", "")))


def _constant(name: str, raw, where: str) -> Constant:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: constant {name!r} must be an object with value, unit, provenance, source")
    value, prov = raw.get("value"), raw.get("provenance")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value <= 0:
        raise UserError(f"{where}: constant {name!r} needs a positive number 'value', got {value!r}")
    if prov not in PROVENANCES:
        raise UserError(f"{where}: constant {name!r} has provenance {prov!r}; one of {', '.join(PROVENANCES)}")
    unit = raw.get("unit")
    if name in MODEL_CONSTANTS and unit != MODEL_CONSTANTS[name]:
        raise UserError(f"{where}: constant {name!r} must be in {MODEL_CONSTANTS[name]}, got {unit!r}")
    return Constant(float(value), str(unit), prov, str(raw.get("source", "")), str(raw.get("date", "")),
                    str(raw.get("command", "")), str(raw.get("from", "")))


def read_physics(path) -> GpuPhysics:
    """One file; UserError (one line naming the field) if it is damaged."""
    where = str(path)
    data = read_json_file(path, "GPU physics file", MAX_PHYSICS_BYTES)
    if not isinstance(data, dict) or data.get("format") != PHYSICS_FORMAT:
        raise UserError(f"{where} is not a {PHYSICS_FORMAT} file")
    consts = data.get("constants", {})
    if not isinstance(consts, dict):
        raise UserError(f"{where}: field 'constants' must be an object")
    dispatch = data.get("dispatch")
    if dispatch is not None and not isinstance(dispatch, dict):
        raise UserError(f"{where}: field 'dispatch' must be an object")
    refs = {k: _reference(k, v, where) for k, v in consts.items()
            if isinstance(v, dict) and "assumed_from" in v}
    return GpuPhysics(str(data.get("gpu", "")),
                      {k: _constant(k, v, where) for k, v in consts.items() if k not in refs},
                      dispatch, refs, read_dram_share(data.get("dram_share"), where))


def resolve_references(files: dict[str, GpuPhysics], where: str) -> dict[str, GpuPhysics]:
    """Every reference replaced by the constant it names, followed to a number (a chain of
    references ends at the GPU whose figure it is); one line on a loop, a missing GPU or constant."""
    done: dict[tuple[str, str], Constant] = {}
    ends: dict[tuple[str, str], tuple[str, str, str]] = {}  # a resolved reference -> where it ends

    def get(gpu: str, name: str, chain: tuple) -> Constant:
        if (gpu, name) in done:
            return done[(gpu, name)]
        if (gpu, name) in chain:
            loop = " -> ".join(f"{g} {n}" for g, n in chain + ((gpu, name),))
            raise UserError(f"{where}: the assumed_from references loop: {loop}")
        if gpu not in files:
            g, n = chain[-1]
            raise UserError(f"{where}: {g}'s {n} is assumed from {gpu!r}, which has no file there")
        ph = files[gpu]
        if name in ph.constants:
            return ph.constants[name]
        if name not in ph.references:
            g, n = chain[-1]
            raise UserError(f"{where}: {g}'s {n} is assumed from {gpu}'s {name}, which {gpu} lacks")
        ref = ph.references[name]
        target = get(ref.gpu, ref.constant, chain + ((gpu, name),))
        if MODEL_CONSTANTS.get(name, target.unit) != target.unit:
            raise UserError(f"{where}: {gpu}'s {name} must be in {MODEL_CONSTANTS[name]}; "
                            f"{ref.gpu}'s {ref.constant} it is assumed from is in {target.unit}")
        # a reference to a reference names the GPU and figure at the chain's end
        end_gpu, end_name, end_origin = ends.get((ref.gpu, ref.constant),
                                                 (ref.gpu, ref.constant, _origin(target)))
        ends[(gpu, name)] = (end_gpu, end_name, end_origin)
        origin = (f"{end_name}, " if end_name != name else "") + end_origin
        done[(gpu, name)] = c = Constant(target.value, target.unit, "assumed", ref.source,
                                         assumed_from=end_gpu, origin=origin)
        return c

    return {g: replace(ph, constants={**ph.constants, **{n: get(g, n, ()) for n in ph.references}},
                       references={})
            for g, ph in files.items()}


@functools.lru_cache(maxsize=None)
def _files() -> dict[str, GpuPhysics]:
    """Preset name -> its own file (only the presets that have one), references resolved."""
    out = {}
    for name in _presets():
        path = PHYSICS_DIR / f"{physics_key(name)}.json"
        if path.is_file():
            out[name] = read_physics(path)
    return resolve_references(out, str(PHYSICS_DIR))


def _nearest(spec: GpuSpec, candidates: list[str]) -> list[str]:
    """Presets closest to `spec`: same compute capability first, then nearest DRAM bandwidth."""
    def distance(name):
        other = _presets()[name]
        return (abs((other.compute_capability[0] - spec.compute_capability[0]) * 10
                    + other.compute_capability[1] - spec.compute_capability[1]),
                abs(math.log(other.peak_dram_gbps / spec.peak_dram_gbps)), name)
    return sorted(candidates, key=distance)


@functools.lru_cache(maxsize=None)
def _physics_of_preset(name: str) -> GpuPhysics:
    own = _files().get(name)
    constants = dict(own.constants) if own else {}
    spec = _presets()[name]
    for cname in MODEL_CONSTANTS:
        if cname in constants:
            continue
        donors = [n for n in _nearest(spec, [n for n in _files() if n != name])
                  if cname in _files()[n].constants]
        if donors:
            c = _files()[donors[0]].constants[cname]
            constants[cname] = replace(c, provenance="assumed", assumed_from=donors[0],
                                       origin=_origin(c),
                                       source=f"no figure for {name}: {donors[0]}'s ({c.label})")
    return GpuPhysics(name, constants, own.dispatch if own else None,
                      dram_share=own.dram_share if own else None)


def physics_for(gpu: GpuSpec | str) -> GpuPhysics:
    """The launch-model constants of a GPU (a spec, a preset or a driver's device name). A device
    that matches no preset takes the nearest preset's, every constant labelled assumed. What the
    user's `main.py calibrate` measured on this GPU (its file in the user's config folder) wins
    over every stored figure."""
    name = gpu if isinstance(gpu, str) else gpu.name
    if isinstance(gpu, str):
        m = match_device(gpu)
        if m.preset is None:
            raise UserError(f"{gpu!r} is no preset and no device name one matches")
    else:
        m = match_device(gpu.name, gpu.sm_count) if gpu.detected else DeviceMatch(gpu, True, "")
        if m.preset is None:
            nearest = _nearest(gpu, list(_presets()))[0]
            m = DeviceMatch(_presets()[nearest], False, f"no preset is {gpu.name}")
    ph = _labelled(_physics_of_preset(m.preset.name), m)
    mine = calibrated_constants(name)
    return replace(ph, constants={**ph.constants, **mine}) if mine else ph


def user_file(name: str):
    """The user's file for a GPU (`main.py calibrate` writes it): its dispatch profile, its
    DRAM share and the constants it measured, in this module's format."""
    from sim.inputs.places import dispatch_dir

    return dispatch_dir() / f"{gpu_key(name)}.json"


def gpu_key(name: str) -> str:
    """A GPU's file name: the preset's where the name is exactly one (the driver's "NVIDIA H100
    80GB HBM3" and the preset "H100 SXM" name the same H100_SXM.json, the one a preset's lookup
    reads), else the name's letters and digits ("NVIDIA H200 NVL" -> H200NVL.json)."""
    m = match_device(name)
    if m.exact and m.preset is not None:
        return physics_key(m.preset.name)
    key = "".join(ch for ch in name.upper() if ch.isalnum())
    return key.removeprefix("NVIDIA") or key


def calibrated_constants(name: str) -> dict:
    """The constants the user's calibration measured on this GPU ({} where there is none, or
    where its file is damaged: the dispatch profile's reader names such a file once)."""
    import os

    path = user_file(name)
    try:
        st = os.stat(path)
    except OSError:
        return {}
    try:
        return _calibrated(str(path), (st.st_mtime_ns, st.st_size, st.st_ino))
    except UserError:
        return {}


@functools.lru_cache(maxsize=32)
def _calibrated(path: str, _stamp: tuple) -> dict:
    data = read_json_file(path, "GPU physics file", MAX_PHYSICS_BYTES)
    consts = data.get("constants") if isinstance(data, dict) else None
    if not isinstance(consts, dict):
        return {}
    return {k: c for k, c in ((k, _constant(k, v, path)) for k, v in consts.items()
                              if k in MODEL_CONSTANTS and isinstance(v, dict) and "value" in v)
            if c.provenance == "measured"}


def _labelled(ph: GpuPhysics, m: "DeviceMatch") -> GpuPhysics:
    """A device that is not exactly its preset: every constant is an assumption from it."""
    if m.exact:
        return ph
    consts = {k: replace(c, provenance="assumed", assumed_from=ph.gpu, origin=_origin(c),
                         source=f"{m.why}; {ph.gpu}'s figure ({c.label})")
              for k, c in ph.constants.items()}
    return GpuPhysics(ph.gpu, consts, None)


def same_gpu(device_name: str, gpu: GpuSpec) -> bool:
    """A device name ("NVIDIA H200") is exactly this GPU (a preset, or a detected spec's name)."""
    if not device_name:
        return False
    if gpu.detected:
        return device_name.strip().lower() == gpu.name.strip().lower()
    m = match_device(device_name)
    return m.exact and m.preset is not None and m.preset.name == gpu.name
