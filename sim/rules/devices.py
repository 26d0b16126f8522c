"""GPU descriptions: everything the occupancy rules and the views need, as frozen data.

Figures live in resources/gpus.json with the source of each; this module only loads them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from functools import lru_cache

from sim.inputs.errors import UserError
from sim.inputs.files import read_json_file
from sim.inputs.places import resource

_DATA_FILE = resource("gpus.json")


@dataclass(frozen=True, slots=True)
class GpuSpec:
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    warp_size: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    regs_per_sm: int
    regs_per_block: int
    reg_alloc_unit: int  # registers are handed to a warp in chunks of this many
    reg_alloc_sub_partitions: int  # an SM's register file is split into this many quarters
    max_regs_per_thread: int
    smem_per_sm_bytes: int
    smem_per_block_bytes: int  # default per-block limit without opt-in
    smem_per_block_optin_bytes: int  # per-block limit after cudaFuncSetAttribute opt-in
    smem_reserved_per_block_bytes: int  # the driver's own per-block reserve (cc >= 8.0)
    smem_alloc_unit_bytes: int
    smem_carveout_steps_kib: tuple[int, ...]  # shared-memory sizes the L1/shared split can take
    l2_bytes: int
    memory_bytes: int
    peak_dram_gbps: float
    clock_mhz: int
    gpc_count: int
    sms_per_tpc: int
    source: str
    detected: bool = False
    # Dense (no 2:4 sparsity) BF16 tensor-core rate with FP32 accumulation, from the datasheet or
    # whitepaper named in `source`; None where no such figure is sourced (or there is no BF16).
    tensor_tflops_bf16: float | None = None
    # The same for FP16 inputs (FP32 accumulation); also where there is no BF16 (Volta, Turing).
    tensor_tflops_fp16: float | None = None
    # The SM ids of each GPC, as a cluster's blocks see them (sim/rules/clusters.py), where a
    # layout is known, with its source ("measured ..." or "assumed ..."); None: split evenly.
    gpcs: tuple[tuple[int, ...], ...] | None = None
    gpcs_source: str | None = None

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def cc_string(self) -> str:
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["compute_capability"] = self.cc_string
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "GpuSpec":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["compute_capability"] = _parse_cc(values["compute_capability"])
        values["smem_carveout_steps_kib"] = tuple(values["smem_carveout_steps_kib"])
        values["gpcs"] = _gpc_tuple(values.get("gpcs"))
        return cls(**values)


def _gpc_tuple(gpcs):
    """A GPC layout from JSON (lists) as tuples, so a GpuSpec stays hashable."""
    return None if gpcs is None else tuple(tuple(int(sm) for sm in g) for g in gpcs)


def _parse_cc(cc) -> tuple[int, int]:
    if isinstance(cc, str):
        major, _, minor = cc.partition(".")
        return int(major), int(minor or 0)
    return int(cc[0]), int(cc[1])


@lru_cache(maxsize=1)
def _data() -> dict:
    return read_json_file(_DATA_FILE, "GPU table", 1 << 22)


def architecture_limits(compute_capability) -> dict:
    """The per-SM limits that follow from a compute capability alone."""
    major, minor = _parse_cc(compute_capability)
    arch = _data()["architectures"].get(f"{major}.{minor}")
    if arch is None:
        known = ", ".join(_data()["architectures"])
        raise UserError(f"compute capability {major}.{minor} is not modelled (known: {known})")
    limits = dict(_data()["common"])
    limits.update(arch)
    limits["smem_carveout_steps_kib"] = tuple(limits["smem_carveout_steps_kib"])
    return limits


@lru_cache(maxsize=None)
def _presets() -> dict[str, GpuSpec]:
    specs = {}
    for entry in _data()["presets"]:
        values = architecture_limits(entry["compute_capability"])
        values.update(entry)
        values["compute_capability"] = _parse_cc(entry["compute_capability"])
        values["gpcs"] = _gpc_tuple(values.get("gpcs"))
        specs[entry["name"]] = GpuSpec(**values)
    return specs


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def presets() -> list[str]:
    """Names of the known GPUs, smallest compute capability first."""
    return list(_presets())


def preset(name: str) -> GpuSpec:
    """A known GPU by name, matched case- and punctuation-insensitively ("h200", "A100-80GB"), or
    by the driver's device name where it is exactly one preset ("NVIDIA H100 80GB HBM3")."""
    wanted = _key(name)
    for spec_name, spec in _presets().items():
        if _key(spec_name) == wanted:
            return spec
    # the model alone ("A100", "h100") where presets differ by memory: name the candidates
    models = [n for n in _presets() if _key(n.split()[0]) == wanted]
    if models:
        raise UserError(f"GPU {name!r} could be {' or '.join(models)}: name one "
                        f"(they differ in memory bandwidth)")
    m = match_device(name)
    if m.preset is not None and m.exact:
        return m.preset
    toks = _tokens(name)
    if m.preset is not None and toks and _model(toks) == _model(_tokens(m.preset.name)):
        raise UserError(f"GPU {name!r} is no preset: {m.why}; --gpu {m.preset.name!r} stands in "
                        "for it")
    raise UserError(f"unknown GPU {name!r}; choose one of: {', '.join(presets())}")


# ---- the one rule: which preset a driver's device name is ------------------------------------------

@dataclass(frozen=True, slots=True)
class DeviceMatch:
    preset: GpuSpec | None
    exact: bool  # False: a variant the preset stands in for (its data then is assumed)
    why: str  # for a variant: what differs


_VENDOR = {"NVIDIA", "TESLA", "GEFORCE", "QUADRO"}
_FORM = {"PCIE": "PCIe", "NVL": "NVL", "SXM": "SXM", "SXM2": "SXM", "SXM4": "SXM", "SXM5": "SXM",
         "HBM3": "SXM"}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[\s\-_/]+", name.upper()) if t and t not in _VENDOR]


def _model(toks: list[str]) -> str:
    """The model word: "H200", "A100", "RTX4090"."""
    return toks[0] + toks[1] if toks[0] == "RTX" and len(toks) > 1 else toks[0]


def match_device(device_name: str, sm_count: int | None = None) -> DeviceMatch:
    """The preset a device name refers to. The model word must be equal ("L40" is not "L40S");
    among presets of one model, the memory size ("80GB") and form factor ("PCIe") a preset names
    must be in the device name. A form factor or size the chosen preset does not name ("H200 NVL",
    "A100 80GB PCIe") makes the match inexact: the preset stands in for it, labelled assumed.
    A matching SM count breaks ties; a different one makes the match inexact."""
    toks = _tokens(device_name)
    if not toks:
        return DeviceMatch(None, False, "no device name")
    model = _model(toks)
    forms = {_FORM[t] for t in toks if t in _FORM}
    sizes = {t for t in toks if re.fullmatch(r"\d+GB", t)}
    best, best_score = None, None
    for spec in _presets().values():
        ptoks = _tokens(spec.name)
        if _model(ptoks) != model:
            continue
        pforms = {_FORM[t] for t in ptoks if t in _FORM}
        psizes = {t for t in ptoks if re.fullmatch(r"\d+GB", t)}
        if (psizes and not psizes <= sizes) or (pforms and forms and not pforms <= forms):
            continue
        score = (len(psizes) + len(pforms), sm_count == spec.sm_count)
        if best_score is None or score > best_score:
            best, best_score = spec, score
    if best is None:  # a sibling with a longer or shorter model name: "L40" and the L40S
        kin = [s for s in _presets().values() if _model(_tokens(s.name)).startswith(model)
               or model.startswith(_model(_tokens(s.name)))]
        if not kin:
            return DeviceMatch(None, False, f"no preset is a {device_name}")
        return DeviceMatch(kin[0], False, f"{device_name} is not the {kin[0].name} (a sibling chip)")
    ptoks = set(_tokens(best.name))
    extra_forms = forms - {_FORM[t] for t in ptoks if t in _FORM} - {"SXM"}
    extra_sizes = sizes - ptoks if any(re.fullmatch(r"\d+GB", t) for t in ptoks) else set()
    why = []
    if extra_forms:
        why.append(f"{device_name} is the {'/'.join(sorted(extra_forms))} form of the {best.name} "
                   "(other clocks and power)")
    if extra_sizes:
        why.append(f"{device_name} has {'/'.join(sorted(extra_sizes))}")
    if sm_count is not None and sm_count != best.sm_count:
        why.append(f"{device_name} has {sm_count} SMs, the {best.name} {best.sm_count}")
    return DeviceMatch(best, not why, "; ".join(why))


def preset_for_device_name(device_name: str, sm_count: int | None = None) -> GpuSpec | None:
    """The preset a driver's device name refers to (`match_device`), exact or standing in."""
    return match_device(device_name, sm_count).preset


def measured_on(device) -> GpuSpec | None:
    """The GPU a results file was measured on, from its "device" entry: the full spec `bench`
    saves, or a preset matched by name for files that only carry the name."""
    device = device if isinstance(device, dict) else {}
    try:
        return GpuSpec.from_dict(device)
    except (KeyError, TypeError, ValueError):
        return preset_for_device_name(device.get("name", ""), device.get("sm_count"))


def spec_from_device(
    *,
    name: str,
    compute_capability,
    sm_count: int,
    l2_bytes: int,
    memory_bytes: int,
    peak_dram_gbps: float,
    clock_mhz: int,
    **measured,
) -> GpuSpec:
    """A spec for a real device: architecture limits from its compute capability, overridden by
    whatever the driver reported (field names of GpuSpec)."""
    source = "read from the device driver"
    try:
        values = architecture_limits(compute_capability)
    except UserError:
        # A newer or rarer chip (8.7, 10.3, 12.1, ...): the driver's numbers below override most
        # limits; allocation units and carveout steps come from the closest modelled capability.
        nearest = _nearest_capability(_parse_cc(compute_capability))
        values = architecture_limits(nearest)
        source += f"; allocation rules of compute capability {nearest} assumed"
    values.update(gpc_count=_gpc_guess(name, sm_count), source=source)
    unknown = set(measured) - {f.name for f in fields(GpuSpec)}
    if unknown:
        raise TypeError(f"not GpuSpec fields: {sorted(unknown)}")
    values.update({k: v for k, v in measured.items() if v is not None})
    return GpuSpec(
        name=name,
        compute_capability=_parse_cc(compute_capability),
        sm_count=int(sm_count),
        l2_bytes=int(l2_bytes),
        memory_bytes=int(memory_bytes),
        peak_dram_gbps=float(peak_dram_gbps),
        clock_mhz=int(clock_mhz),
        detected=True,
        **{k: v for k, v in values.items() if k not in _DEVICE_ARGS},
    )


def _nearest_capability(cc: tuple[int, int]) -> str:
    """The modelled capability closest below `cc` (same major first), else the oldest one."""
    known = sorted(_parse_cc(k) for k in _data()["architectures"])
    below = [k for k in known if k <= cc]
    major, minor = below[-1] if below else known[0]
    return f"{major}.{minor}"


_DEVICE_ARGS = {"name", "compute_capability", "sm_count", "l2_bytes", "memory_bytes",
                "peak_dram_gbps", "clock_mhz", "detected"}


def _gpc_guess(name: str, sm_count: int) -> int:
    """GPC count of the matching preset if the name is known, else a typical 8."""
    spec = preset_for_device_name(name, sm_count)
    return spec.gpc_count if spec is not None and spec.sm_count == sm_count else 8

